"""HTTP answers read against a cap while they arrive: on the wire and decoded, gzip, deflate and br included.

:func:`bound_responses` adds a response hook to an ``httpx.AsyncClient`` (any transport, proxies
included). The hook runs once the headers are in, before the body is read: it refuses a declared length
over the cap at once, and replaces the body with one that counts the bytes received and the bytes
decoded, decoding itself a bounded piece at a time, so a 2 MB gzip bomb never becomes gigabytes in
memory. It takes the ``Content-Encoding`` off the response, so httpx does not decode a second time.

A request may carry its own cap in ``extensions={"osw_max_bytes": n}``. Going over it raises
:class:`ResponseTooLarge` from the read (``send``, ``aread`` or the iteration of a stream); a damaged or
unknown encoding raises the client's own ``DecodingError``. The hook serves httpx and the httpx fork the
openai SDK is built on alike (each response is bounded with its own package's classes).
"""

from __future__ import annotations

import functools
import importlib
import zlib
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from typing import Any, Protocol

from osw_studio.core.limits import DECODE_CHUNK, LimitExceeded, human_size

MAX_BYTES_EXTENSION = "osw_max_bytes"
"""The request extension naming that request's cap in bytes."""


class ResponseTooLarge(LimitExceeded):
    """An answer went over its cap (on the wire or decoded)."""


class _Damaged(Exception):
    """A body that cannot be decoded (raised as the client's ``DecodingError``)."""


class _Decoder(Protocol):
    def feed(self, data: bytes) -> Iterator[bytes]: ...

    def flush(self) -> Iterator[bytes]: ...


class _Identity:
    def feed(self, data: bytes) -> Iterator[bytes]:
        if data:
            yield data

    def flush(self) -> Iterator[bytes]:
        return iter(())


class _Zlib:
    """gzip and deflate (zlib-wrapped, or raw as some servers send it), at most a chunk per output."""

    def __init__(self, gzip: bool) -> None:
        self._gzip = gzip
        self._started = False
        self._obj = zlib.decompressobj(zlib.MAX_WBITS | 16 if gzip else zlib.MAX_WBITS)

    def feed(self, data: bytes) -> Iterator[bytes]:
        if not self._started and not self._gzip and data:
            self._started = True
            try:  # deflate bodies come zlib-wrapped or raw; the first bytes tell which
                zlib.decompressobj().decompress(data[:2])
            except zlib.error:
                self._obj = zlib.decompressobj(-zlib.MAX_WBITS)
        self._started = True
        pending = data
        while pending:
            try:
                out = self._obj.decompress(pending, DECODE_CHUNK)
            except zlib.error as exc:
                raise _Damaged(f"the answer's compressed body is damaged: {exc}") from None
            pending = self._obj.unconsumed_tail
            if out:
                yield out
            if self._obj.eof:
                return

    def flush(self) -> Iterator[bytes]:
        out = self._obj.flush(DECODE_CHUNK)
        if out:
            yield out


class _Brotli:
    """br, when the ``brotli`` package can cap its output (``output_buffer_limit``, brotli 1.2)."""

    def __init__(self) -> None:
        import brotli

        self._obj: Any = brotli.Decompressor()

    def feed(self, data: bytes) -> Iterator[bytes]:
        pending = data
        while True:
            try:
                out = self._obj.process(pending, output_buffer_limit=DECODE_CHUNK)
            except Exception as exc:  # brotli.error is the package's only exception
                raise _Damaged(f"the answer's compressed body is damaged: {exc}") from None
            pending = b""
            if out:
                yield out
            if self._obj.can_accept_more_data():  # no output held back: this input is all decoded
                return

    def flush(self) -> Iterator[bytes]:
        return iter(())


def brotli_bounded() -> bool:
    """Whether br bodies can be decoded a bounded piece at a time here."""
    try:
        import brotli
    except ImportError:
        return False
    try:
        brotli.Decompressor().process(b"", output_buffer_limit=1)
    except TypeError:
        return False
    except Exception:
        return True
    return True


