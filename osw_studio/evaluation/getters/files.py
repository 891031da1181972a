"""Getters that bring files to the host: ``vm_file``, ``cloud_file``, ``cache_file`` and friends.

Each returns the host path of the fetched file (OSWorld's ``cache/<task id>/<dest>``), or a list of
paths for ``multi`` specs (``gives`` picks which). A single file that does not exist raises
:class:`FileMissing`, which scores the metric 0.

``dest`` and ``cache_file``'s ``path`` are names inside the task's cache folder, and a ``cloud_file``
path that is not ``http(s)://`` is a file in the task's folder: :mod:`osw_studio.core.paths` refuses
anything else (absolute, ``~``, ``file://``, ``..`` out, a symlink out) with a :class:`TaskError`.
"""

from __future__ import annotations

import asyncio
from pathlib import Path, PurePosixPath
from typing import Any

from osw_studio.core.errors import EvaluationError, OswError
from osw_studio.core.paths import is_network_url, task_dest
from osw_studio.evaluation.registry import GetterContext, getter
from osw_studio.tasks.assets import AssetStore
from osw_studio.tasks.hostfetch import FetchPolicy, FetchRefused, open_public, read_capped


class FileMissing(Exception):
    """The file a getter should fetch does not exist; the metric scores 0."""

    def __init__(self, path: str) -> None:
        super().__init__(f"no such file: {path}")
        self.path = path
        self.role = "result"


def _pairs(spec: dict[str, Any]) -> tuple[list[str], list[str], list[int]]:
    if spec.get("multi", False):
        paths, dests = list(spec["path"]), list(spec["dest"])
    else:
        paths, dests = [spec["path"]], [spec["dest"]]
    gives = list(spec.get("gives", [0]))
    return paths, dests, gives


def _pick(paths: list[Path | None], first_missing: str | None) -> Any:
    if len(paths) == 1:
        if paths[0] is None:
            raise FileMissing(first_missing or "?")
        return str(paths[0])
    return [None if p is None else str(p) for p in paths]


def _dest(ctx: GetterContext, dest: str, key: str = "dest") -> Path:
    path = task_dest(ctx.cache_dir, str(dest), where=f"evaluator getter {key}")
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


@getter("vm_file")
async def get_vm_file(ctx: GetterContext, spec: dict[str, Any]) -> Any:
    """Copy ``path`` from the guest to ``dest`` in the cache folder; ``multi`` copies several."""
    paths, dests, gives = _pairs(spec)
    out: list[Path | None] = []
    missing: str | None = None
    for i, (src, dest) in enumerate(zip(paths, dests, strict=False)):
        data = await ctx.guest.get_file(src)
        if data is None:
            if i in gives:
                out.append(None)
                missing = missing or src
            continue
        target = _dest(ctx, dest)
        target.write_bytes(data)
        if i in gives:
            out.append(target)
    return _pick(out, missing)


async def _from_assets(ctx: GetterContext, store: AssetStore, url: str) -> bytes:
    from osw_studio.envs.setup import SetupOptions, read_asset

    try:
        return await read_asset(store, url, SetupOptions(assets=store, task_dir=ctx.task_dir))
    except OswError as exc:
        raise EvaluationError(exc.message, where=exc.where, hint=exc.hint) from None


async def _download(url: str, target: Path, policy: FetchPolicy) -> None:
    import httpx

    try:
        async with httpx.AsyncClient(timeout=60) as client, open_public(client, url, policy) as response:
            response.raise_for_status()
            content = b"".join([c async for c in read_capped(response, policy.max_bytes, url)])
    except FetchRefused as exc:
        raise EvaluationError(exc.message, where=exc.where, hint=exc.hint) from None
    except httpx.HTTPError as exc:
        raise EvaluationError(
            f"cannot download the expected file: {exc}",
            where=url,
            hint="pre-seed the asset cache: put the file in the task's cache folder under its dest name",
        ) from exc
    await asyncio.to_thread(target.write_bytes, content)


def _local_copy(ctx: GetterContext, url: str, dest: str) -> Path | None:
    from osw_studio.envs.setup import asset_candidates, local_source

    source = local_source(url, ctx.task_dir, where="evaluator getter cloud_file path")
    if source is not None:
        return source if source.is_file() else None
    for candidate in asset_candidates(ctx.cache_dir.parent, ctx.cache_dir.name, url, dest):
        if candidate.is_symlink() or (candidate.exists() and not candidate.is_file()):
            raise EvaluationError(
                "refused: the cached file is a link or not a regular file", where=str(candidate)
            )
        if candidate.is_file():
            return candidate
    return None


@getter("cloud_file")
async def get_cloud_file(ctx: GetterContext, spec: dict[str, Any]) -> Any:
    """Bring the file at URL ``path`` to ``dest``: cached, a local path, the asset cache, or the web."""
    paths, dests, gives = _pairs(spec)
    out: list[Path | None] = []
    for i, (url, dest) in enumerate(zip(paths, dests, strict=False)):
        target = _dest(ctx, dest)
        if i in gives:
            out.append(target)
        if target.exists():
            continue
        local = _local_copy(ctx, url, dest)
        if local is not None:
            target.write_bytes(local.resolve().read_bytes())
        elif ctx.assets is not None and is_network_url(url):
            target.write_bytes(await _from_assets(ctx, ctx.assets, url))
        else:
            policy = ctx.fetch_policy or (ctx.assets.policy if ctx.assets is not None else FetchPolicy())
            await _download(url, target, policy)
    return _pick(out, None)


@getter("cache_file")
async def get_cache_file(ctx: GetterContext, spec: dict[str, Any]) -> str:
    """A file a setup or postconfig step wrote into the cache folder (``stdout`` of a command)."""
    path = task_dest(ctx.cache_dir, str(spec["path"]), where="evaluator getter cache_file path")
    if not path.is_file():
        raise FileMissing(str(path))
    return str(path)


@getter("vm_wallpaper")
async def get_vm_wallpaper(ctx: GetterContext, spec: dict[str, Any]) -> str:
    """The guest's desktop wallpaper image, saved as ``dest``."""
    data = await ctx.guest.wallpaper()
    if data is None:
        raise FileMissing("the desktop wallpaper")
    target = _dest(ctx, spec["dest"])
    target.write_bytes(data)
    return str(target)


@getter("content_from_vm_file")
async def get_content_from_vm_file(ctx: GetterContext, spec: dict[str, Any]) -> Any:
    """A piece of a guest file's content; OSWorld defines ``xlsx`` with ``last_row`` only."""
    path = spec["path"]
    local = await get_vm_file(ctx, {"path": path, "dest": PurePosixPath(path).name})
    file_type, content = spec.get("file_type"), spec.get("file_content")
    if file_type == "xlsx" and content == "last_row":
        import pandas as pd

        frame = pd.read_excel(local)
        return [str(v) for v in frame.iloc[-1].astype(str).tolist()]
    raise EvaluationError(
        f"content_from_vm_file does not define file_type={file_type!r} file_content={content!r}",
        hint="OSWorld defines only file_type 'xlsx' with file_content 'last_row'",
    )
