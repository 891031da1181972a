"""Live frames from a guest for the viewer: its MJPEG ``/stream``, else VNC where given, else screenshots.

The HTTP client is async (httpx) on the Qt event loop; JPEG/PNG decoding and scaling to the viewer's
size run in a worker thread (``run_in_executor``) so the UI never stalls. Frames wait in a short queue
(:data:`MAX_PENDING`) while one is decoded, so two frames arriving together (one network read) are both
shown; only when decoding falls further behind are the oldest waiting frames dropped.

JPEGs are decoded by libjpeg-turbo (simplejpeg) straight into the ``QImage``'s pixels, at the largest
power-of-two reduction that still covers the viewer (the DCT does it, nearly free); the viewer scales the
rest when it paints. A guest on this machine is asked for full-size frames: encoding them costs the guest
~5 ms against ~25 ms to scale and encode a 1280-wide copy, and the loopback carries the bytes for free.

VNC (:mod:`osw_studio.envs.vnc`) only shows the screen; takeover input still goes through the guest API,
which records it as human steps.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import deque
from collections.abc import Callable
from urllib.parse import urlsplit

import httpx
from PySide6.QtCore import QObject, QSize, Qt, Signal
from PySide6.QtGui import QImage

from osw_studio.core import limits
from osw_studio.core.bounded_http import MAX_BYTES_EXTENSION, accept_encoding, bound_responses
from osw_studio.core.errors import OswError
from osw_studio.envs.vnc import VncClient, VncFrame, VncTarget
from osw_studio.ui.mjpeg import MjpegParser, boundary_of

try:
    import simplejpeg
except ImportError:  # pragma: no cover - a dependency; Qt's own decoder takes over without it
    simplejpeg = None

log = logging.getLogger(__name__)

MAX_PENDING = 2
"""Frames kept waiting while one is decoded; beyond this the oldest waiting one is dropped."""
FULL_WIDTH = 16384
"""``max_width`` asking the guest for frames as wide as its screen (wider than any screen)."""
REMOTE_WIDTH = 1280
"""``max_width`` asked of a guest on another machine: its frames cross a real network."""
_LOOPBACK = {"127.0.0.1", "localhost", "::1"}

SizeHint = Callable[[], QSize]
"""Returns the size frames should be scaled to fit (the viewer's canvas, in device pixels)."""


def decode_frame(data: bytes, fit: QSize | None) -> QImage:
    """Decode a JPEG or PNG to fit ``fit`` keeping its aspect (thread-safe, no widgets).

    A JPEG comes out at least as large as ``fit`` (reduced by a power of two in the decoder, never below
    ``fit``): the viewer paints it scaled the rest of the way. Other images are scaled to fit exactly.
    Returns a null image when ``data`` is not an image.
    """
    if simplejpeg is not None and data[:2] == b"\xff\xd8":
        with contextlib.suppress(ValueError):
            return _decode_jpeg(data, fit)
    image = QImage.fromData(data)
    if image.isNull() or fit is None or fit.isEmpty():
        return image
    if image.width() <= fit.width() and image.height() <= fit.height():
        return image
    return image.scaled(fit, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation)


def _decode_jpeg(data: bytes, fit: QSize | None) -> QImage:
    height, width, _, _ = simplejpeg.decode_jpeg_header(data)
    scale = 1
    if fit is not None and not fit.isEmpty():
        # libjpeg-turbo reduces by 1/2, 1/4, 1/8 fastest; other fractions of 8 cost more than no reduction
        while scale < 8 and width // (scale * 2) >= fit.width() and height // (scale * 2) >= fit.height():
            scale *= 2
    min_w, min_h = -(-width // scale), -(-height // scale)
    if scale > 1:
        height, width, _, _ = simplejpeg.decode_jpeg_header(data, min_height=min_h, min_width=min_w)
    image = QImage(width, height, QImage.Format.Format_RGB32)  # B, G, R, 0xff in memory: libjpeg's BGRX
    simplejpeg.decode_jpeg(data, colorspace="BGRX", min_height=min_h, min_width=min_w, buffer=image.bits())
    return image


def vnc_image(frame: VncFrame, fit: QSize | None) -> QImage:
    """A VNC frame as an image scaled to fit ``fit`` (thread-safe; its BGRX bytes are Qt's RGB32)."""
    image = QImage(frame.data, frame.width, frame.height, frame.width * 4, QImage.Format.Format_RGB32)
    if fit is None or fit.isEmpty() or (frame.width <= fit.width() and frame.height <= fit.height()):
        return image.copy()  # the image must not outlive the bytes it points into
    return image.scaled(fit, Qt.AspectRatioMode.KeepAspectRatio, Qt.TransformationMode.SmoothTransformation)


class FpsMeter:
    """Frames per second over a sliding window.

    Examples:
        >>> m = FpsMeter(window=1.0)
        >>> for t in (0.0, 0.1, 0.2, 0.3): m.tick(t)
        >>> round(m.fps(0.3), 1)
        10.0
        >>> m.fps(5.0)
        0.0
    """

    def __init__(self, window: float = 1.0) -> None:
        self.window = window
        self._times: deque[float] = deque()

    def tick(self, now: float | None = None) -> None:
        """Count one frame shown at ``now`` (default: the monotonic clock)."""
        self._times.append(time.monotonic() if now is None else now)

    def fps(self, now: float | None = None) -> float:
        """Frames per second over the last window ending at ``now``."""
        now = time.monotonic() if now is None else now
        while self._times and self._times[0] < now - self.window:
            self._times.popleft()
        if len(self._times) < 2:
            return 0.0
        span = self._times[-1] - self._times[0]
        return (len(self._times) - 1) / span if span > 0 else 0.0


class FrameStream(QObject):
    """Frames of one guest, as Qt images scaled for the viewer.

    Args:
        base_url: The guest server's URL (``http://127.0.0.1:5000``).
        token: Its token, or None for a guest without auth (OSWorld's).
        fit: Where frames are scaled to fit.
        fps: Highest frame rate asked of the stream.
        max_width: Width the guest downscales frames to before encoding; by default the full width for
            a guest on this machine (loopback), :data:`REMOTE_WIDTH` for one elsewhere.
        poll_interval: Seconds between screenshots when the guest has no stream.
        vnc: The guest's VNC server: frames of a guest without a stream come from it instead of
            screenshots (and from screenshots again if it fails, with the reason in the status).

    Signals:
        frame_ready(QImage): A decoded frame, already scaled.
        status_changed(str): ``connecting``, ``streaming``, ``vnc HOST:PORT``, ``polling`` or an error.
    """

    frame_ready = Signal(QImage)
    status_changed = Signal(str)

    def __init__(
        self,
        base_url: str,
        token: str | None,
        *,
        fit: SizeHint | None = None,
        fps: int = 30,
        quality: int = 70,
        max_width: int | None = None,
        poll_interval: float = 0.5,
        vnc: VncTarget | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.base_url = base_url.rstrip("/")
        self._headers = {"Authorization": f"Bearer {token}"} if token else {}
        self._fit = fit
        if max_width is None:
            local = (urlsplit(self.base_url).hostname or "") in _LOOPBACK
            max_width = FULL_WIDTH if local else REMOTE_WIDTH
        self._params: dict[str, int] = {"fps": fps, "quality": quality, "max_width": max_width}
        self._poll_interval = poll_interval
        self.vnc = vnc
        self._task: asyncio.Task[None] | None = None
        self._pending: deque[tuple[int, bytes | VncFrame]] = deque()
        self._wake = asyncio.Event()
        self.received = 0
        """Frames received from the wire (decoded or dropped); also the number of the last one."""
        self.decoded = 0
        """Frames decoded and handed to the viewer."""
        self.dropped = 0
        """Frames dropped undecoded because decoding fell more than :data:`MAX_PENDING` behind."""
        self.frame_number = 0
        """The number (in order of arrival, from 1) of the frame ``frame_ready`` carries."""

    def start(self) -> None:
        """Connect and keep frames coming until :meth:`stop` (reconnecting after errors)."""
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._run())

    async def stop(self) -> None:
        """Disconnect and wait until the stream is closed."""
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    @property
    def running(self) -> bool:
        """Whether the stream is connected or trying to connect."""
        return self._task is not None and not self._task.done()

    async def _run(self) -> None:
        decoder = asyncio.ensure_future(self._decode_loop())
        try:
            # A screenshot is read against the guest screenshot cap as it arrives, decoded size included;
            # the endless stream has no total cap, but is decoded a bounded piece at a time.
            headers = {**self._headers, "Accept-Encoding": accept_encoding()}
            http = httpx.AsyncClient(headers=headers, timeout=httpx.Timeout(10, read=30))
            async with bound_responses(http, limits.GUEST_SCREENSHOT_BYTES, "the guest's screen") as client:
                while True:
                    try:
                        if not await self._stream(client):
                            why = await self._vnc(self.vnc) if self.vnc is not None else ""
                            await self._poll(client, why)
                    except httpx.HTTPError as exc:
                        self.status_changed.emit(f"guest unreachable ({type(exc).__name__}); retrying")
                        log.info("frame stream from %s failed: %s", self.base_url, exc)
                    except limits.LimitExceeded as exc:
                        self.status_changed.emit(f"{exc}; retrying")
                        log.info("frame stream from %s: %s", self.base_url, exc)
                    await asyncio.sleep(1.0)
        finally:
            decoder.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await decoder

    async def _stream(self, client: httpx.AsyncClient) -> bool:
        """Read the MJPEG stream; False when the guest has none (an OSWorld guest)."""
        self.status_changed.emit("connecting")
        endless = {MAX_BYTES_EXTENSION: 1 << 62}
        url = f"{self.base_url}/stream"
        async with client.stream("GET", url, params=self._params, extensions=endless) as response:
            if response.status_code in (404, 405, 501):
                return False
            if response.status_code == 401:
                self.status_changed.emit("the guest refused the token; check the env's token")
                await asyncio.sleep(5)
                return True
            response.raise_for_status()
            parser = MjpegParser(boundary_of(response.headers.get("content-type", "")))
            self.status_changed.emit("streaming")
            async for chunk in response.aiter_bytes():
                for frame in parser.feed(chunk):
                    self._offer(frame)
        return True

    async def _poll(self, client: httpx.AsyncClient, why: str = "") -> None:
        """Poll ``/screenshot`` (JPEG where the guest knows the option; OSWorld's sends PNG)."""
        self.status_changed.emit(f"polling ({why})" if why else "polling")
        params: dict[str, str | int] = {
            "format": "jpeg",
            "quality": self._params["quality"],
            "max_width": self._params["max_width"],
        }
        while True:
            response = await client.get(f"{self.base_url}/screenshot", params=params)
            response.raise_for_status()
            self._offer(response.content)
            await asyncio.sleep(self._poll_interval)

    async def _vnc(self, target: VncTarget) -> str:
        """Show frames of the guest's VNC server until it fails; return why (polling takes over)."""
        self.status_changed.emit(f"connecting to vnc {target}")
        try:
            async with await VncClient.open(target) as client:
                self.status_changed.emit(f"vnc {target}")
                async for frame in client.frames(fps=self._params["fps"]):
                    self._offer(frame)
        except OswError as exc:
            log.info("VNC of %s failed: %s", self.base_url, exc)
            return f"VNC failed: {exc}"
        return "the VNC server ended the connection"

    def _offer(self, frame: bytes | VncFrame) -> None:
        self.received += 1
        self._pending.append((self.received, frame))
        while len(self._pending) > MAX_PENDING:
            self._pending.popleft()
            self.dropped += 1
        self._wake.set()

    async def _decode_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._pending:
                number, data = self._pending.popleft()
                fit = self._fit() if self._fit else None
                if isinstance(data, VncFrame):
                    image = await loop.run_in_executor(None, vnc_image, data, fit)
                else:
                    image = await loop.run_in_executor(None, decode_frame, data, fit)
                    if image.isNull():
                        log.debug("dropped a frame that is not an image (%d bytes)", len(data))
                        continue
                self.decoded += 1
                self.frame_number = number
                self.frame_ready.emit(image)
