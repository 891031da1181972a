"""The run store writer: the crash-safe on-disk record of one episode.

The episode runner creates a :class:`RunStoreWriter` when an episode starts, calls :meth:`~RunStoreWriter.
write_step` as each step ends and :meth:`~RunStoreWriter.finish` with the result. Each step is one line
of ``steps.jsonl``, written with a single ``os.write`` and fsynced before ``write_step`` returns, so a
crash (even ``kill -9``) loses at most the step in flight and never leaves half a line behind: a failed
write is truncated back to the last whole line. ``run.json`` and ``result.json`` are written to a temporary
file and renamed into place. The layout is in :mod:`osw_studio.trajectory.layout`; the reader is
:class:`osw_studio.trajectory.store.RunStore`.
"""

from __future__ import annotations

import contextlib
import errno
import os
import platform
import sys
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from osw_studio import __version__
from osw_studio.core.errors import StoreError
from osw_studio.core.step import EpisodeResult, StepRecord
from osw_studio.core.task import Task
from osw_studio.core.unicode import well_formed, well_formed_data
from osw_studio.runner.stored_text import bounded_step, encodable_step
from osw_studio.trajectory.layout import (
    FINAL_SCREEN,
    RESULT_JSON,
    RUN_JSON,
    SCREENS,
    STEPS_JSONL,
    RunMeta,
    image_ext,
    new_run_id,
    screen_name,
    tree_name,
)
from osw_studio.trajectory.requests import RequestCompactor
from osw_studio.trajectory.scrub import Scrubber, redact_settings

_HINTS = {
    errno.ENOSPC: "free some disk space or choose another output folder",
    errno.EDQUOT: "the disk quota is used up; free some space or choose another output folder",
    errno.EFBIG: "the file size limit was reached; raise it or choose another output folder",
    errno.EACCES: "choose an output folder you can write to",
    errno.EPERM: "choose an output folder you can write to",
    errno.EROFS: "the file system is read-only; choose another output folder",
    errno.ENOTDIR: "a file stands where a folder is needed; choose another output folder",
}


