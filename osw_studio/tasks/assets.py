"""The asset cache: the files OSWorld's tasks download, fetched once and read offline afterwards.

Tasks name their files by URL: ``download`` setup steps (``config`` and ``postconfig``) and
``cloud_file`` getters. :func:`suite_assets` lists the URLs of a suite; :class:`AssetStore` keeps one
file per URL under ``<root>/objects/<first two hex>/<sha256 of the URL>`` with a JSON sidecar
(``.json``: URL, size, SHA-256, when and from where it was fetched). Files are fetched to ``.part``
first and resumed with an HTTP ``Range`` request when a fetch was cut, checked against the server's
length, hashed, and renamed into place, so a file in the store is always whole. :meth:`AssetStore.verify`
re-hashes files against their sidecars (and against a lock of expected hashes, when given).

A mirror prefix replaces the network for people who keep OSWorld's files on a server of their own:
``https://huggingface.co/a/b.xlsx`` with mirror ``http://files.lan/osworld/`` is fetched from
``http://files.lan/osworld/huggingface.co/a/b.xlsx`` (the layout ``wget --force-directories`` writes).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import stat
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx

from osw_studio.core.errors import OswError, TaskError
from osw_studio.core.outcome import OutcomeKind
from osw_studio.core.paths import is_network_url
from osw_studio.core.task import DownloadStep, GetterSpec, Task
from osw_studio.tasks.hostfetch import FetchPolicy, FetchRefused, open_public, read_capped

_CHUNK = 1 << 20


def mirror_url(url: str, mirror: str | None) -> str:
    """Where ``url`` is fetched from: the URL itself, or its host and path under a mirror prefix.

    >>> mirror_url("https://huggingface.co/d/x/a.xlsx?download=true", "http://127.0.0.1:8000/m")
    'http://127.0.0.1:8000/m/huggingface.co/d/x/a.xlsx'
    >>> mirror_url("https://h/a.xlsx", None)
    'https://h/a.xlsx'
    """
    if not mirror:
        return url
    parts = urlsplit(url)
    return f"{mirror.rstrip('/')}/{parts.netloc}{parts.path}"


def file_name(url: str) -> str:
    """The last segment of a URL's path, decoded (the name the file is known by).

    >>> file_name("https://h/x/a%20b.xlsx?download=1")
    'a b.xlsx'
    """
    return unquote(urlsplit(url).path.rsplit("/", 1)[-1])


@dataclass
class AssetRef:
    """One URL a suite needs and the tasks that need it.

    Attributes:
        url: The URL as the task files write it.
        tasks: Ids of the tasks that name it.
        names: The file names the tasks give it in the guest (``download`` paths, ``cloud_file`` dests).
    """

    url: str
    tasks: list[str] = field(default_factory=list)
    names: list[str] = field(default_factory=list)


def _getter_urls(spec: GetterSpec | None) -> Iterable[tuple[str, str]]:
    if spec is None or spec.type != "cloud_file":
        return
    args = spec.args
    paths, dests = args.get("path"), args.get("dest")
    if isinstance(paths, str):
        paths, dests = [paths], [dests]
    if not isinstance(paths, list):
        return
    dests = dests if isinstance(dests, list) else [None] * len(paths)
    for url, dest in zip(paths, dests, strict=False):
        if isinstance(url, str):
            yield url, dest if isinstance(dest, str) else file_name(url)


def task_urls(task: Task) -> list[tuple[str, str]]:
    """The network URLs a task downloads, each with the file name it is given, in task order."""
    found: list[tuple[str, str]] = []
    for step in [*task.config, *task.evaluator.postconfig]:
        if isinstance(step, DownloadStep):
            found += [(f.url, f.path.replace("\\", "/").rsplit("/", 1)[-1]) for f in step.parameters.files]
    for specs in (task.evaluator.expected, task.evaluator.result):
        for spec in specs if isinstance(specs, list) else [specs]:
            found += list(_getter_urls(spec))
    return [(url, name) for url, name in found if is_network_url(url)]


def suite_assets(tasks: Iterable[Task]) -> list[AssetRef]:
    """Every network URL the tasks need, once each, in the order first named."""
    refs: dict[str, AssetRef] = {}
    for task in tasks:
        for url, name in task_urls(task):
            ref = refs.setdefault(url, AssetRef(url))
            if task.id not in ref.tasks:
                ref.tasks.append(task.id)
            if name not in ref.names:
                ref.names.append(name)
    return list(refs.values())


@dataclass
class AssetMeta:
    """A stored file's sidecar.

    Attributes:
        url: The URL the tasks name.
        size: Bytes.
        sha256: The file's SHA-256, hex.
        source: Where it came from: the URL fetched (a mirror's, maybe) or ``import:<file name>``.
        fetched: When it was stored (Unix time).
    """

    url: str
    size: int
    sha256: str
    source: str
    fetched: float


class AssetMissing(TaskError):
    """A task needs a file that is not in the asset cache."""

    outcome_kind = OutcomeKind.ASSET_MISSING


class AssetStore:
    """The asset cache folder.

    Args:
        root: The folder (by default ``assets`` in the user cache dir, see :func:`default_root`).
        mirror: A mirror prefix to fetch from instead of the URLs' own hosts (its host is allowed
            whatever it resolves to: the user chose it).
        policy: Where fetches may go and how large a file may be (:mod:`osw_studio.tasks.hostfetch`).
    """

    def __init__(self, root: Path, mirror: str | None = None, policy: FetchPolicy | None = None) -> None:
        self.root = Path(root)
        self.mirror = mirror or None
        policy = policy or FetchPolicy()
        mirror_host = urlsplit(self.mirror).hostname if self.mirror else None
        if mirror_host:
            policy = FetchPolicy(policy.allowed_hosts | {mirror_host.lower()}, policy.max_bytes)
        self.policy = policy

    # --- where --------------------------------------------------------------------------------------

    def path(self, url: str) -> Path:
        """The stored file of ``url`` (it may not exist yet)."""
        key = hashlib.sha256(url.encode()).hexdigest()
        return self.root / "objects" / key[:2] / key

    def _meta_path(self, url: str) -> Path:
        return self.path(url).with_suffix(".json")

    def meta(self, url: str) -> AssetMeta | None:
        """The sidecar of ``url``, or ``None`` if the URL is not stored (or its sidecar is damaged)."""
        try:
            data = json.loads(read_regular(self._meta_path(url)).decode("utf-8"))
            meta = AssetMeta(**data)
        except (OSError, ValueError, TypeError, RecursionError):  # a damaged sidecar
            return None
        return meta if meta.url == url else None

    def get(self, url: str) -> Path | None:
        """The stored file of ``url`` if it is there whole (its size is the recorded one).

        A stored object that is a link or not a regular file is never one (a link could put any
        host file, the user's key among them, into a guest).
        """
        meta, path = self.meta(url), self.path(url)
        try:
            info = path.lstat()
        except OSError:
            return None
        whole = meta is not None and stat.S_ISREG(info.st_mode) and info.st_size == meta.size
        return path if whole else None

    def read(self, url: str, *, fetch_hint: str | None = None) -> bytes:
        """The bytes of ``url``.

        Raises:
            AssetMissing: If the URL is not stored, naming it and the command that fetches it.
        """
        path = self.get(url)
        if path is None:
            raise AssetMissing(
                "this file is not in the asset cache",
                where=url,
                hint=fetch_hint or "fetch the suite's files first: osw-studio assets fetch SUITE",
            )
        try:
            return read_regular(path)
        except OSError as exc:
            raise AssetMissing(f"the cached file cannot be read: {exc}", where=url) from None

    def entries(self) -> list[AssetMeta]:
        """Every stored file's sidecar, sorted by URL."""
        found = []
        for sidecar in sorted(self.root.glob("objects/*/*.json")):
            try:
                found.append(AssetMeta(**json.loads(sidecar.read_text(encoding="utf-8"))))
            except (OSError, ValueError, TypeError, RecursionError):  # a damaged sidecar
                continue
        return sorted(found, key=lambda m: m.url)

    # --- writing ------------------------------------------------------------------------------------

    def _store(self, url: str, part: Path, source: str) -> AssetMeta:
        digest = hashlib.sha256()
        with part.open("rb") as fh:
            for chunk in iter(lambda: fh.read(_CHUNK), b""):
                digest.update(chunk)
        meta = AssetMeta(url, part.stat().st_size, digest.hexdigest(), source, time.time())
        part.replace(self.path(url))
        sidecar = self._meta_path(url)
        tmp = sidecar.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(asdict(meta), indent=1), encoding="utf-8")
        tmp.replace(sidecar)
        return meta

    def put(self, url: str, data: bytes, source: str) -> AssetMeta:
        """Store ``data`` as the file of ``url``."""
        part = self.path(url).with_suffix(".part")
        part.parent.mkdir(parents=True, exist_ok=True)
        part.write_bytes(data)
        return self._store(url, part, source)

    async def fetch(
        self,
        url: str,
        http: httpx.AsyncClient,
        *,
        progress: Callable[[int], None] | None = None,
    ) -> AssetMeta:
        """Download ``url`` (from the mirror, if set) into the store, resuming a cut download.

        Args:
            url: The URL the tasks name.
            http: The client to fetch with.
            progress: Called with each chunk's size.

        Raises:
            OswError: If the server refuses, the connection fails, or fewer bytes arrive than announced.
        """
        source = mirror_url(url, self.mirror)
        part = self.path(url).with_suffix(".part")
        part.parent.mkdir(parents=True, exist_ok=True)
        if part.is_symlink() or (part.exists() and not part.is_file()):
            part.unlink()  # a link planted as the part file would be written through
        have = part.stat().st_size if part.exists() else 0
        headers = {"Range": f"bytes={have}-"} if have else {}
        cap = self.policy.max_bytes
        try:
            async with open_public(http, source, self.policy, headers) as response:
                if response.status_code == 416 and have:  # the part is already whole
                    return self._store(url, part, source)
                if response.status_code >= 400:
                    raise OswError(f"the server answered HTTP {response.status_code}", where=source)
                resumed = response.status_code == 206
                if progress and resumed:
                    progress(have)
                expected = response.headers.get("content-length")
                total = (have if resumed else 0) + int(expected) if expected and expected.isdigit() else None
                with part.open("ab" if resumed else "wb") as fh:
                    left = cap - (have if resumed else 0)
                    async for chunk in read_capped(response, left, source):  # a cut keeps what came
                        fh.write(chunk)
                        if progress:
                            progress(len(chunk))
        except FetchRefused:
            part.unlink(missing_ok=True)  # nothing of a refused file stays in the cache
            raise
        except httpx.HTTPError as exc:
            raise OswError(
                f"cannot download the file ({str(exc) or type(exc).__name__})",
                where=source,
                hint="run the same command again to resume",
            ) from None
        size = part.stat().st_size
        if total is not None and size != total:
            raise OswError(
                f"the download stopped at {size} of {total} bytes",
                where=source,
                hint="run the same command again to resume",
            )
        return self._store(url, part, source)

    def verify(self, url: str, expected_sha256: str | None = None) -> str | None:
        """Re-hash the file of ``url``: ``None`` when it is whole and right, else what is wrong."""
        meta, path = self.meta(url), self.path(url)
        if meta is None or not path.is_file():
            return "missing"
        digest = hashlib.sha256()
        with path.open("rb") as fh:
            for chunk in iter(lambda: fh.read(_CHUNK), b""):
                digest.update(chunk)
        size = path.stat().st_size
        if size != meta.size:
            return f"size {size}, recorded {meta.size}"
        if digest.hexdigest() != meta.sha256:
            return "SHA-256 differs from the one recorded when it was fetched"
        if expected_sha256 and meta.sha256 != expected_sha256.lower():
            return "SHA-256 differs from the lock"
        return None

    def remove(self, url: str) -> None:
        """Drop the file of ``url`` (so the next fetch downloads it again)."""
        for path in (self.path(url), self._meta_path(url), self.path(url).with_suffix(".part")):
            path.unlink(missing_ok=True)

    def import_folder(self, folder: Path, refs: Iterable[AssetRef]) -> list[tuple[AssetRef, Path]]:
        """Store files found in ``folder`` for the URLs of ``refs`` that are not stored yet.

        A file matches a URL when it sits in OSWorld's own cache layout
        (``<task id>/<uuid5 of the URL>_<name>``) or anywhere below ``folder`` under one of the names
        the tasks give the URL or the URL's own file name. Links are not followed.

        Returns:
            The URLs stored and the file each came from.
        """
        by_name: dict[str, Path] = {}
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file() and not path.is_symlink():
                by_name.setdefault(path.name, path)
        imported = []
        for ref in refs:
            if self.get(ref.url) is not None:
                continue
            names = [f"{uuid.uuid5(uuid.NAMESPACE_URL, ref.url)}_{n}" for n in ref.names]
            names += [file_name(ref.url), *ref.names]
            found = next((by_name[n] for n in names if n in by_name), None)
            if found is not None:
                self.put(ref.url, found.read_bytes(), f"import:{found.name}")
                imported.append((ref, found))
        return imported


