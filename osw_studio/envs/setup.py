"""The setup-step executor: brings a guest to a task's start state (``config``) or runs ``postconfig``.

It implements every OSWorld setup step type with OSWorld's semantics, through a
:class:`~osw_studio.envs.guest_client.GuestClient`. Before anything runs, :func:`preflight` checks
every step, so a task with an unsupported or malformed step fails at once, naming the step.

Files are fetched on the host and sent to the guest through ``/setup/upload``: the guest may be
offline. A ``download`` URL may be ``http(s)://`` (fetched, or found in the asset cache) or a relative
path into the task's folder; an ``upload_file`` ``local_path`` is such a relative path. Task files are
untrusted: every host path they name goes through :mod:`osw_studio.core.paths` (no ``file://``, ``~``,
absolute path or ``..`` out of the task's folder; command output files stay in the task's cache folder).

The asset cache is a folder that lets offline users pre-seed OSWorld's files. For a task ``T``, a
file downloaded from ``URL`` to guest path ``P`` is looked up, in this order, as:

1. ``<cache>/T/<uuid5(NAMESPACE_URL, URL)>_<basename(P)>`` (the name OSWorld's own cache uses,
   so an OSWorld ``cache/`` folder can be used as it is);
2. ``<cache>/T/<basename(P)>``;
3. ``<cache>/T/<last segment of URL's path>``.

Downloaded files are written to name 1, so the next run is offline.
"""

from __future__ import annotations

import asyncio
import logging
import re
import sqlite3
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import httpx
from pydantic import TypeAdapter, ValidationError

from osw_studio.core.errors import GuestError, OswError, TaskError
from osw_studio.core.paths import (
    check_name,
    dest_problem,
    is_network_url,
    plain_file_name,
    task_dest,
    task_source,
)
from osw_studio.core.task import (
    SETUP_STEP_TYPES,
    ActivateWindowStep,
    ChangeWallpaperStep,
    ChromeCloseTabsStep,
    ChromeOpenTabsStep,
    CloseWindowStep,
    DownloadStep,
    ExecuteStep,
    LaunchStep,
    OpenStep,
    SetupStep,
    SleepStep,
    UpdateBrowseHistoryStep,
    UploadFileStep,
    VerifiedExecuteStep,
    shell_flag,
)
from osw_studio.envs.guest_client import CommandResult, GuestClient
from osw_studio.envs.readiness import READY_TIMEOUT, Launched, wait_ready
from osw_studio.settings.model import Settings
from osw_studio.tasks.assets import AssetStore, default_root, read_regular
from osw_studio.tasks.hostfetch import FetchPolicy, open_public, read_capped

log = logging.getLogger(__name__)

WINDOW_WAIT = 5.0
"""Seconds ``activate_window`` waits for a matching window to appear before going on without it."""

_STEP = TypeAdapter(SetupStep)
_DEVTOOLS_PORT = re.compile(r"--remote-debugging-port[= ](\d+)")
_CREDENTIAL_STEPS = {
    "googledrive": "this step needs Google credentials (a Google Drive account and its settings file)",
    "login": "this step needs Google credentials (an account to log in with)",
}


