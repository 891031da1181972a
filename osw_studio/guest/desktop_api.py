"""OSWorld's desktop routes: screenshot, accessibility tree, windows, wallpaper, recording, screen facts."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Literal

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from pydantic import BaseModel

from osw_studio.guest.accessibility import AccessibilityUnavailable, accessibility_tree, terminal_text
from osw_studio.guest.context import guest
from osw_studio.guest.processes import Recorder
from osw_studio.guest.screen import encode

router = APIRouter(tags=["osworld: desktop"])

_IMAGE_RESPONSES: dict[int | str, dict[str, object]] = {
    200: {"content": {"image/png": {}, "image/jpeg": {}}, "description": "the screen"}
}


class WindowRequest(BaseModel):
    """A window by title (or by ``WM_CLASS`` with ``by_class``); ``strict`` matches the whole title."""

    window_name: str = ""
    strict: bool = False
    by_class: bool = False


class WallpaperRequest(BaseModel):
    """An image file in the guest."""

    path: str = ""


@router.get("/screenshot", summary="The screen as PNG (default) or JPEG, mouse cursor drawn in")
async def screenshot(
    request: Request,
    fmt: Literal["png", "jpeg"] = Query("png", alias="format"),
    quality: int = Query(80, ge=1, le=95, description="JPEG quality"),
    max_width: int | None = Query(None, ge=16, description="scale down to this width, keeping the aspect"),
    cursor: bool = Query(True, description="draw the mouse cursor"),
) -> Response:
    """One frame, grabbed once and encoded once (not again while the screen stays the same)."""
    context = guest(request)

    def shoot() -> bytes:
        frame = context.screen.grab(cursor=cursor)
        key = (fmt, quality, max_width)
        return context.encoded.encode(
            frame, key, lambda f: encode(f, fmt, quality=quality, max_width=max_width)
        )

    data = await asyncio.get_running_loop().run_in_executor(context.grab_pool, shoot)
    return Response(data, media_type=f"image/{fmt}")


@router.get("/accessibility", summary="The accessibility tree as OSWorld's XML: {AT: xml}")
def accessibility() -> JSONResponse:
    """AT-SPI tree with a ``desktop-frame`` root; 501 with the reason when AT-SPI is unavailable."""
    try:
        return JSONResponse({"AT": accessibility_tree()})
    except AccessibilityUnavailable as exc:
        return JSONResponse({"detail": str(exc)}, status_code=501)


_TERMINAL_WORDS = ("term", "console", "konsole", "kgx", "guake", "tilix", "sakura")
"""Words in the ``WM_CLASS`` of terminal emulators (gnome-terminal-server, xfce4-terminal, ...)."""

_NO_ATSPI_TERMINALS = frozenset({"xterm", "uxterm", "rxvt", "urxvt", "st-256color", "alacritty", "kitty"})
"""Terminals that expose no AT-SPI tree: ``/terminal`` cannot read them, so it does not try."""


@router.get("/terminal", summary="The text of the focused terminal, if AT-SPI shows one")
def terminal(request: Request) -> JSONResponse:
    """``{"output": text or null}``; null when no terminal is known (also without AT-SPI).

    As OSWorld's server, it first looks whether a terminal window is active (here from the window
    manager's active window, a millisecond) and walks AT-SPI only then.
    """
    active = guest(request).windows.active_class()
    if active is not None and (
        not any(word in active for word in _TERMINAL_WORDS) or set(active.split()) & _NO_ATSPI_TERMINALS
    ):
        return JSONResponse({"output": None, "status": "success"})
    try:
        output = terminal_text()
    except AccessibilityUnavailable:
        output = None
    return JSONResponse({"output": output, "status": "success"})


@router.post("/screen_size", summary="The screen size in pixels")
def screen_size(request: Request) -> JSONResponse:
    """``{"width", "height"}``."""
    width, height = guest(request).screen.size
    return JSONResponse({"width": width, "height": height})


@router.post("/window_size", summary="The size of the first window of an app class (form app_class_name)")
def window_size(request: Request, app_class_name: str | None = Form(default=None)) -> JSONResponse:
    """``{"width", "height"}``; 404 if no window has that ``WM_CLASS``."""
    if not app_class_name:
        return JSONResponse({"error": "app_class_name is required"}, status_code=400)
    windows = guest(request).windows
    found = windows.find(app_class_name, by_class=True)
    if not found:
        return JSONResponse({"error": f"no window of class {app_class_name!r}"}, status_code=404)
    width, height = windows.size(found[0])
    return JSONResponse({"width": width, "height": height})


@router.get("/cursor_position", summary="The pointer position [x, y]")
def cursor_position(request: Request) -> JSONResponse:
    """``[x, y]`` in screen pixels."""
    return JSONResponse(list(guest(request).input.pointer()))


@router.get("/platform", summary="The guest's OS: Linux", response_class=PlainTextResponse)
def platform() -> str:
    """``Linux`` as plain text, like OSWorld's server on Linux."""
    return "Linux"


