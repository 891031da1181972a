"""What every exporter shares: options, filters, the scrubbed view of a run, images and the base class.

Exporters stream: :meth:`Exporter.add_run` sees one run at a time and reads its steps one by one, so the
memory an export needs depends on the longest episode, not on how many runs there are.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import os
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

from osw_studio.core.actions import Action
from osw_studio.core.errors import ExportError
from osw_studio.core.step import EpisodeResult, StepRecord
from osw_studio.trajectory.curation import Curation
from osw_studio.trajectory.exporters.card_stats import CardStats
from osw_studio.trajectory.exporters.copies import FileCopier
from osw_studio.trajectory.layout import FINAL_SCREEN, SCREENS, STEPS_JSONL, RunMeta, image_size
from osw_studio.trajectory.scrub import Scrubber
from osw_studio.trajectory.store import RunStore

COPY_WORKERS = 1
"""Processes copying image files during an export started from the command line or the app."""

StepKind = Literal["agent", "human", "edited"]
STEP_KINDS: tuple[StepKind, ...] = ("agent", "human", "edited")


def step_kind(step: StepRecord) -> StepKind:
    """Who decided a step's actions: the model alone, a person alone, or a person correcting the model.

    >>> step_kind(StepRecord(index=1)), step_kind(StepRecord(index=1, verdict="edited"))
    ('agent', 'edited')
    >>> step_kind(StepRecord(index=1, source="human", verdict="human"))
    'human'
    """
    if step.source == "human":
        return "human"
    return "edited" if step.verdict == "edited" else "agent"


def parse_date(text: str, *, end: bool = False) -> float:
    """Epoch seconds of an ISO date or date-time (UTC unless it says otherwise).

    ``end`` makes a bare date mean the end of that day, so ``--until 2025-01-31`` includes the 31st.

    >>> parse_date("1970-01-02"), parse_date("1970-01-01", end=True)
    (86400.0, 86399.999999)
    >>> parse_date("1970-01-01T01:00:00+01:00")
    0.0

    Raises:
        ExportError: If ``text`` is not an ISO date.
    """
    try:
        value = dt.datetime.fromisoformat(text)
    except ValueError as exc:
        raise ExportError(f"not a date: {text!r}", hint="write YYYY-MM-DD or YYYY-MM-DDTHH:MM:SS") from exc
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    if end and len(text) == 10:
        value += dt.timedelta(days=1, microseconds=-1)
    return value.timestamp()


@dataclass(frozen=True)
class RunFilter:
    """Which runs and steps an export takes.

    Attributes:
        success_only: Only runs whose result says success.
        min_score: Only runs scored at least this.
        sources: Only steps of these kinds (``agent``, ``human``, ``edited``); empty means all. Formats
            with one sample per step emit only matching steps; whole-episode formats keep a run when at
            least one of its steps matches.
        domains: Only runs of these domains; empty means all.
        since: Only runs started at or after this (epoch seconds).
        until: Only runs started at or before this.
    """

    success_only: bool = False
    min_score: float | None = None
    sources: frozenset[str] = frozenset()
    domains: frozenset[str] = frozenset()
    since: float | None = None
    until: float | None = None

    def accepts_run(self, meta: RunMeta, result: EpisodeResult | None) -> bool:
        """Whether a run passes the run-level filters."""
        if self.success_only and not (result is not None and result.success):
            return False
        if self.min_score is not None and (result is None or (result.score or 0.0) < self.min_score):
            return False
        domain = (result.domain if result is not None else None) or meta.domain
        if self.domains and domain not in self.domains:
            return False
        if self.since is not None and meta.started_at < self.since:
            return False
        return not (self.until is not None and meta.started_at > self.until)

    def accepts_step(self, step: StepRecord) -> bool:
        """Whether a step passes the step-source filter."""
        return not self.sources or step_kind(step) in self.sources


@dataclass
class ExportOptions:
    """How to export.

    Attributes:
        filter: Which runs and steps.
        scrubber: Removes secrets (and typed-text patterns) from everything written.
        profile: The target-model profile of chat formats (prompt template and coordinate convention).
        coords: Overrides the profile's coordinate convention: ``abs``, ``rel1000``, ``rel999``, ``norm`` or
            ``smart``.
        per: ``step`` (one sample per step) or ``episode`` (one conversation per run).
        history: Screenshots per sample, the current one included (older steps keep only their text).
        target: ``action`` or ``thought-action``: what a rebuilt assistant turn holds.
        images: ``copy`` (files beside the export, referenced by relative path) or ``embed`` (data URLs);
            None: the format's own default (``embed`` for ``sft-messages``, ``copy`` otherwise).
        reprompt: Re-target every sample to this profile's prompt and action format instead of the
            recorded requests (the dataset card says so). ``profile`` is used only for runs that hold
            no recorded request.
        train_size: Scale images to this ``(width, height)`` and pixel coordinates with them (the
            training resolution), for formats that support it.
        curation: Review filters and DART-style selection (:mod:`osw_studio.trajectory.curation`).
        apply_corrections: A step a reviewer labelled wrong with a correction is exported as a person's
            edit (the correction the target, the model's reply kept as the rejected side of preference
            pairs); the run store itself never changes.
        copy_workers: Processes that copy image files while the export goes on; the export waits for
            them at its end (:func:`~osw_studio.trajectory.export.export_runs` does). 0 makes each copy
            before its reference is written, for callers that add runs one by one and read the files
            at once (the batch runner's OSWorld layout).
    """

    filter: RunFilter = field(default_factory=RunFilter)
    scrubber: Scrubber = field(default_factory=Scrubber)
    profile: str = "osworld"
    coords: str | None = None
    per: Literal["step", "episode"] = "step"
    history: int = 1
    target: Literal["action", "thought-action"] = "thought-action"
    images: Literal["copy", "embed"] | None = None
    reprompt: str | None = None
    train_size: tuple[int, int] | None = None
    curation: Curation | None = None
    apply_corrections: bool = False
    copy_workers: int = 0


RECENT = 256
"""How many entries a per-run cache of an exporter keeps: history turns recur within a few steps."""

_V = TypeVar("_V")


def remember(cache: dict[Any, _V], key: object, value: _V, limit: int = RECENT) -> _V:
    """Put ``value`` in ``cache`` (a dict kept in insertion order), dropping the oldest past ``limit``.

    Exporters cache what a run's samples repeat (image URLs, converted history turns); bounded, a
    run of any length costs the same memory.

    >>> cache: dict[int, str] = {}
    >>> [remember(cache, i, str(i), limit=2) for i in range(3)], cache
    (['0', '1', '2'], {1: '1', 2: '2'})
    """
    cache[key] = value
    while len(cache) > limit:
        del cache[next(iter(cache))]
    return value


STREAM_ABOVE = 16 * 1024 * 1024
"""A run whose ``steps.jsonl`` is larger than this many bytes is read a step at a time, not kept."""


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


class ExportRun:
    """A run as exporters see it: meta, result and steps with every secret scrubbed.

    The steps are read, scrubbed and validated once, here (a damaged line raises before anything is
    written), and kept for the formats to walk as often as they need: one run's steps, never a whole
    export's. The names under ``screens/`` are listed once too.

    Args:
        store: The run store.
        scrubber: What to remove from every string.
        keep: The indices of the steps to export (None: all), from curation.
        corrections: Reviewers' corrections by step index, exported as edits.
        requests: Keep each step's recorded model request; formats that do not write requests leave
            them out, which spares scrubbing them.
        read_steps: Read the steps (False: only ``run.json`` and ``result.json``, for a look at what
            the run is; it then has no steps).

    Raises:
        StoreError: If ``run.json``, ``result.json`` or a step line other than a torn last one is damaged.
    """

    def __init__(
        self,
        store: RunStore,
        scrubber: Scrubber,
        *,
        keep: frozenset[int] | None = None,
        corrections: dict[int, list[Action]] | None = None,
        requests: bool = True,
        read_steps: bool = True,
    ) -> None:
        self.store = store
        self._scrubber = scrubber
        self._corrections = corrections or {}
        self.meta = RunMeta.model_validate(scrubber.data(store.meta.model_dump(mode="json")))
        raw = store.result
        self.result = (
            EpisodeResult.model_validate(scrubber.data(raw.model_dump(mode="json"))) if raw else None
        )

        self._keep = keep
        self._requests = requests
        self._steps: list[StepRecord] | None = []
        if read_steps:
            if _size(store.file(STEPS_JSONL)) <= STREAM_ABOVE:
                self._steps = list(self._read())
            else:
                # A long run: checked whole once (a damaged line raises before anything is written),
                # then read again, a step at a time, by each walk: memory does not grow with its length.
                for _ in self._read():
                    pass
                self._steps = None
        self._screens: dict[str, Path | None] | None = None

    def _prepare(self, data: dict[str, Any]) -> dict[str, Any]:
        if not self._requests:
            data.pop("request", None)
        return self._scrubber.step_data(data)

    def _read(self) -> Iterator[StepRecord]:
        keep = self._keep
        # A key typed across consecutive steps is found before curation drops any of them.
        joined = self._scrubber.across_steps(
            self._corrected(step) for step in self.store.iter_steps(self._prepare)
        )
        for step in joined:
            if keep is None or step.index in keep:
                yield step

    def _corrected(self, step: StepRecord) -> StepRecord:
        correction = self._corrections.get(step.index)
        if correction is not None and step.source == "agent":
            # A reviewer wrote the correction: it is scrubbed like everything else.
            return self._scrubber.step(
                step.model_copy(update={"verdict": "edited", "executed": list(correction)})
            )
        return step

    @cached_property
    def run_id(self) -> str:
        """The run folder's name."""
        return self.store.run_id

    @property
    def domain(self) -> str:
        """The task's domain (``unknown`` when the run does not say)."""
        return (self.result.domain if self.result else None) or self.meta.domain or "unknown"

    @property
    def task_id(self) -> str:
        """The task's id."""
        return self.meta.task_id

    @property
    def model(self) -> str:
        """The model that acted (``unknown`` when the run does not say)."""
        return (self.result.model if self.result else None) or self.meta.model or "unknown"

    @property
    def score(self) -> float | None:
        """The evaluator's score, or None when the run has none (interrupted or not scorable)."""
        return self.result.score if self.result else None

    @property
    def success(self) -> bool:
        """Whether the run succeeded."""
        return bool(self.result and self.result.success)

    @property
    def status(self) -> str:
        """The run's final status (``interrupted`` when it has no result or a torn step line)."""
        return "interrupted" if self.store.torn else self.store.status

    def steps(self, *, requests: bool = True) -> Iterator[StepRecord]:
        """The steps, in order, scrubbed (only those curation keeps; corrections applied as edits).

        Args:
            requests: Keep each step's recorded model request (when the run was read with them).
        """
        for step in self._read() if self._steps is None else self._steps:
            if not requests and step.request is not None:
                step = step.model_copy(update={"request": None})
            yield step

    def screen_file(self, name: str | None) -> Path | None:
        """The file ``name`` under the run's ``screens/``, if it exists (as :meth:`RunStore.screen_file`).

        The folder is listed once: a regular file is taken as listed, anything else (a symlink) goes
        through the store's check that it stays inside the run folder.
        """
        if not name:
            return None
        if self._screens is None:
            self._screens = {}
            try:
                with os.scandir(self.store.path / SCREENS) as entries:
                    for entry in entries:
                        plain = entry.is_file(follow_symlinks=False)
                        self._screens[entry.name] = Path(entry.path) if plain else None
            except OSError:
                pass
        base = name if "/" not in name else Path(name).name  # a bare name, as the writer stores them
        if base not in self._screens:
            return None
        return self._screens[base] or self.store.screen_file(base)

    def screenshot_path(self, step: StepRecord) -> Path | None:
        """The file of the screen ``step`` acted on, when it was saved and still exists."""
        return self.screen_file(step.screenshot)

    def final_screen_path(self) -> Path | None:
        """The screen as it was when the episode ended, when saved."""
        for ext in ("png", "jpg"):
            path = self.screen_file(f"{FINAL_SCREEN}.{ext}")
            if path is not None:
                return path
        return None

    def screen_size(self, step: StepRecord | None = None) -> tuple[int, int] | None:
        """The guest screen's size: from ``run.json``, else from a screenshot's header."""
        if self.meta.screen_width and self.meta.screen_height:
            return (self.meta.screen_width, self.meta.screen_height)
        path = self.screenshot_path(step) if step is not None else None
        if path is None:
            return None
        with open(path, "rb") as f:
            return image_size(f.read(65536))


class ImageSink:
    """Puts step screenshots where an export's files can reference them.

    Args:
        out: The export folder.
        mode: ``copy`` (a copy in ``folder``) or ``embed`` (a ``data:`` URL).
        folder: Where copies go, relative to ``out``; ``{run_id}`` is filled in.
        copier: Makes the copies (default: each one when asked).
    """

    def __init__(
        self,
        out: Path,
        mode: str = "copy",
        folder: str = "images/{run_id}",
        copier: FileCopier | None = None,
    ) -> None:
        self.out = out
        self.mode = mode
        self.folder = folder
        self.copier = copier or FileCopier()
        self._out = os.fspath(out)
        self._run_folder = ("", "")  # the run last seen and its folder (relative to out), made
        self._made: set[str] = set()  # folders (relative to out) this sink created or found

    def ref(self, run: ExportRun, path: Path, mime: str | None = None) -> str:
        """A reference to the image at ``path``: a path relative to the export folder, or a data URL."""
        if self.mode == "embed":
            return data_url(path, mime)
        run_id, folder = self._run_folder
        if run_id != run.run_id:
            folder = Path(self.folder.format(run_id=run.run_id)).as_posix()
            if folder not in self._made:
                (self.out / folder).mkdir(parents=True, exist_ok=True)
                self._made.add(folder)
            self._run_folder = (run.run_id, folder)
        rel = f"{folder}/{path.name}"
        self.copier.copy(path, f"{self._out}/{rel}")
        return rel


def data_url(path: Path, mime: str | None = None) -> str:
    """The file as a ``data:`` URL (``mime`` defaults from the file's extension)."""
    mime = mime or ("image/jpeg" if path.suffix.lower() in (".jpg", ".jpeg") else "image/png")
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode()}"


