"""OSWorld's file routes: ``/file``, ``/setup/upload``, ``/list_directory``, downloads and opening files."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

import httpx
from fastapi import APIRouter, Form, Request, UploadFile
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from pydantic import BaseModel

from osw_studio.guest.context import guest

router = APIRouter(tags=["osworld: files"])


class PathRequest(BaseModel):
    """A path in the guest."""

    path: str = ""


class DownloadRequest(BaseModel):
    """A URL the guest downloads to ``path``."""

    url: str = ""
    path: str = ""


class OpenFileRequest(BaseModel):
    """A file (opened with its default app) or an app name, and the window to wait for."""

    path: str = ""
    window_name: str | None = None
    timeout_seconds: float = 60


def _expand(path: str) -> Path:
    return Path(os.path.expandvars(path)).expanduser()


def directory_tree(path: Path) -> dict[str, Any]:
    """OSWorld's directory tree: ``{type, name, children}``, recursively.

    Examples:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as top:
        ...     (Path(top) / "a.txt").write_text("x")
        ...     tree = directory_tree(Path(top))
        1
        >>> tree["children"]
        [{'type': 'file', 'name': 'a.txt'}]
    """
    tree: dict[str, Any] = {"type": "directory", "name": path.name, "children": []}
    try:
        for full in sorted(path.iterdir()):
            if full.is_dir() and not full.is_symlink():
                tree["children"].append(directory_tree(full))
            else:
                tree["children"].append({"type": "file", "name": full.name})
    except OSError as exc:
        return {"error": str(exc)}
    return tree


@router.post("/file", summary="Download a file from the guest (form field file_path)")
def get_file(file_path: str | None = Form(default=None)) -> Response:
    """The file's bytes; 404 ``{"error": "File not found"}`` if it does not exist."""
    if not file_path:
        return JSONResponse({"error": "file_path is required"}, status_code=400)
    path = _expand(file_path)
    if not path.is_file():
        return JSONResponse({"error": "File not found"}, status_code=404)
    return FileResponse(path, media_type="application/octet-stream", filename=path.name)


@router.post("/setup/upload", summary="Upload a file into the guest (multipart: file_path, file_data)")
async def upload(file_path: str | None = Form(default=None), file_data: UploadFile | None = None) -> Response:
    """Write ``file_data`` to ``file_path``, creating folders: ``File Uploaded: N bytes``."""
    if not file_path or file_data is None:
        return JSONResponse({"error": "file_path and file_data are required"}, status_code=400)
    path = _expand(file_path)
    if "\0" in file_path:
        return JSONResponse({"error": "file_path holds a NUL byte"}, status_code=400)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("wb") as out:
            while chunk := await file_data.read(1 << 20):
                out.write(chunk)
    except OSError as exc:
        if path.is_file():  # half written; never remove what stands there otherwise (a folder)
            path.unlink(missing_ok=True)
        return JSONResponse({"error": f"Failed to upload file: {exc}"}, status_code=500)
    return PlainTextResponse(f"File Uploaded: {path.stat().st_size} bytes")


@router.post("/list_directory", summary="A directory tree")
def list_directory(body: PathRequest) -> JSONResponse:
    """``{"directory_tree": {type, name, children}}``; 400 if ``path`` is not a directory."""
    if not body.path:
        return JSONResponse({"error": "Missing 'path' parameter"}, status_code=400)
    path = _expand(body.path)
    if not path.is_dir():
        return JSONResponse({"error": "The provided path is not a directory"}, status_code=400)
    return JSONResponse({"directory_tree": directory_tree(path)})


@router.post("/desktop_path", summary="The desktop folder")
def desktop_path() -> JSONResponse:
    """``{"desktop_path": ~/Desktop}``; 404 if it does not exist."""
    path = Path.home() / "Desktop"
    if not path.is_dir():
        return JSONResponse({"error": "Unsupported operating system or desktop path not found"}, 404)
    return JSONResponse({"desktop_path": str(path)})


@router.post("/setup/download_file", summary="The guest downloads a URL itself")
def download_file(body: DownloadRequest) -> PlainTextResponse:
    """Download ``url`` to ``path`` (3 tries); 500 with the last error if all fail."""
    if not body.url or not body.path:
        return PlainTextResponse("Path or URL not supplied!", status_code=400)
    path = _expand(body.path)
    path.parent.mkdir(parents=True, exist_ok=True)
    error: Exception | None = None
    for _ in range(3):
        try:
            with httpx.stream("GET", body.url, follow_redirects=True, timeout=300) as response:
                response.raise_for_status()
                with path.open("wb") as out:
                    for chunk in response.iter_bytes():
                        out.write(chunk)
            return PlainTextResponse(f"File downloaded successfully: {path.stat().st_size} bytes")
        except (httpx.HTTPError, OSError) as exc:
            error = exc
            path.unlink(missing_ok=True)
    return PlainTextResponse(f"Failed to download {body.url}. No retries left. Error: {error}", 500)


def _opener() -> list[str] | None:
    if shutil.which("xdg-open"):
        return ["xdg-open"]
    if shutil.which("gio"):
        return ["gio", "open"]
    return None


@router.post("/setup/open_file", summary="Open a file with its default app (or start an app) and wait")
def open_file(body: OpenFileRequest, request: Request) -> PlainTextResponse:
    """Open ``path`` and wait until a window whose title has its name appears, then activate it."""
    if not body.path:
        return PlainTextResponse("Path not supplied!", status_code=400)
    context = guest(request)
    path = _expand(body.path)
    if path.exists():
        opener = _opener()
        if opener is None:
            return PlainTextResponse("No opener in the guest (install xdg-utils)", status_code=501)
        command, names = [*opener, str(path)], [path.name, path.stem]
    elif shutil.which(body.path):
        command, names = [body.path], [body.path]
    else:
        return PlainTextResponse(f"Application/file not found: {body.path}", status_code=404)
    if body.window_name:
        names = [body.window_name]
    try:
        context.launcher.launch(command, False)
    except OSError as exc:
        return PlainTextResponse(f"Failed to open {body.path}. Error: {exc}", status_code=500)
    deadline = time.monotonic() + body.timeout_seconds
    while time.monotonic() < deadline:
        for name in names:
            found = context.windows.find(name)
            if found:
                context.windows.activate(found[0])
                return PlainTextResponse("File opened and window activated successfully")
        time.sleep(0.3)
    return PlainTextResponse(
        f"Failed to find window for {names} within {body.timeout_seconds:g} seconds.", status_code=500
    )