WINDOW_HEADER = "x-osw-window"
"""Our extension to the window routes: ``found`` or ``not-found`` (OSWorld answers 200 either way)."""


@router.post("/setup/activate_window", summary="Raise and focus a window")
def activate_window(body: WindowRequest, request: Request) -> PlainTextResponse:
    """Activate the first matching window; 200 also when none matches (as OSWorld's ``wmctrl``).

    The ``x-osw-window`` header says whether a window matched.
    """
    return _on_window(body, request, close=False)


@router.post("/setup/close_window", summary="Close a window")
def close_window(body: WindowRequest, request: Request) -> PlainTextResponse:
    """Ask the first matching window to close; 200 also when none matches (``x-osw-window`` tells)."""
    return _on_window(body, request, close=True)


def _on_window(body: WindowRequest, request: Request, *, close: bool) -> PlainTextResponse:
    if not body.window_name:
        return PlainTextResponse("window_name required", status_code=400)
    windows = guest(request).windows
    found = windows.find(body.window_name, strict=body.strict, by_class=body.by_class)
    if found and close:
        windows.close(found[0])
    elif found:
        windows.activate(found[0])
    text = "Window closed successfully." if close else "Window activated successfully"
    return PlainTextResponse(text, headers={WINDOW_HEADER: "found" if found else "not-found"})


@router.post("/setup/change_wallpaper", summary="Set the desktop wallpaper to an image file")
def change_wallpaper(body: WallpaperRequest, request: Request) -> PlainTextResponse:
    """Show the image; 404 if the file is missing."""
    if not body.path:
        return PlainTextResponse("Path not supplied!", status_code=400)
    path = Path(os.path.expandvars(body.path)).expanduser()
    if not path.is_file():
        return PlainTextResponse(f"File not found: {path}", status_code=404)
    try:
        guest(request).wallpaper.set(path)
    except OSError as exc:
        return PlainTextResponse(f"Failed to change wallpaper. Error: {exc}", status_code=500)
    return PlainTextResponse("Wallpaper changed successfully")


@router.post("/wallpaper", summary="The wallpaper image file", responses=_IMAGE_RESPONSES)
def wallpaper(request: Request) -> Response:
    """The image GNOME's setting names, else the one last set here; 404 if there is none."""
    path = guest(request).wallpaper.current()
    if path is None:
        return PlainTextResponse("Wallpaper file not found", status_code=404)
    return FileResponse(path, media_type="image/png")


@router.post("/start_recording", summary="Start recording the screen (ffmpeg x11grab)")
def start_recording(request: Request) -> JSONResponse:
    """``{status, message}``; 501 without ffmpeg, 400 if a recording runs."""
    if not Recorder.available():
        return JSONResponse({"detail": "screen recording needs ffmpeg in the guest"}, status_code=501)
    try:
        guest(request).recorder.start()
    except RuntimeError as exc:
        return JSONResponse({"status": "error", "message": str(exc)}, status_code=400)
    return JSONResponse({"status": "success", "message": "Started recording successfully."})


@router.post("/end_recording", summary="Stop recording; the MP4 file")
def end_recording(request: Request) -> Response:
    """The MP4 bytes; 400 if no recording runs, 501 without ffmpeg."""
    if not Recorder.available():
        return JSONResponse({"detail": "screen recording needs ffmpeg in the guest"}, status_code=501)
    try:
        path = guest(request).recorder.stop()
    except RuntimeError as exc:
        return JSONResponse({"status": "error", "message": str(exc)}, status_code=400)
    return FileResponse(path, media_type="video/mp4", filename="recording.mp4")
