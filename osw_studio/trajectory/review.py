"""The review log of a run: ``review.jsonl`` beside ``steps.jsonl``, one :class:`ReviewEvent` a line.

It is append-only (a judgement taken back is a new ``clear`` event), flushed and fsynced per event, and
read tolerantly: a torn last line (the process died while writing it) is skipped, a damaged line is
reported with its number. The file is opened without following links, so a run folder that holds a link
named ``review.jsonl`` cannot make a review write elsewhere.
"""

from __future__ import annotations

import getpass
import os
import stat
from pathlib import Path

from pydantic import ValidationError

from osw_studio.core.errors import StoreError
from osw_studio.core.review import ReviewEvent, RunReview, consensus, fold

REVIEW_JSONL = "review.jsonl"


def default_reviewer() -> str:
    """Who is reviewing: ``$OSW_REVIEWER``, else the login name."""
    name = os.environ.get("OSW_REVIEWER", "").strip()
    if name:
        return name
    try:
        return getpass.getuser() or "reviewer"
    except (KeyError, OSError):
        return "reviewer"


class ReviewLog:
    """The review log of one run folder.

    Args:
        run_path: The run folder.
    """

    def __init__(self, run_path: str | Path) -> None:
        self.path = Path(run_path) / REVIEW_JSONL

    def append(self, event: ReviewEvent) -> None:
        """Write one event and make it durable before returning.

        Raises:
            StoreError: If the log cannot be written (or is a link).
        """
        line = event.model_dump_json(exclude_defaults=False) + "\n"
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
        try:
            fd = os.open(self.path, flags, 0o644)
        except OSError as exc:
            raise StoreError(f"cannot write the review: {exc.strerror}", where=str(self.path)) from None
        try:
            self._regular(fd)
            os.write(fd, line.encode())
            os.fsync(fd)
        except OSError as exc:
            raise StoreError(f"cannot write the review: {exc.strerror}", where=str(self.path)) from None
        finally:
            os.close(fd)

    def _regular(self, fd: int) -> None:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise StoreError(
                "the review log is not a regular file",
                where=str(self.path),
                hint="remove it (a FIFO, device or folder) and review again",
            )

    def events(self) -> list[ReviewEvent]:
        """Every whole event, in the order written.

        Raises:
            StoreError: If a line other than a torn last one is not an event.
        """
        try:
            # O_NONBLOCK: a FIFO in its place must not hold the read until some writer comes.
            fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
        except FileNotFoundError:
            return []
        except OSError as exc:
            raise StoreError(f"cannot read the review: {exc.strerror}", where=str(self.path)) from None
        try:
            self._regular(fd)
        except StoreError:
            os.close(fd)
            raise
        with os.fdopen(fd, "rb") as fh:
            lines = fh.read().split(b"\n")
        events = []
        last = len(lines) - 1  # after the final newline: empty, or a torn line
        for number, raw in enumerate(lines, start=1):
            if not raw.strip():
                continue
            try:
                events.append(ReviewEvent.model_validate_json(raw))
            except ValidationError:
                if number - 1 == last:
                    break  # torn: the writer died mid-line
                raise StoreError(
                    f"line {number} is not a review event",
                    where=f"{self.path}:{number}",
                    hint="the review log was edited or damaged; remove the line to read the rest",
                ) from None
        return events

    def reviews(self) -> dict[str, RunReview]:
        """Each reviewer's current review."""
        return fold(self.events())

    def consensus(self) -> RunReview | None:
        """One review for all reviewers (the latest word on each thing), or ``None`` if unreviewed."""
        reviews = self.reviews()
        return consensus(reviews) if reviews else None