class Exporter(ABC):
    """Converts run stores into one format, one run at a time.

    Args:
        out: The folder to write into (created when missing).
        options: How to export.
    """

    name: ClassVar[str]
    """The format's name on the command line."""
    episode_level: bool = True
    """Whether a run is exported whole (then the step filter keeps or drops whole runs)."""
    default_images: Literal["copy", "embed"] = "copy"
    """How images are written when the options do not say."""
    reads_requests: ClassVar[bool] = True
    """Whether the format writes steps' recorded requests (runs are read without them when not)."""
    replaces_runs: ClassVar[bool] = False
    """Whether a later run's output can replace an earlier one's (:meth:`slot` says which replaces which)."""

    def __init__(self, out: Path, options: ExportOptions) -> None:
        self.out = Path(out)
        self.options = options
        self.image_mode: Literal["copy", "embed"] = options.images or self.default_images
        self.card = CardStats()
        """What the dataset card reports; exporters count what they write."""
        self.copier = FileCopier(options.copy_workers)
        """Copies image files into the export (in worker processes with ``options.copy_workers``)."""
        self._staged: list[tuple[Path, Path]] = []
        try:
            self.out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ExportError(f"cannot create the output folder: {exc.strerror}", where=str(out)) from exc

    @abstractmethod
    def add_run(self, run: ExportRun) -> int:
        """Export one run; return how many samples (lines, rows, files) it produced."""

    def slot(self, run: ExportRun) -> object:
        """What a run's output takes that a later run's replaces (formats with :attr:`replaces_runs`).

        ``run`` may have been read without its steps.
        """
        raise NotImplementedError

    def count_run(self, run: ExportRun) -> int:
        """Count a run a later one will replace as :meth:`add_run` counts it, and write none of its files.

        What the run shares with others (a format's index files) is written as :meth:`add_run` would.
        """
        raise NotImplementedError

    def close(self) -> None:  # noqa: B027  # most formats have nothing to finish
        """Finish the export (flush open files, write indexes)."""

    def staged(self, name: str) -> Path:
        """Where to write the export's file ``name``: a hidden temporary name beside it.

        :meth:`publish` moves it into place once the whole export is written; an export that fails
        or is killed leaves the previous file whole (and a ``.NAME.partial`` at worst).
        """
        final = self.out / name
        temp = final.with_name(f".{final.name}.partial")
        self._staged.append((temp, final))
        return temp

    def publish(self) -> None:
        """Move every :meth:`staged` file into place (after :meth:`close`)."""
        for temp, final in self._staged:
            if temp.exists():
                temp.replace(final)
        self._staged.clear()

    def discard(self) -> None:
        """Remove the :meth:`staged` files of an export that failed (after :meth:`close`)."""
        for temp, _ in self._staged:
            with contextlib.suppress(OSError):
                temp.unlink()
        self._staged.clear()

    def count_step(self, step: StepRecord) -> None:
        """Count a step written, by who decided it, on the dataset card."""
        if step.source == "human":
            self.card.count("human")
        elif step.verdict in ("edited", "approved", "skipped"):
            self.card.count(step.verdict)
        else:
            self.card.count("agent")

    def card_details(self) -> list[str]:
        """Lines for the dataset card's Format section: the files and how to load them."""
        return []

    def keeps(self, step: StepRecord) -> bool:
        """Whether a step passes the step-source filter."""
        return self.options.filter.accepts_step(step)