@dataclass
class SetupOptions:
    """Where a setup finds its files and how long it waits.

    Attributes:
        cache_dir: A per-task cache folder in OSWorld's layout (see the module docs), or ``None``.
        assets: The asset cache (``osw-studio assets fetch``): network URLs are read from it. A URL it
            lacks fails the step with the command that fetches it, unless ``fetch_missing`` is set.
        fetch_missing: Whether a URL missing from ``assets`` is downloaded into it during setup.
        task_dir: The task file's folder: plain paths in ``download`` and ``upload_file`` are relative
            to it.
        client_password: Replaces ``{CLIENT_PASSWORD}`` in commands (OSWorld's VMs use ``password``).
        devtools_url: The browser's DevTools endpoint; by default the guest's host with the port of the
            last ``--remote-debugging-port`` seen in this setup, else 9222.
        download_timeout: Seconds to fetch one file.
        download_retry_delay: Seconds between the 3 tries of a download.
        until_timeout: Seconds an ``execute`` step with ``until`` keeps trying.
        devtools_wait: Seconds to wait for a browser's DevTools port to answer.
        port_url: How the host reaches a TCP port of the guest (``env.guest_port_url``: a sandboxed
            guest forwards it); default: the guest's host with that port.
        ready_timeout: Seconds the windows of ``launch`` steps and a stable screen may take after the
            steps (see ``envs/readiness.py``); 0 skips the wait.
    """

    cache_dir: Path | None = None
    assets: AssetStore | None = None
    fetch_missing: bool = False
    task_dir: Path | None = None
    client_password: str = "password"
    devtools_url: str | None = None
    port_url: Callable[[int], Awaitable[str]] | None = None
    download_timeout: float = 300.0
    download_retry_delay: float = 1.0
    until_timeout: float = 120.0
    devtools_wait: float = 30.0
    fetch_policy: FetchPolicy = field(default_factory=FetchPolicy)
    """Where the host may fetch task files from, and how large (:mod:`osw_studio.tasks.hostfetch`)."""
    ready_timeout: float = READY_TIMEOUT


# --- pure helpers ------------------------------------------------------------------------------------


