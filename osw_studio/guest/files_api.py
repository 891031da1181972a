"""OSWorld's file routes: ``/file``, ``/setup/upload``, ``/list_directory``, downloads and opening files."""

from __future__ import annotations

import os
import shutil
import stat
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
from fastapi import APIRouter, Form, Request, UploadFile
from fastapi.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from pydantic import BaseModel
from starlette.concurrency import run_in_threadpool

from osw_studio.guest.commands_api import Duration
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
    timeout_seconds: Duration = 60


def _expand(path: str) -> Path:
    return Path(os.path.expandvars(path)).expanduser()


MAX_TREE_DEPTH = 200
"""Folders deeper than this below the listed one are listed without their contents (``truncated``)."""

MAX_TREE_ENTRIES = 200_000
"""The most entries one ``/list_directory`` answer holds; the rest are left out (``truncated``)."""

SENDFILE_FROM = 64 << 10
"""Regular files larger than this go out by ``sendfile`` (:mod:`osw_studio.guest.sendfile`); smaller ones
are read whole (no cheaper, and right when a file holds other than the size it reports)."""

STREAM_CHUNK = 1 << 20
"""Where the server cannot ``sendfile``, files go out in parts this big."""

_PSEUDO_FILESYSTEMS = ("/proc/", "/sys/", "/dev/")
"""Files there may hold other than the size they report: always read, never sent by ``sendfile``."""

MAX_SIZELESS_FILE = 64 << 20
"""The most bytes read from a file that reports no size (procfs, sysfs)."""


def directory_tree(path: Path) -> dict[str, Any]:
    """OSWorld's directory tree: ``{type, name, children}``, in the order the folder lists its entries.

    As on OSWorld's server, a symlink to a folder is listed as a folder (its contents included) and a
    folder that cannot be read becomes ``{"error": message}``. Unlike it, a tree of any depth does not
    crash: a folder met again through a symlink (a cycle) or deeper than :data:`MAX_TREE_DEPTH` is
    listed with no children and ``truncated`` saying why, and at most :data:`MAX_TREE_ENTRIES` entries
    are listed.

    Examples:
        >>> import tempfile
        >>> with tempfile.TemporaryDirectory() as top:
        ...     (Path(top) / "a.txt").write_text("x")
        ...     tree = directory_tree(Path(top))
        1
        >>> tree["children"]
        [{'type': 'file', 'name': 'a.txt'}]
    """
    root: dict[str, Any] = {"type": "directory", "name": path.name, "children": []}
    entries = 0
    # (folder, its node, its depth, the (device, inode) of the folders from the top down to it)
    pending: list[tuple[Path, dict[str, Any], int, frozenset[tuple[int, int]]]] = []
    try:
        top = path.stat()
        pending.append((path, root, 0, frozenset({(top.st_dev, top.st_ino)})))
    except OSError as exc:
        return {"error": str(exc)}
    while pending:
        folder, node, depth, seen = pending.pop()
        try:
            names = os.listdir(folder)  # noqa: PTH208 - names in the folder's order, as OSWorld lists them
        except OSError as exc:
            node.clear()
            node["error"] = str(exc)
            continue
        children: list[dict[str, Any]] = node["children"]
        later = []
        for name in names:
            if entries >= MAX_TREE_ENTRIES:
                root["truncated"] = f"more than {MAX_TREE_ENTRIES} entries"
                break
            entries += 1
            full = folder / name
            try:
                info = full.stat()  # follows symlinks, as os.path.isdir does
                is_dir = stat.S_ISDIR(info.st_mode)
            except OSError:
                is_dir = False
            if not is_dir:
                children.append({"type": "file", "name": name})
                continue
            child: dict[str, Any] = {"type": "directory", "name": name, "children": []}
            children.append(child)
            key = (info.st_dev, info.st_ino)
            if key in seen:
                child["truncated"] = "a symlink back to a folder above it"
            elif depth + 1 > MAX_TREE_DEPTH:
                child["truncated"] = f"deeper than {MAX_TREE_DEPTH} levels"
            else:
                later.append((full, child, depth + 1, seen | {key}))
        pending.extend(reversed(later))
    return root


def _attachment(name: str) -> str:
    """A ``Content-Disposition`` for a download named ``name`` (RFC 6266, non-ASCII names too)."""
    if name.isascii() and name.isprintable() and '"' not in name and "\\" not in name:
        return f'attachment; filename="{name}"'
    return f"attachment; filename*=utf-8''{quote(name)}"


def _read(path: Path, most: int) -> bytes:
    with path.open("rb") as handle:
        return handle.read(most)


@router.post("/file", summary="Download a file from the guest (form field file_path)")
async def get_file(file_path: str | None = Form(default=None)) -> Response:
    """The file's bytes; 404 ``{"error": "File not found"}`` if it does not exist.

    Answered on the event loop (a thread hop costs more than a stat and a small read), except files of
    pseudo-filesystems, read in a worker thread (reading some of them waits on devices).

    Regular files larger than :data:`SENDFILE_FROM` go out by ``sendfile``. Others, and files of
    ``/proc``, ``/sys`` and ``/dev`` (which may hold other than the size they report), are read, up to
    :data:`MAX_SIZELESS_FILE` bytes; a folder, FIFO, device or socket is 400 with what it is (reading a
    FIFO or ``/dev/zero`` would never end).
    """
    if not file_path:
        return JSONResponse({"error": "file_path is required"}, status_code=400)
    if "\0" in file_path:
        return JSONResponse({"error": "file_path holds a NUL byte"}, status_code=400)
    path = _expand(file_path)
    try:
        info = path.stat()
    except FileNotFoundError:
        return JSONResponse({"error": "File not found"}, status_code=404)
    except OSError as exc:
        return JSONResponse({"error": f"Failed to serve file: {exc}"}, status_code=500)
    if not stat.S_ISREG(info.st_mode):
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else "not a regular file (a FIFO, device or socket)"
        return JSONResponse({"error": f"Failed to serve file: {file_path} is {kind}"}, status_code=400)
    headers = {"content-disposition": _attachment(path.name)}
    pseudo = str(path.resolve()).startswith(_PSEUDO_FILESYSTEMS)
    if info.st_size > SENDFILE_FROM and not pseudo:
        response = FileResponse(
            path, media_type="application/octet-stream", headers=headers, stat_result=info
        )
        response.chunk_size = STREAM_CHUNK
        return response
    reported = info.st_size if 0 < info.st_size <= MAX_SIZELESS_FILE else None
    most = MAX_SIZELESS_FILE + 1 if reported is None else reported + (1 << 16)
    try:
        data = await run_in_threadpool(_read, path, most) if pseudo else _read(path, most)
    except OSError as exc:
        return JSONResponse({"error": f"Failed to serve file: {exc}"}, status_code=500)
    if len(data) > MAX_SIZELESS_FILE:
        too_big = f"Failed to serve file: it holds more than the {MAX_SIZELESS_FILE} bytes read at most"
        return JSONResponse({"error": too_big}, status_code=413)
    return Response(data, media_type="application/octet-stream", headers=headers)


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
