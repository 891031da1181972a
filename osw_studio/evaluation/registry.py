"""Registries of getters and metrics, looked up by the names OSWorld task files use.

A getter turns a ``result``/``expected`` spec into a value (a host file path, a string, a dict); a metric
turns those values into a score. Both register themselves with a decorator in the module that defines
them; the modules are imported on the first lookup, so ``coverage`` is one query over the names.

Examples:
    >>> "compare_table" in METRICS.names() and "vm_file" in GETTERS.names()
    True
    >>> METRICS.get("no_such_metric")
    Traceback (most recent call last):
    ...
    osw_studio.core.errors.EvaluationError: unknown metric 'no_such_metric' (...)
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic, NamedTuple, TypeVar

from osw_studio.core.errors import EvaluationError

if TYPE_CHECKING:
    from osw_studio.envs.guest_client import GuestClient
    from osw_studio.tasks.assets import AssetStore
    from osw_studio.tasks.hostfetch import FetchPolicy


F = TypeVar("F")


class Verdict(NamedTuple):
    """A metric's score with the reason it gave (metrics may return a bare float instead)."""

    score: float
    reason: str


MetricFunc = Callable[..., float | Verdict]
"""``metric(result, [expected,] **options) -> score``: pure, synchronous, no I/O but reading files."""


class NoValue(Exception):
    """A getter found no value where OSWorld's returns None (a guest that answered HTTP 500).

    The metric is then called with ``None``, which OSWorld's metrics score 0; the message says why.
    """


@dataclass(frozen=True)
class GetterContext:
    """What a getter may use: the guest and the task's cache folder.

    Attributes:
        guest: The client of the guest server.
        cache_dir: The task's folder in the asset cache (OSWorld's ``cache/<task id>``): fetched files
            go here, setup steps with ``stdout`` wrote their output here (for ``cache_file``), and
            pre-seeded expected files are found here.
        task_dir: The task file's folder: a ``cloud_file`` URL that is a plain path is relative to it.
        devtools_url: The guest browser's DevTools endpoint; by default the guest's host on port 9222.
        vlc_url: The guest VLC's HTTP interface; by default the guest's host on port 8080.
        assets: The asset cache ``cloud_file`` reads network URLs from (``osw-studio assets fetch``).
        port_url: How the host reaches a TCP port of the guest (``env.guest_port_url``); see
            :meth:`service_url`.
        fetch_policy: Where ``cloud_file`` may download from without an asset cache (default: the
            asset cache's policy, else public addresses only; :mod:`osw_studio.tasks.hostfetch`).
    """

    guest: GuestClient
    cache_dir: Path
    task_dir: Path | None = None
    devtools_url: str | None = None
    vlc_url: str | None = None
    assets: AssetStore | None = None
    port_url: Callable[[int], Awaitable[str]] | None = None
    fetch_policy: FetchPolicy | None = None

    async def service_url(self, port: int, configured: str | None = None) -> str:
        """The URL of a service the guest runs on ``port`` (its browser's DevTools, VLC's HTTP).

        ``configured`` (a context field such as ``devtools_url``) wins; then the env's forward of the
        port; else the guest's host with that port, as OSWorld's host code reaches its VMs.
        """
        if configured:
            return configured.rstrip("/")
        if self.port_url is not None:
            return (await self.port_url(port)).rstrip("/")
        from urllib.parse import urlsplit

        return f"http://{urlsplit(self.guest.base_url).hostname or '127.0.0.1'}:{port}"


GetterFunc = Callable[[GetterContext, dict[str, Any]], Awaitable[Any]]
"""``await getter(ctx, spec)``: ``spec`` is the task's getter object without its ``type``."""

OptionCheck = Callable[[dict[str, Any]], list[str]]
"""Given a metric's options, the names of the option features that are not implemented."""


@dataclass(frozen=True)
class Entry(Generic[F]):
    """One registered function and how far it supports the options tasks give it."""

    name: str
    func: F
    unsupported: OptionCheck | None = None

    def missing_features(self, options: dict[str, Any] | None) -> list[str]:
        """Names like ``compare_table:pivot_table`` for option features this entry cannot score."""
        if self.unsupported is None or not options:
            return []
        return [f"{self.name}:{feature}" for feature in self.unsupported(options)]


class Registry(Generic[F]):
    """Functions by name, filled by decorators in ``modules`` (imported on first use).

    Args:
        kind: ``"metric"`` or ``"getter"``, for messages.
        modules: The modules whose import registers the functions.
    """

    def __init__(self, kind: str, modules: tuple[str, ...]) -> None:
        self.kind = kind
        self._modules = modules
        self._entries: dict[str, Entry[F]] = {}
        self._loaded = False

    def register(self, name: str, *, unsupported: OptionCheck | None = None) -> Callable[[F], F]:
        """Decorator: register the function under ``name`` (the name task files use)."""

        def decorate(func: F) -> F:
            if name in self._entries:
                raise ValueError(f"{self.kind} {name!r} registered twice")
            self._entries[name] = Entry(name, func, unsupported)
            return func

        return decorate

    def _load(self) -> None:
        if not self._loaded:
            self._loaded = True
            for module in self._modules:
                importlib.import_module(module)

    def entry(self, name: str) -> Entry[F]:
        """The entry registered as ``name``.

        Raises:
            EvaluationError: If no such name is registered; no score is ever invented for it.
        """
        self._load()
        try:
            return self._entries[name]
        except KeyError:
            raise EvaluationError(
                f"unknown {self.kind} {name!r}",
                hint=f"OSW Studio does not implement it yet; `osw-studio eval coverage` lists the "
                f"{self.kind}s it implements",
            ) from None

    def get(self, name: str) -> F:
        """The function registered as ``name`` (see :meth:`entry`)."""
        return self.entry(name).func

    def names(self) -> frozenset[str]:
        """Every registered name."""
        self._load()
        return frozenset(self._entries)


METRICS: Registry[MetricFunc] = Registry(
    "metric",
    (
        "osw_studio.evaluation.metrics.general",
        "osw_studio.evaluation.metrics.table",
        "osw_studio.evaluation.metrics.slides",
        "osw_studio.evaluation.metrics.docs",
        "osw_studio.evaluation.metrics.files",
        "osw_studio.evaluation.metrics.apps",
        "osw_studio.evaluation.metrics.chrome",
        "osw_studio.evaluation.metrics.vlc",
        "osw_studio.evaluation.metrics.misc",
        "osw_studio.evaluation.metrics.writer",
        "osw_studio.evaluation.metrics.images",
        "osw_studio.evaluation.metrics.impress",
        "osw_studio.evaluation.metrics.python_suite",
        "osw_studio.evaluation.metrics.ocr",
        "osw_studio.evaluation.metrics.media",
    ),
)
"""Every metric, by the ``func`` name task files use."""

GETTERS: Registry[GetterFunc] = Registry(
    "getter",
    (
        "osw_studio.evaluation.getters.rule",
        "osw_studio.evaluation.getters.guest",
        "osw_studio.evaluation.getters.files",
        "osw_studio.evaluation.getters.chrome",
        "osw_studio.evaluation.getters.chrome_profile",
        "osw_studio.evaluation.getters.chrome_dom",
        "osw_studio.evaluation.getters.vlc",
        "osw_studio.evaluation.getters.vscode",
        "osw_studio.evaluation.getters.impress",
        "osw_studio.evaluation.getters.relative_time",
    ),
)
"""Every getter, by the ``type`` name task files use in ``result`` and ``expected``."""

metric = METRICS.register
getter = GETTERS.register
