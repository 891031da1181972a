"""Our extensions to OSWorld's API: ``/capabilities``, structured ``/input``, and the live ``/stream``."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel

from osw_studio import __version__
from osw_studio.core import actions as A
from osw_studio.guest.accessibility import unavailable_reason
from osw_studio.guest.context import GuestContext, guest
from osw_studio.guest.keysyms import is_key_name
from osw_studio.guest.processes import Recorder
from osw_studio.guest.screen import Frame, encode
from osw_studio.guest.xtest import ActionFailed

router = APIRouter(tags=["extensions"])

BOUNDARY = "frame"


class InputRequest(BaseModel):
    """Core actions to execute in order (``osw_studio.core.actions.dump_actions`` gives this shape)."""

    actions: list[A.Action]


class InputResult(BaseModel):
    """All actions ran."""

    status: str = "success"
    executed: int


def unknown_keys(actions: list[A.Action]) -> list[dict[str, Any]]:
    """Validation errors (FastAPI's 422 shape) for key names pyautogui does not know.

    Examples:
        >>> unknown_keys([A.Press(key="enter"), A.Hotkey(keys=["ctrl", "hyper"])])[0]["loc"]
        ['body', 'actions', 1, 'keys', 1]
    """
    errors = []
    for index, action in enumerate(actions):
        keys: list[tuple[list[Any], str]] = []
        if isinstance(action, A.Press | A.KeyDown | A.KeyUp):
            keys = [(["key"], action.key)]
        elif isinstance(action, A.Hotkey):
            keys = [(["keys", i], key) for i, key in enumerate(action.keys)]
        for loc, key in keys:
            if not is_key_name(key):
                errors.append(
                    {
                        "loc": ["body", "actions", index, *loc],
                        "msg": f"unknown key name {key!r} (use pyautogui key names)",
                        "type": "value_error",
                    }
                )
    return errors


MAX_SCROLL_CLICKS = 10_000
"""The most wheel clicks one scroll may ask for (pyautogui counts clicks, so 10 000 is far beyond use)."""

MAX_WAIT_S = 600.0
"""The longest ``wait`` the guest performs; the runner waits on the host anyway."""

_X_COORD = range(-32768, 32768)
"""What X's 16-bit coordinates can hold."""


def unbounded(actions: list[A.Action]) -> list[dict[str, Any]]:
    """Validation errors (FastAPI's 422 shape) for actions the guest cannot perform in bounded time.

    A scroll of a billion clicks, or a wait of a day, would hold the input lock for that long and
    make the guest deaf to every later action; a coordinate outside X's 16-bit range cannot be sent.

    Examples:
        >>> [e["loc"] for e in unbounded([A.Scroll(dy=-5), A.Scroll(dy=10**9), A.Click(x=70000, y=1)])]
        [['body', 'actions', 1, 'dy'], ['body', 'actions', 2, 'x']]
    """
    errors = []
    for index, action in enumerate(actions):
        problems: list[tuple[str, str]] = []
        if isinstance(action, A.Scroll):
            problems += [
                (name, f"at most {MAX_SCROLL_CLICKS} wheel clicks")
                for name, value in (("dx", action.dx), ("dy", action.dy))
                if abs(value) > MAX_SCROLL_CLICKS
            ]
        if isinstance(action, A.Wait) and not 0 <= action.seconds <= MAX_WAIT_S:  # NaN fails too
            problems.append(("seconds", f"a number of seconds from 0 to {MAX_WAIT_S:g}"))
        for name in ("x", "y", "start_x", "start_y"):
            value = getattr(action, name, None)
            if isinstance(value, int) and value not in _X_COORD:
                problems.append((name, "outside the range X coordinates can hold"))
        errors += [
            {"loc": ["body", "actions", index, name], "msg": msg, "type": "value_error"}
            for name, msg in problems
        ]
    return errors


@router.get("/capabilities", summary="What this guest server can do beyond OSWorld's API")
def capabilities(request: Request) -> dict[str, Any]:
    """Present on OSW Studio guests only; OSWorld guests answer 404 and the host falls back."""
    context = guest(request)
    width, height = context.screen.size
    return {
        "server": "osw-studio",
        "version": __version__,
        "input": True,
        "stream": True,
        "screenshot_formats": ["png", "jpeg"],
        "unicode_typing": True,
        "accessibility": unavailable_reason() is None,
        "recording": Recorder.available(),
        "display": context.display,
        "screen": [width, height],
    }


@router.post(
    "/input",
    summary="Execute core actions through XTest",
    response_model=InputResult,
    responses={500: {"description": '{"status": "error", "message": ..., "index": i}: action i failed'}},
)
async def execute_input(body: InputRequest, request: Request) -> Any:
    """Run the actions in order, in-process; 422 for invalid actions, 500 with the failing index.

    Invalid also means unknown key names and actions that cannot run in bounded time (see
    :func:`unbounded`); nothing runs then.
    """
    errors = unknown_keys(body.actions) + unbounded(body.actions)
    if errors:
        raise HTTPException(status_code=422, detail=errors)
    context = guest(request)
    try:
        # Moves and clicks run right here (microseconds); anything longer, or a busy input, in a thread.
        executed = context.input.execute_now(body.actions)
        if executed is None:
            executed = await asyncio.to_thread(context.input.execute, body.actions)
    except ActionFailed as exc:
        return JSONResponse({"status": "error", "message": exc.message, "index": exc.index}, status_code=500)
    return JSONResponse({"status": "success", "executed": executed})


def _part(jpeg: bytes) -> bytes:
    head = f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: {len(jpeg)}\r\n\r\n"
    return head.encode() + jpeg + b"\r\n"


async def frames(
    context: GuestContext, fps: float, quality: int, max_width: int | None
) -> AsyncIterator[bytes]:
    """MJPEG parts, one per changed screen, at most ``fps`` a second."""
    loop = asyncio.get_running_loop()
    period = 1.0 / fps
    last: Frame | None = None

    def next_part() -> tuple[Frame, bytes | None]:
        frame = context.screen.grab(cursor=True)
        if last is not None and frame.bgra == last.bgra:
            return frame, None
        return frame, encode(frame, "jpeg", quality=quality, max_width=max_width)

    while True:
        started = loop.time()
        last, jpeg = await loop.run_in_executor(context.grab_pool, next_part)
        if jpeg is not None:
            yield _part(jpeg)
        await asyncio.sleep(max(0.0, period - (loop.time() - started)))


@router.get(
    "/stream",
    summary="Live MJPEG stream of the screen (a part per changed frame)",
    responses={200: {"content": {f"multipart/x-mixed-replace; boundary={BOUNDARY}": {}}}},
)
async def stream(
    request: Request,
    fps: float = Query(30, gt=0, le=60),
    quality: int = Query(70, ge=1, le=95),
    max_width: int | None = Query(1280, ge=16),
) -> StreamingResponse:
    """``multipart/x-mixed-replace`` JPEG parts; the token may come as ``?token=`` for viewers."""
    return StreamingResponse(
        frames(guest(request), fps, quality, max_width),
        media_type=f"multipart/x-mixed-replace; boundary={BOUNDARY}",
    )