def read_regular(path: Path) -> bytes:
    """The bytes of ``path``, which must be a regular file and not a link.

    Raises:
        OSError: ``path`` is a link (``ELOOP``), not a regular file, or cannot be read.
    """
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{path} is not a regular file")
        return fh.read()


def default_root() -> Path:
    """The user's asset cache folder (``OSW_ASSET_CACHE``, else ``assets`` in the user cache dir)."""
    configured = os.environ.get("OSW_ASSET_CACHE")
    if configured:
        return Path(configured).expanduser()
    import platformdirs

    return platformdirs.user_cache_path("osw-studio", appauthor=False) / "assets"


@dataclass
class FetchReport:
    """What :func:`fetch_all` did.

    Attributes:
        fetched: URLs downloaded now.
        present: URLs that were already stored.
        failed: URLs that could not be fetched, each with why.
    """

    fetched: list[str] = field(default_factory=list)
    present: list[str] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)


async def fetch_all(
    store: AssetStore,
    refs: Iterable[AssetRef],
    *,
    jobs: int = 4,
    stall: float = 300.0,
    on_progress: Callable[[int], None] | None = None,
    on_done: Callable[[str, str | None], None] | None = None,
) -> FetchReport:
    """Fetch every URL of ``refs`` that is not stored yet, ``jobs`` at a time.

    Args:
        store: Where files go.
        refs: What to fetch.
        jobs: Downloads at once.
        stall: Seconds without progress before one download fails.
        on_progress: Called with each chunk's size (for a progress bar).
        on_done: Called with each URL and ``None`` or why it failed.
    """
    report = FetchReport()
    todo = []
    for ref in refs:
        if store.get(ref.url) is not None:
            report.present.append(ref.url)
        else:
            todo.append(ref.url)
    gate = asyncio.Semaphore(max(1, jobs))

    async def one(url: str, http: httpx.AsyncClient) -> None:
        async with gate:
            try:
                await store.fetch(url, http, progress=on_progress)
            except OswError as exc:
                report.failed.append((url, exc.message))
                if on_done:
                    on_done(url, exc.message)
                return
            report.fetched.append(url)
            if on_done:
                on_done(url, None)

    async with httpx.AsyncClient(follow_redirects=False, timeout=stall) as http:  # open_public follows
        await asyncio.gather(*(one(url, http) for url in todo))
    return report


def read_lock(path: Path) -> dict[str, str]:
    """A lock file's expected hashes: ``{url: sha256}`` from ``assets list --json`` output.

    Raises:
        TaskError: If the file is not such a list.
    """
    try:
        data: Any = json.loads(Path(path).read_text(encoding="utf-8"))
        return {str(item["url"]): str(item["sha256"]) for item in data}
    except (OSError, ValueError, TypeError, KeyError, RecursionError) as exc:
        raise TaskError(
            f"not a lock file ({type(exc).__name__})",
            where=str(path),
            hint="write one with: osw-studio assets list SUITE --json > FILE",
        ) from None