def substitute(command: str | list[str], *, password: str, width: int, height: int) -> str | list[str]:
    """Fill OSWorld's placeholders into a command (a string or each list item).

    >>> substitute(["echo", "{SCREEN_WIDTH_HALF}x{SCREEN_HEIGHT}", "{CLIENT_PASSWORD}"],
    ...            password="pw", width=1920, height=1080)
    ['echo', '960x1080', 'pw']
    """
    values = {
        "{CLIENT_PASSWORD}": password,
        "{SCREEN_WIDTH_HALF}": str(width // 2),
        "{SCREEN_HEIGHT_HALF}": str(height // 2),
        "{SCREEN_WIDTH}": str(width),
        "{SCREEN_HEIGHT}": str(height),
    }

    def fill(text: str) -> str:
        for key, value in values.items():
            text = text.replace(key, value)
        return text

    return fill(command) if isinstance(command, str) else [fill(item) for item in command]


def asset_candidates(cache_dir: Path, task_id: str, url: str, guest_path: str) -> list[Path]:
    """Where the asset cache may hold the file of one ``download`` entry, in lookup order.

    Only plain file names inside ``<cache>/<task id>/`` are candidates: a URL whose last segment
    decodes to ``../../x`` names nothing.

    >>> url = "https://h/x/a%20b.xlsx?download=1"
    >>> [str(p) for p in asset_candidates(Path("c"), "t1", url, "/home/u/f.xlsx")]
    ['c/t1/7c9f58b4-7535-52dc-b51d-eda1e3590655_f.xlsx', 'c/t1/f.xlsx', 'c/t1/a b.xlsx']
    >>> [p.name[36:] for p in asset_candidates(Path("c"), "t1", "https://h/..%2F..%2Fid_rsa", "/home/u/..")]
    ['_..']

    Raises:
        TaskError: If ``task_id`` is not a plain name.
    """
    folder = cache_dir / check_name(task_id, where="$.id")
    base = guest_path.replace("\\", "/").rsplit("/", 1)[-1]
    names = [f"{uuid.uuid5(uuid.NAMESPACE_URL, url)}_{base}", base]
    url_name = unquote(urlsplit(url).path.rsplit("/", 1)[-1])
    if url_name and url_name not in names:
        names.append(url_name)
    return [folder / name for name in names if plain_file_name(name)]


def same_url(a: str, b: str) -> bool:
    """Whether two URLs name the same page (scheme, ``www.``, trailing slash and fragment aside).

    >>> same_url("https://www.tripadvisor.com", "http://tripadvisor.com/#top")
    True
    >>> same_url("https://a.com/x", "https://a.com/y")
    False
    """

    def norm(url: str) -> tuple[str, str, str]:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        host = parts.netloc.lower().removeprefix("www.")
        return host, parts.path.rstrip("/"), parts.query

    return norm(a) == norm(b)


def local_source(url: str, task_dir: Path | None, *, where: str = "url") -> Path | None:
    """The host file a ``download`` URL names (inside the task's folder), or ``None`` for a network URL.

    >>> local_source("assets/a.txt", Path("/tasks/os"))
    PosixPath('/tasks/os/assets/a.txt')
    >>> local_source("https://h/a.txt", None) is None
    True
    >>> local_source("file:///home/u/.ssh/id_rsa", Path("/tasks/os"), where="$.config[0]")
    Traceback (most recent call last):
    ...
    osw_studio.core.errors.TaskError: $.config[0]: file:// URLs are refused: ...

    Raises:
        TaskError: If the task may not read that host file (:func:`osw_studio.core.paths.task_source`).
    """
    if is_network_url(url):
        return None
    return task_source(url, task_dir, where=where)


def fetch_policy(settings: Settings) -> FetchPolicy:
    """Where the host may fetch task files from (``assets.allowed_hosts``), how much (``max_download_mb``)."""
    assets = settings.assets
    return FetchPolicy.of(assets.allowed_hosts, assets.max_download_mb << 20)


def asset_store(settings: Settings) -> AssetStore:
    """The asset cache the settings name (``assets.cache_dir``, ``assets.mirror`` and the fetch policy)."""
    folder = settings.assets.cache_dir
    root = Path(folder).expanduser() if folder else default_root()
    return AssetStore(root, settings.assets.mirror, fetch_policy(settings))


def setup_options(settings: Settings, task_dir: Path | None = None) -> SetupOptions:
    """Setup options for a run under ``settings``: its asset cache, and where the task file lives."""
    return SetupOptions(
        assets=asset_store(settings),
        fetch_missing=settings.assets.fetch_missing,
        task_dir=task_dir,
        fetch_policy=fetch_policy(settings),
    )


async def read_asset(store: AssetStore, url: str, options: SetupOptions) -> bytes:
    """The bytes of a network URL from the asset cache, fetched into it first if allowed.

    Raises:
        AssetMissing: The URL is not cached (and may not be fetched now), with the command that fetches it.
        OswError: Fetching it failed.
    """
    if store.get(url) is None and options.fetch_missing:
        async with httpx.AsyncClient(timeout=options.download_timeout) as http:  # the store follows redirects
            await store.fetch(url, http)
    suite = str(options.task_dir) if options.task_dir else "SUITE"
    return await asyncio.to_thread(
        store.read, url, fetch_hint=f"fetch the files this task needs: osw-studio assets fetch {suite}"
    )


# --- preflight ---------------------------------------------------------------------------------------


def preflight(
    steps: Sequence[Any], *, options: SetupOptions | None = None, label: str = "config"
) -> list[SetupStep]:
    """Check every step before any runs: known type, valid parameters, runnable here, files present.

    Args:
        steps: Typed steps or raw OSWorld dicts.
        options: Where relative files are looked up.
        label: ``config`` or ``postconfig``, for messages.

    Returns:
        The typed steps.

    Raises:
        TaskError: Naming the first bad step by index and type.
    """
    options = options or SetupOptions()
    typed: list[SetupStep] = []
    for index, raw in enumerate(steps):
        kind = raw.get("type") if isinstance(raw, dict) else getattr(raw, "type", None)
        where = f"{label}[{index}] (type {kind!r})"
        if kind not in SETUP_STEP_TYPES:
            raise TaskError(
                f"unsupported setup step type {kind!r}",
                where=f"{label}[{index}]",
                hint=f"supported types: {', '.join(SETUP_STEP_TYPES)}",
            )
        try:
            step = _STEP.validate_python(raw if isinstance(raw, dict) else raw.model_dump(by_alias=True))
        except ValidationError as exc:
            first = exc.errors()[0]
            loc = ".".join(str(p) for p in first["loc"][1:])
            raise TaskError(f"malformed step: {loc}: {first['msg']}", where=where) from None
        if step.type in _CREDENTIAL_STEPS:
            raise TaskError(
                _CREDENTIAL_STEPS[step.type],
                where=where,
                hint="OSW Studio cannot run Google account steps; skip this task: "
                "OSWorld's test_nogdrive.json lists the tasks without them",
            )
        _check_files(step, where, options)
        typed.append(step)
    return typed


def _check_files(step: SetupStep, where: str, options: SetupOptions) -> None:
    if isinstance(step, LaunchStep | ExecuteStep | VerifiedExecuteStep) and not step.parameters.command:
        raise TaskError("the command is empty", where=where)
    if isinstance(step, ExecuteStep | VerifiedExecuteStep):
        for key in ("stdout", "stderr"):
            name = getattr(step.parameters, key)
            problem = dest_problem(name) if name is not None else None
            if problem is not None:
                raise TaskError(f"parameters.{key}: {problem}", where=where)
    if isinstance(step, DownloadStep):
        for i, entry in enumerate(step.parameters.files):
            source = local_source(entry.url, options.task_dir, where=f"{where}: parameters.files[{i}].url")
            if source is not None and not source.is_file():
                raise TaskError(
                    f"files[{i}]: the local file {source} does not exist", where=where, hint="fix the url"
                )
    if isinstance(step, UploadFileStep):
        for i, upload in enumerate(step.parameters.files):
            source = task_source(
                upload.local_path, options.task_dir, where=f"{where}: parameters.files[{i}].local_path"
            )
            if not source.is_file():
                raise TaskError(
                    f"files[{i}]: the local file {source} does not exist", where=where, hint="fix local_path"
                )


# --- the executor ------------------------------------------------------------------------------------


class SetupRunner:
    """Runs setup steps against one guest.

    Args:
        guest: The guest's client.
        options: Files, password and waits.
    """

    def __init__(self, guest: GuestClient, options: SetupOptions | None = None) -> None:
        self.guest = guest
        self.options = options or SetupOptions()
        self._task_id = "task"
        self._screen: tuple[int, int] | None = None
        self._devtools_port = 9222
        self._launched: list[Launched] = []
        self._where = ""
        self._handlers: dict[str, Callable[[Any], Awaitable[None]]] = {
            "download": self._download,
            "upload_file": self._upload_file,
            "open": self._open,
            "launch": self._launch,
            "execute": self._execute,
            "command": self._execute,
            "execute_with_verification": self._execute_verified,
            "sleep": self._sleep,
            "activate_window": self._activate_window,
            "close_window": self._close_window,
            "change_wallpaper": self._change_wallpaper,
            "chrome_open_tabs": self._chrome_open_tabs,
            "chrome_close_tabs": self._chrome_close_tabs,
            "update_browse_history": self._update_browse_history,
        }

    async def run(self, steps: Sequence[Any], *, task_id: str | None = None, label: str = "config") -> None:
        """Check all steps, then run them in order.

        Raises:
            TaskError: If a step is unsupported or malformed (before anything runs).
            GuestError: If a step fails, naming its index and type.
        """
        typed = preflight(steps, options=self.options, label=label)
        self._task_id = check_name(task_id or "task", where="$.id")
        self._launched = []
        for index, step in enumerate(typed):
            where = f"{label}[{index}] (type {step.type!r}) of {len(typed)} steps"
            self._where = where
            log.info("setup %s", where)
            try:
                await self._handlers[step.type](step)
            except OswError as exc:
                inner = f"{exc.where}: {exc.message}" if exc.where else exc.message
                raise GuestError(inner, where=where, hint=exc.hint) from None
        if typed and self.options.ready_timeout > 0:
            await wait_ready(self.guest, self._launched, budget=self.options.ready_timeout)

    # --- files ---------------------------------------------------------------------------------------

    async def _download(self, step: DownloadStep) -> None:
        for entry in step.parameters.files:
            data = await self._fetch(entry.url, entry.path)
            await self.guest.upload(data, entry.path)

    async def _fetch(self, url: str, guest_path: str) -> bytes:
        source = local_source(url, self.options.task_dir)
        if source is not None:
            return _read_source(source)
        cache = self.options.cache_dir
        if cache is not None:
            for candidate in asset_candidates(cache, self._task_id, url, guest_path):
                if candidate.is_symlink() or (candidate.exists() and not candidate.is_file()):
                    raise TaskError(
                        "refused: the cached file is a link or not a regular file (it could hand the "
                        "guest any file of this machine)",
                        where=str(candidate),
                        hint="replace it with a copy of the file",
                    )
                if candidate.is_file():
                    log.info("asset %s from the cache: %s", url, candidate)
                    return read_regular(candidate)
        if self.options.assets is not None and is_network_url(url):
            return await read_asset(self.options.assets, url, self.options)
        data = await self._http_get(url, cache)
        if cache is not None:
            target = asset_candidates(cache, self._task_id, url, guest_path)[0]
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        return data

    async def _http_get(self, url: str, cache: Path | None) -> bytes:
        hint = (
            f"check the network, or put the file into the asset cache as {cache}/{self._task_id}/<file name>"
            if cache is not None
            else "check the network, or pass an asset cache folder that holds the file"
        )
        last = ""
        policy = self.options.fetch_policy
        async with httpx.AsyncClient(timeout=self.options.download_timeout) as http:  # redirects: ours
            for attempt in range(3):  # OSWorld tries each download 3 times
                try:
                    async with open_public(http, url, policy) as response:
                        if response.status_code >= 400:
                            last = f"HTTP {response.status_code}"
                            if response.status_code < 500:
                                break
                        else:
                            return b"".join([c async for c in read_capped(response, policy.max_bytes, url)])
                except httpx.HTTPError as exc:
                    last = str(exc) or type(exc).__name__
                if attempt < 2:
                    await asyncio.sleep(self.options.download_retry_delay)
        raise GuestError(f"cannot download the file ({last})", where=url, hint=hint)

    async def _upload_file(self, step: UploadFileStep) -> None:
        for entry in step.parameters.files:
            source = task_source(entry.local_path, self.options.task_dir, where="local_path")
            await self.guest.upload(_read_source(source), entry.path)

    # --- programs and windows ------------------------------------------------------------------------

    async def _open(self, step: OpenStep) -> None:
        await self.guest.open_file(step.parameters.path)

    async def _launch(self, step: LaunchStep) -> None:
        command = step.parameters.command
        shell = shell_flag(step.parameters.shell)
        if not shell and isinstance(command, str) and len(command.split()) > 1:
            command = command.split()  # as OSWorld: a string without a shell is split on spaces
        self._note_devtools_port(command)
        pid = await self.guest.launch(command, shell=shell)
        if pid is not None:
            shown = command if isinstance(command, str) else " ".join(command)
            self._launched.append(Launched(self._where, pid, shown[:200]))

    async def _execute(self, step: ExecuteStep) -> None:
        params = step.parameters
        width, height = await self._screen_size()
        command = substitute(
            params.command, password=self.options.client_password, width=width, height=height
        )
        self._note_devtools_port(command)
        shell = shell_flag(params.shell)
        until = params.until or {}
        deadline = time.monotonic() + self.options.until_timeout
        failures = 0
        while True:
            result: CommandResult | None = None
            try:
                result = await self.guest.execute(command, shell=shell, setup=True)
            except GuestError:
                failures += 1
                if failures >= 5:  # OSWorld gives up after 5 failed requests
                    raise
            if result is not None:
                self._save_output(params.stdout, result.output)
                self._save_output(params.stderr, result.error)
                if not until or _until_met(until, result):
                    return
            if time.monotonic() > deadline:
                raise GuestError(
                    f"the command never met its 'until' condition {until} "
                    f"within {self.options.until_timeout:g} s",
                    hint="the app it waits for may not have started",
                )
            await asyncio.sleep(0.3)

    def _save_output(self, name: str | None, text: str) -> None:
        if name and self.options.cache_dir is not None:
            folder = self.options.cache_dir / self._task_id
            target = task_dest(folder, name, where="parameters.stdout/stderr")
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")

    async def _execute_verified(self, step: VerifiedExecuteStep) -> None:
        params = step.parameters
        width, height = await self._screen_size()
        command = substitute(
            params.command, password=self.options.client_password, width=width, height=height
        )
        await self.guest.execute_with_verification(
            command,
            shell=shell_flag(params.shell),
            verification=params.verification,
            max_wait_time=params.max_wait_time,
            check_interval=params.check_interval,
        )

    async def _sleep(self, step: SleepStep) -> None:
        await asyncio.sleep(float(step.parameters.seconds))

    async def _activate_window(self, step: ActivateWindowStep) -> None:
        # A window launched by the step before may not be mapped yet: wait for it a little. When it
        # never shows, OSWorld logs and goes on, and so do we: the evaluator judges the end state.
        p = step.parameters
        deadline = time.monotonic() + WINDOW_WAIT
        while not await self.guest.activate_window(p.window_name, strict=p.strict, by_class=p.by_class):
            if time.monotonic() >= deadline:
                log.warning("setup: no window matches %r to activate; going on", p.window_name)
                return
            await asyncio.sleep(0.2)

    async def _close_window(self, step: CloseWindowStep) -> None:
        p = step.parameters
        if not await self.guest.close_window(p.window_name, strict=p.strict, by_class=p.by_class):
            log.warning("setup: no window matches %r to close; going on", p.window_name)

    async def _change_wallpaper(self, step: ChangeWallpaperStep) -> None:
        await self.guest.change_wallpaper(step.parameters.path)

    async def _screen_size(self) -> tuple[int, int]:
        if self._screen is None:
            self._screen = await self.guest.screen_size()
        return self._screen

    # --- browser -------------------------------------------------------------------------------------

    def _note_devtools_port(self, command: str | list[str]) -> None:
        text = command if isinstance(command, str) else " ".join(command)
        match = _DEVTOOLS_PORT.search(text)
        if match:
            self._devtools_port = int(match.group(1))

    async def _devtools_base(self) -> str:
        if self.options.devtools_url:
            return self.options.devtools_url.rstrip("/")
        if self.options.port_url is not None:
            return (await self.options.port_url(self._devtools_port)).rstrip("/")
        host = urlsplit(self.guest.base_url).hostname or "127.0.0.1"
        return f"http://{host}:{self._devtools_port}"

    async def _devtools(self, http: httpx.AsyncClient) -> str:
        """Wait until the browser's DevTools endpoint answers; return its base URL."""
        base = await self._devtools_base()
        deadline = time.monotonic() + self.options.devtools_wait
        while True:
            try:
                response = await http.get(f"{base}/json/version", timeout=5)
                if response.status_code == 200:
                    return base
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise GuestError(
                    f"no browser DevTools endpoint answered within {self.options.devtools_wait:g} s",
                    where=base,
                    hint="start the browser with --remote-debugging-port (OSWorld tasks launch it in an "
                    "earlier step) and make the port reachable from the host",
                )
            await asyncio.sleep(0.5)

    async def _chrome_open_tabs(self, step: ChromeOpenTabsStep) -> None:
        async with httpx.AsyncClient() as http:
            base = await self._devtools(http)
            before = [t for t in (await http.get(f"{base}/json/list")).json() if t.get("type") == "page"]
            for index, url in enumerate(step.parameters.urls_to_open):
                response = await http.put(f"{base}/json/new?{url}")
                if response.status_code == 405:  # browsers before Chrome 111 take GET
                    response = await http.get(f"{base}/json/new?{url}")
                if response.status_code != 200:
                    raise GuestError(f"the browser did not open {url}: {response.text[:200]}", where=base)
                if index == 0 and before:
                    # OSWorld replaces the browser's start tab with the first URL.
                    await http.get(f"{base}/json/close/{before[0]['id']}")

    async def _chrome_close_tabs(self, step: ChromeCloseTabsStep) -> None:
        async with httpx.AsyncClient() as http:
            base = await self._devtools(http)
            for url in step.parameters.urls_to_close:
                tabs = [t for t in (await http.get(f"{base}/json/list")).json() if t.get("type") == "page"]
                for tab in tabs:
                    if same_url(str(tab.get("url", "")), url):
                        await http.get(f"{base}/json/close/{tab['id']}")
                        break

    async def _update_browse_history(self, step: UpdateBrowseHistoryStep) -> None:
        platform = await self.guest.platform()
        if platform == "Linux":
            home = (await self.guest.execute('printf %s "$HOME"', shell=True, setup=True)).output.strip()
            target = f"{home}/.config/google-chrome/Default/History"
        else:
            raise GuestError(
                f"update_browse_history supports Linux guests only (this guest is {platform})",
                hint="run the task on a Linux guest",
            )
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "History"
            template = self._history_template()
            if template is not None:
                db.write_bytes(template.read_bytes())
            write_history(db, step.parameters.history)
            await self.guest.upload(db.read_bytes(), target)

    def _history_template(self) -> Path | None:
        cache = self.options.cache_dir
        if cache is None:
            return None
        for candidate in (cache / self._task_id / "history_new.sqlite", cache / "history_empty.sqlite"):
            if candidate.is_file():
                return candidate
        return None


_HISTORY_SCHEMA = """
CREATE TABLE IF NOT EXISTS urls(id INTEGER PRIMARY KEY AUTOINCREMENT, url LONGVARCHAR, title LONGVARCHAR,
    visit_count INTEGER DEFAULT 0 NOT NULL, typed_count INTEGER DEFAULT 0 NOT NULL,
    last_visit_time INTEGER NOT NULL, hidden INTEGER DEFAULT 0 NOT NULL);
CREATE TABLE IF NOT EXISTS visits(id INTEGER PRIMARY KEY, url INTEGER NOT NULL, visit_time INTEGER NOT NULL,
    from_visit INTEGER, transition INTEGER DEFAULT 0 NOT NULL, segment_id INTEGER,
    visit_duration INTEGER DEFAULT 0 NOT NULL);
"""


def write_history(db: Path, history: list[dict[str, Any]]) -> None:
    """Add visits to a Chrome ``History`` database (creating its tables if the file is new), as OSWorld.

    Each entry has ``url``, ``title`` and ``visit_time_from_now_in_seconds``.
    """
    epoch = datetime(1601, 1, 1)  # Chrome counts microseconds since 1601
    with sqlite3.connect(db) as conn:
        conn.executescript(_HISTORY_SCHEMA)
        for item in history:
            visit = datetime.now() - timedelta(seconds=float(item["visit_time_from_now_in_seconds"]))
            stamp = int((visit - epoch).total_seconds() * 1_000_000)
            cursor = conn.execute(
                "INSERT INTO urls (url, title, visit_count, typed_count, last_visit_time, hidden) "
                "VALUES (?, ?, 1, 0, ?, 0)",
                (item["url"], item["title"], stamp),
            )
            conn.execute(
                "INSERT INTO visits (url, visit_time, from_visit, transition, segment_id, visit_duration) "
                "VALUES (?, ?, 0, 805306368, 0, 0)",
                (cursor.lastrowid, stamp),
            )
    conn.close()


def _read_source(path: Path) -> bytes:
    """A task's source file (checked by the path policy), read at the place its symlinks resolve to."""
    try:
        return path.resolve().read_bytes()
    except OSError as exc:
        raise TaskError(f"cannot read the file: {exc.strerror or exc}", where=str(path)) from None


def _until_met(until: dict[str, Any], result: CommandResult) -> bool:
    """OSWorld's ``until``: any one of ``returncode``, ``stdout`` (substring), ``stderr`` holds.

    >>> _until_met({"returncode": 0}, CommandResult(returncode=0))
    True
    >>> _until_met({"stdout": "ready"}, CommandResult(output="not yet"))
    False
    """
    return (
        ("returncode" in until and result.returncode == until["returncode"])
        or ("stdout" in until and str(until["stdout"]) in result.output)
        or ("stderr" in until and str(until["stderr"]) in result.error)
    )
