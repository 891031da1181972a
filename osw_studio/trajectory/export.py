"""Exporting run stores: find the runs, filter them, scrub them and feed them to one exporter.

The runs are found lazily, and each is read one step at a time, so an export's memory does not grow with
the number of runs (only the list of their folder paths is kept, to tell progress).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from osw_studio.actions.coords import COORD_MODES
from osw_studio.core.actions import Action
from osw_studio.core.errors import ExportError, StoreError
from osw_studio.trajectory.curation import Curation, RunPlan, plan
from osw_studio.trajectory.exporters import DESCRIPTIONS, exporter_class
from osw_studio.trajectory.exporters.base import (
    COPY_WORKERS,
    Exporter,
    ExportOptions,
    ExportRun,
    RunFilter,
    parse_date,
)
from osw_studio.trajectory.exporters.card import CARD, write_card
from osw_studio.trajectory.exporters.profiles import get_profile
from osw_studio.trajectory.scrub import Scrubber
from osw_studio.trajectory.store import RunStore, iter_runs

_SECRET_ENV = re.compile(r"(?i)(api_?key|token|secret|password)")


@dataclass
class ExportSummary:
    """What an export did.

    Attributes:
        format: The format's name.
        out: The output folder.
        runs_found: Run folders found under the paths.
        runs_exported: Runs that passed the filters.
        samples: Samples written (lines, rows or files, depending on the format).
        skipped: Why runs were left out, with counts.
        damaged: What was wrong with each run left out as damaged (``where: what``).
    """

    format: str
    out: Path
    runs_found: int = 0
    runs_exported: int = 0
    samples: int = 0
    skipped: dict[str, int] = field(default_factory=dict)
    damaged: list[str] = field(default_factory=list)

    def skip(self, reason: str) -> None:
        """Count a run left out for ``reason``."""
        self.skipped[reason] = self.skipped.get(reason, 0) + 1


Progress = Callable[[int, int, ExportSummary], None]
"""Called after each run with ``(done, total, summary)``."""


def known_secrets(extra_vars: Sequence[str] = ()) -> list[str]:
    """Values of environment variables that hold secrets (by name, or named in ``extra_vars``)."""
    return [
        value
        for name, value in os.environ.items()
        if value and (name in extra_vars or _SECRET_ENV.search(name))
    ]


def run_filter(
    *,
    success_only: bool = False,
    min_score: float | None = None,
    sources: Iterable[str] = (),
    domains: Iterable[str] = (),
    since: str | None = None,
    until: str | None = None,
) -> RunFilter:
    """A :class:`RunFilter` from what a person gives (dates as ISO text; ``until`` a whole day).

    >>> f = run_filter(domains=["os"], since="2025-01-01", until="2025-01-31")
    >>> sorted(f.domains), f.until - f.since > 30 * 86400
    (['os'], True)

    Raises:
        ExportError: If a date is not an ISO date.
    """
    return RunFilter(
        success_only=success_only,
        min_score=min_score,
        sources=frozenset(sources),
        domains=frozenset(domains),
        since=parse_date(since) if since else None,
        until=parse_date(until, end=True) if until else None,
    )


def export_options(
    filter: RunFilter | None = None,
    *,
    scrub_typed: Sequence[str] = (),
    secret_env: Sequence[str] = (),
    profile: str = "osworld",
    coords: str | None = None,
    per: Literal["step", "episode"] = "step",
    history: int | None = None,
    target: Literal["action", "thought-action"] = "thought-action",
    images: Literal["copy", "embed"] | None = None,
    reprompt: str | None = None,
    train_size: str | tuple[int, int] | None = None,
    curation: Curation | None = None,
    apply_corrections: bool = False,
) -> ExportOptions:
    """The options of an export, as the command line and the app's export dialog both build them.

    Secrets are taken from the environment (variables named like keys, and those in ``secret_env``),
    typed text matching ``scrub_typed`` is redacted, and ``history`` (screenshots per rebuilt sample)
    defaults to one per step sample and none for whole episodes. ``train_size`` is ``WxH``.

    >>> export_options(per="episode").history, export_options().history
    (0, 1)
    >>> export_options(train_size="1288x728").train_size
    (1288, 728)

    Raises:
        ExportError: For a pattern that is not a regular expression, or options no exporter honours.
    """
    try:
        patterns = [re.compile(p) for p in scrub_typed]
    except re.error as exc:
        raise ExportError(
            f"bad pattern to scrub typed text (--scrub-typed): {exc}",
            where=str(exc.pattern),
            hint="fix the regular expression",
        ) from exc
    options = ExportOptions(
        filter=filter or RunFilter(),
        scrubber=Scrubber(secrets=known_secrets(secret_env), typed_patterns=patterns),
        profile=profile,
        coords=coords,
        per=per,
        history=history if history is not None else (1 if per == "step" else 0),
        target=target,
        images=images,
        reprompt=reprompt,
        train_size=parse_size(train_size) if isinstance(train_size, str) else train_size,
        curation=curation,
        apply_corrections=apply_corrections,
        copy_workers=COPY_WORKERS,
    )
    check_options(options)
    return options


def parse_size(text: str) -> tuple[int, int]:
    """``(width, height)`` from ``WxH``.

    >>> parse_size("768x768")
    (768, 768)

    Raises:
        ExportError: If ``text`` is not two positive numbers joined by ``x``.
    """
    width, sep, height = text.lower().partition("x")
    if sep and width.isdigit() and height.isdigit() and int(width) > 0 and int(height) > 0:
        return int(width), int(height)
    raise ExportError(f"not a size: {text!r}", hint="write WIDTHxHEIGHT, for example 1288x728")


def check_options(options: ExportOptions) -> None:
    """Reject options no exporter can honour.

    Raises:
        ExportError: Naming the bad option.
    """
    if options.coords is not None and (options.coords not in COORD_MODES or options.coords == "resized"):
        raise ExportError(
            f"unknown coordinate convention {options.coords!r}", hint="use abs, rel1000, norm or smart"
        )
    get_profile(options.profile)
    if options.reprompt is not None:
        get_profile(options.reprompt)
    if options.history < 0:
        raise ExportError("history must be 0 or more screenshots")
    if options.filter.min_score is not None and not 0 <= options.filter.min_score <= 1:
        raise ExportError("minimum score must be between 0 and 1")


def export_runs(
    paths: Iterable[str | Path],
    format: str,
    out: str | Path,
    options: ExportOptions | None = None,
    progress: Progress | None = None,
) -> ExportSummary:
    """Export every run under ``paths`` to ``format`` in ``out``.

    Args:
        paths: Run folders, ``runs/`` folders or any folders above them.
        format: A format name from :data:`osw_studio.trajectory.exporters.EXPORTERS`.
        out: The output folder.
        options: Filters, scrubbing and format options.
        progress: Told after each run.

    A damaged run (an unreadable ``run.json``, ``result.json`` or step line, values no run could
    have) is left out and reported in :attr:`ExportSummary.damaged`; the export goes on.

    Raises:
        ExportError: For an unknown format or bad options.
        StoreError: For a path with no runs.
    """
    options = options or ExportOptions()
    check_options(options)
    cls = exporter_class(format)
    run_paths = [run.path for run in iter_runs(paths)]
    summary = ExportSummary(format=format, out=Path(out), runs_found=len(run_paths))
    plans = _curate(run_paths, options, Path(out), summary)
    exporter = cls(Path(out), options)
    # A re-export drops the old card first and writes the new one last: a killed export never shows a
    # card beside data it does not describe (its files go to temporary names, moved in at the end).
    _drop_card(Path(out))
    published = False
    # Runs whose output a later run replaces (a rerun of a task in OSWorld's layout) are counted, not
    # written: writing and then deleting their files would cost more than the export's own work.
    replaced = _replaced(run_paths, plans, exporter, options) if cls.replaces_runs else {}
    unwritten: dict[object, Path] = {}  # by slot: the last run counted only, while no later one is written
    try:
        for done, path in enumerate(run_paths, start=1):
            chosen = plans.get(path)
            try:
                run = ExportRun(
                    RunStore(path),
                    options.scrubber,
                    keep=frozenset(chosen.steps) if chosen else None,
                    corrections=_corrections(chosen) if chosen and options.apply_corrections else None,
                    requests=cls.reads_requests,
                )  # reads every step: a damaged line is found before anything is written
            except StoreError as exc:
                summary.skip("damaged")
                summary.damaged.append(str(exc))
                if progress is not None:
                    progress(done, len(run_paths), summary)
                continue
            if chosen is not None and not chosen.copies:
                summary.skip(f"curation: {chosen.why}")
            elif not options.filter.accepts_run(run.meta, run.result):
                summary.skip("filtered out")
            elif options.filter.sources and exporter.episode_level and not _any_step_matches(run, options):
                summary.skip("no step of the chosen sources")
            else:
                copies = chosen.copies if chosen and format in REPLAYABLE else 1
                slot = replaced.get(path)
                if slot is not None:
                    summary.samples += exporter.count_run(run)
                    unwritten[slot] = path
                else:
                    if cls.replaces_runs:
                        unwritten.pop(exporter.slot(run), None)
                    for _ in range(copies):
                        summary.samples += exporter.add_run(run)
                summary.runs_exported += 1
                exporter.card.runs.append(run.run_id)
                exporter.card.models[run.model] += 1
                exporter.card.agents[run.meta.agent or "unknown"] += 1
            if progress is not None:
                progress(done, len(run_paths), summary)
        for path in unwritten.values():  # the run meant to replace it was left out after all (damaged)
            chosen = plans.get(path)
            _rewrite(exporter, path, options, chosen, cls.reads_requests)
        exporter.copier.wait()  # the export is whole once its images are; a failed copy fails it
        exporter.copier.close()
        exporter.close()
        exporter.publish()
        published = True
    except OSError as exc:  # a full disk, a read-only folder: said plainly, and the old export kept
        raise _write_error(exc, Path(out)) from None
    finally:
        if not published:
            exporter.copier.close()
            with contextlib.suppress(Exception):  # the error that got here is the one to report
                exporter.close()
            exporter.discard()
    try:
        write_card(
            Path(out),
            format,
            DESCRIPTIONS[format],
            exporter.card,
            options,
            summary.samples,
            exporter.card_details(),
            exporter.image_mode,
        )
    except OSError as exc:
        raise _write_error(exc, Path(out)) from None
    return summary


def _write_error(exc: OSError, out: Path) -> ExportError:
    where = exc.filename if isinstance(exc.filename, str) else str(out)
    full = exc.errno in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
    return ExportError(
        f"cannot write the export: {exc.strerror or exc}",
        where=where,
        hint="free some space on that disk, or export to another folder"
        if full
        else "check that the output folder is writable",
    )


def _drop_card(out: Path) -> None:
    try:
        (out / CARD).unlink(missing_ok=True)
    except OSError as exc:
        raise ExportError(f"cannot replace the dataset card: {exc.strerror}", where=str(out / CARD)) from None


def _replaced(
    run_paths: list[Path], plans: dict[Path, RunPlan], exporter: Exporter, options: ExportOptions
) -> dict[Path, object]:
    """The runs whose output a later run that passes the run filters replaces, with their slots.

    Only ``run.json`` and ``result.json`` are read here; a later run found damaged or without a step of
    the chosen sources in the export itself is made up for at its end (:func:`_rewrite`).
    """
    slots: dict[Path, object] = {}
    last: dict[object, Path] = {}
    for path in run_paths:
        chosen = plans.get(path)
        if chosen is not None and not chosen.copies:
            continue
        try:
            head = ExportRun(RunStore(path), options.scrubber, requests=False, read_steps=False)
        except StoreError:
            continue
        if not options.filter.accepts_run(head.meta, head.result):
            continue
        slots[path] = slot = exporter.slot(head)
        last[slot] = path
    return {path: slot for path, slot in slots.items() if last[slot] != path}


def _rewrite(
    exporter: Exporter, path: Path, options: ExportOptions, chosen: RunPlan | None, requests: bool
) -> None:
    """Write the files of a run that was counted only (:meth:`Exporter.count_run`), counting nothing."""
    from osw_studio.trajectory.exporters.card import CardStats

    run = ExportRun(
        RunStore(path),
        options.scrubber,
        keep=frozenset(chosen.steps) if chosen else None,
        corrections=_corrections(chosen) if chosen and options.apply_corrections else None,
        requests=requests,
    )
    card, exporter.card = exporter.card, CardStats()
    try:
        exporter.add_run(run)
    finally:
        exporter.card = card


REPLAYABLE = frozenset({"sft-messages", "sft-sharegpt", "preference", "agentnet"})
"""Formats whose samples a replayed run repeats (the others write one file or row per run)."""


def _curate(
    run_paths: list[Path], options: ExportOptions, out: Path, summary: ExportSummary
) -> dict[Path, RunPlan]:
    """The curation plan of every run (empty when neither curation nor corrections were asked for).

    Runs that cannot be read are left to the export loop, which reports them as damaged. The
    per-task sampling weights go to ``task_weights.json`` in the export folder.
    """
    if options.curation is None and not options.apply_corrections:
        return {}
    stores = []
    for path in run_paths:
        try:
            store = RunStore(path)
            store.meta  # noqa: B018 - a run.json that cannot be read is found here
            stores.append(store)
        except StoreError:
            continue
    try:
        chosen = plan(stores, options.curation or Curation())
    except StoreError as exc:
        raise ExportError(f"cannot curate the runs: {exc.message}", where=exc.where) from None
    out.mkdir(parents=True, exist_ok=True)
    weights = {"formula": "max(1 - success rate, floor), normalised", "weights": chosen.weights}
    (out / "task_weights.json").write_text(json.dumps(weights, indent=1, sort_keys=True) + "\n")
    for why, n in chosen.dropped_steps.items():
        summary.skipped[f"steps {why}"] = summary.skipped.get(f"steps {why}", 0) + n
    return {p.run.path: p for p in chosen.runs}


def _corrections(chosen: RunPlan) -> dict[int, list[Action]]:
    review = chosen.review
    if review is None:
        return {}
    return {i: s.correction for i, s in review.steps.items() if s.label == "wrong" and s.correction}


def _any_step_matches(run: ExportRun, options: ExportOptions) -> bool:
    return any(options.filter.accepts_step(step) for step in run.steps())