def _store_error(what: str, path: Path, exc: OSError) -> StoreError:
    hint = _HINTS.get(exc.errno or 0, "check the output folder")
    return StoreError(f"cannot {what}: {exc.strerror or exc}", where=str(path), hint=hint)


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename, so readers never see half of it.

    Raises:
        StoreError: If the file cannot be written (disk full, no permission, ...).
    """
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        tmp.replace(path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise _store_error("write the file", path, exc) from exc


def versions() -> dict[str, str]:
    """Versions of what produced a run, for ``run.json``."""
    return {
        "osw_studio": __version__,
        "python": platform.python_version(),
        "platform": f"{sys.platform}-{platform.machine()}",
    }


class RunStoreWriter:
    """Writes one episode's run store under ``root/<run-id>/``.

    Use :meth:`create` to start a run. The writer is a context manager; leaving it closes the steps file
    (without a result, which marks the run as interrupted).

    Args:
        path: The run folder (created by :meth:`create`).
        meta: What ``run.json`` holds.
        scrubber: Applied to every step before it is written.
    """

    def __init__(self, path: Path, meta: RunMeta, scrubber: Scrubber) -> None:
        self.path = path
        self.meta = meta
        self._scrubber = scrubber
        self._steps_path = path / STEPS_JSONL
        self._fd: int | None = None
        self._size = 0
        self.steps_written = 0
        # Requests are stored compactly: images as references, repeated messages by reference.
        self._requests = RequestCompactor(self._write_file)

    @classmethod
    def create(
        cls,
        root: str | Path,
        task: Task,
        *,
        domain: str | None = None,
        provider: str | None = None,
        model: str | None = None,
        agent: str | None = None,
        action_space: str | None = None,
        observation_type: str | None = None,
        screen_size: tuple[int, int] | None = None,
        settings: Mapping[str, Any] | None = None,
        secrets: Iterable[str] = (),
        run_id: str | None = None,
        **extra: Any,
    ) -> RunStoreWriter:
        """Create ``root/<run-id>/`` with its ``run.json`` and an empty ``steps.jsonl``.

        Args:
            root: The runs folder (created when missing).
            task: The task being run.
            domain: The task's domain.
            provider: The provider that made the guest.
            model: The model that acts.
            agent: The agent kind.
            action_space: The action space the agent speaks.
            observation_type: What the agent sees.
            screen_size: The guest's screen size in pixels.
            settings: The settings in force; secret-named values are dropped and the rest scrubbed.
            secrets: Known secret values (API keys) that must never be written.
            run_id: The folder name (default: a fresh sortable id).
            **extra: More fields for ``run.json``.

        Raises:
            StoreError: If the folder or its files cannot be created.
        """
        scrubber = Scrubber(secrets=secrets)
        run_id = run_id or new_run_id(task.id)
        path = Path(root) / run_id
        try:
            (path / SCREENS).mkdir(parents=True, exist_ok=False)
        except OSError as exc:
            raise _store_error("create the run folder", path, exc) from exc
        width, height = screen_size or (None, None)
        meta = RunMeta(
            run_id=run_id,
            task_id=task.id,
            domain=domain,
            instruction=task.instruction,
            task=task.dump(),
            provider=provider,
            model=model,
            agent=agent,
            action_space=action_space,
            observation_type=observation_type,
            screen_width=width,
            screen_height=height,
            settings=redact_settings(dict(settings or {})),
            versions=versions(),
            **extra,
        )
        meta = RunMeta.model_validate(scrubber.data(meta.model_dump(mode="json")))
        writer = cls(path, meta, scrubber)
        writer._write_meta()
        try:
            writer._fd = os.open(writer._steps_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        except OSError as exc:
            raise _store_error("create the steps file", writer._steps_path, exc) from exc
        return writer

    @property
    def run_id(self) -> str:
        """The run folder's name."""
        return self.path.name

    def _write_meta(self) -> None:
        write_atomic(self.path / RUN_JSON, self.meta.model_dump_json(indent=2).encode())

    def write_step(
        self,
        step: StepRecord,
        screenshot: bytes | None = None,
        *,
        image_format: str = "png",
        accessibility_tree: str | None = None,
    ) -> StepRecord:
        """Record one finished step: its screen, its accessibility tree, then its line in ``steps.jsonl``.

        The line is on disk (fsynced) when this returns.

        Args:
            step: The step; ``screenshot`` and ``accessibility_tree`` are set to the saved file names,
                and its model request (images as data URLs) is stored in its compact form.
            screenshot: The encoded screen the step acted on.
            image_format: ``png`` or ``jpeg``.
            accessibility_tree: The accessibility XML, when it was captured.

        Returns:
            The step as written (scrubbed, with file names filled in).

        Raises:
            StoreError: If the store cannot be written; the steps file is left as it was before the call.
        """
        if self._fd is None:
            raise StoreError("the run store is closed", where=str(self.path), hint="start a new run")
        updates: dict[str, Any] = {}
        if screenshot is not None:
            updates["screenshot"] = self._write_file(screen_name(step.index, image_format), screenshot)
        if accessibility_tree is not None:
            updates["accessibility_tree"] = self._write_file(
                tree_name(step.index), well_formed(accessibility_tree).encode()
            )
        if step.request is not None:
            updates["request"] = self._requests.compact(
                step.request, step.index, updates.get("screenshot"), screenshot
            )
        if step.finished_at is None:
            updates["finished_at"] = time.time()
        record = self._scrubber.step(bounded_step(step.model_copy(update=updates)))
        try:
            line = record.model_dump_json(exclude_none=True)
        except (ValueError, UnicodeError):  # a lone surrogate somewhere in the step: made U+FFFD
            record = encodable_step(record)
            line = record.model_dump_json(exclude_none=True)
        self._append_line((line + "\n").encode())
        self.steps_written += 1
        return record

    def _write_file(self, name: str, data: bytes) -> str:
        path = self.path / SCREENS / name
        try:
            with open(path, "wb") as f:
                f.write(data)
        except OSError as exc:
            raise _store_error("save the screen", path, exc) from exc
        return name

    def _append_line(self, data: bytes) -> None:
        assert self._fd is not None
        before = self._size
        try:
            written = os.write(self._fd, data)
            while written < len(data):
                # A short write: go on, so the next call reports the real reason (ENOSPC, EFBIG, ...).
                more = os.write(self._fd, data[written:])
                if more == 0:
                    raise OSError(errno.ENOSPC, "only part of the step could be written")
                written += more
            os.fsync(self._fd)
        except OSError as exc:
            # Put the file back to its last whole line, so the store never holds a torn record.
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, before)
            raise _store_error("append the step", self._steps_path, exc) from exc
        self._size = before + written

    def write_final_screen(self, screenshot: bytes, image_format: str = "png") -> str:
        """Save the screen as it was when the episode ended (``screens/final.png``)."""
        return self._write_file(f"{FINAL_SCREEN}.{image_ext(image_format)}", screenshot)

    def finish(self, result: EpisodeResult) -> None:
        """Write ``result.json`` (atomically), stamp ``finished_at`` in ``run.json`` and close the store.

        Raises:
            StoreError: If the files cannot be written.
        """
        clean = EpisodeResult.model_validate(
            self._scrubber.data(well_formed_data(result.model_dump(mode="json")))
        )
        write_atomic(self.path / RESULT_JSON, clean.model_dump_json(indent=2).encode())
        spent = {"usage": clean.usage.model_dump() if clean.usage else None, "cost": clean.cost}
        self.meta = self.meta.model_copy(update={"finished_at": time.time(), **spent})
        self._write_meta()
        self.close()

    def close(self) -> None:
        """Close the steps file. Without :meth:`finish` first, the run reads as interrupted."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