def _decoder(encoding: str, url: str) -> _Decoder:
    name = encoding.strip().lower()
    if name in ("", "identity"):
        return _Identity()
    if name in ("gzip", "x-gzip"):
        return _Zlib(gzip=True)
    if name == "deflate":
        return _Zlib(gzip=False)
    if name == "br" and brotli_bounded():
        return _Brotli()
    raise _Damaged(f"{url}: the answer is encoded as {encoding!r}, which is not read here")


class _Chain:
    """Decoders applied in the reverse of the order the encodings were applied."""

    def __init__(self, decoders: list[_Decoder]) -> None:
        self._decoders = decoders

    def feed(self, data: bytes) -> Iterator[bytes]:
        yield from self._through(0, data)

    def _through(self, index: int, data: bytes) -> Iterator[bytes]:
        if index == len(self._decoders):
            yield data
            return
        for out in self._decoders[index].feed(data):
            yield from self._through(index + 1, out)

    def flush(self) -> Iterator[bytes]:
        for index, decoder in enumerate(self._decoders):
            for out in decoder.flush():
                yield from self._through(index + 1, out)


class _BoundedBody:
    """The body of a response read against a cap (mixed into the client package's ``AsyncByteStream``)."""

    _package: Any

    def __init__(self, inner: Any, decoder: _Decoder, limit: int, what: str) -> None:
        self._inner = inner
        self._decoder = decoder
        self._limit = limit
        self._what = what

    def _over(self, kind: str) -> ResponseTooLarge:
        return ResponseTooLarge(f"{self._what} is over the {human_size(self._limit)} cap ({kind})")

    async def __aiter__(self) -> AsyncIterator[bytes]:
        try:
            async for out in self._read():
                yield out
        except _Damaged as exc:
            raise self._package.DecodingError(str(exc)) from None

    async def _read(self) -> AsyncIterator[bytes]:
        received = decoded = 0
        async for raw in self._inner:
            received += len(raw)
            if received > self._limit:
                raise self._over("bytes received")
            for out in self._decoder.feed(raw):
                decoded += len(out)
                if decoded > self._limit:
                    raise self._over("decoded size")
                yield out
        for out in self._decoder.flush():
            decoded += len(out)
            if decoded > self._limit:
                raise self._over("decoded size")
            yield out

    async def aclose(self) -> None:
        await self._inner.aclose()


@functools.cache
def _stream_class(package: str) -> Any:
    """The bounded body class for responses of ``package`` (``httpx``, or the openai SDK's fork)."""
    module = importlib.import_module(package)
    return type("BoundedStream", (_BoundedBody, module.AsyncByteStream), {"_package": module})


ResponseHook = Callable[[Any], Awaitable[None]]


def response_cap(limit: int, what: str) -> ResponseHook:
    """A response hook capping every answer at ``limit`` bytes (or its request's ``osw_max_bytes``).

    ``what`` names the answers in errors ("the guest's answer", "the model endpoint's answer").
    """

    async def hook(response: Any) -> None:
        cap = int(response.request.extensions.get(MAX_BYTES_EXTENSION, limit))
        url = str(response.request.url)
        label = what
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > cap:
            await response.aclose()
            raise ResponseTooLarge(
                f"{label} declares {human_size(int(declared))}, over the {human_size(cap)} cap"
            )
        package = type(response).__module__.split(".")[0]
        encodings = [e for e in response.headers.get("content-encoding", "").split(",") if e.strip()]
        try:
            decoders = [_decoder(e, url) for e in reversed(encodings)]
        except _Damaged as exc:
            await response.aclose()
            raise importlib.import_module(package).DecodingError(str(exc)) from None
        response.stream = _stream_class(package)(response.stream, _Chain(decoders), cap, label)
        if "content-encoding" in response.headers:
            del response.headers["content-encoding"]

    return hook


def bound_responses(client: Any, limit: int, what: str) -> Any:
    """``client`` itself, its answers capped by :func:`response_cap` (the hook runs before any other)."""
    client.event_hooks = {
        **client.event_hooks,
        "response": [response_cap(limit, what), *client.event_hooks.get("response", [])],
    }
    return client


def accept_encoding() -> str:
    """The ``Accept-Encoding`` to send: only what :func:`response_cap` decodes in bounded pieces."""
    return "gzip, deflate, br" if brotli_bounded() else "gzip, deflate"
