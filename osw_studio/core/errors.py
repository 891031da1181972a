"""The one exception tree of OSW Studio.

Every error a user can cause is an :class:`OswError` that says what went wrong, where (a file and JSON
path, a step number, a URL) and what to do about it, so that the CLI and the UI can show it as one
readable message instead of a traceback::

    OswError
    ├── TaskError          a task file or index is unreadable or invalid
    ├── ActionParseError   a model reply could not be turned into actions
    ├── GuestError         the guest (its server, display or process) failed
    ├── ModelError         the model endpoint failed or answered nonsense
    ├── EvaluationError    a task cannot be scored (unknown metric or getter, broken evaluator)
    ├── SettingsError      settings or secrets are missing or invalid
    ├── StoreError         a run store cannot be written (disk full, no permission) or read
    └── ExportError        run stores cannot be converted

Examples:
    >>> err = TaskError("missing field 'instruction'", where="task.json: $.instruction")
    >>> str(err)
    "task.json: $.instruction: missing field 'instruction'"
    >>> isinstance(err, OswError)
    True
"""

from __future__ import annotations


class OswError(Exception):
    """Root of every error OSW Studio raises on purpose.

    Args:
        message: What went wrong, in one sentence.
        where: Where it went wrong: a file with a JSON path, a step number, a URL.
        hint: What the user can do about it.
    """

    def __init__(self, message: str, *, where: str | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.where = where
        self.hint = hint

    def __str__(self) -> str:
        text = f"{self.where}: {self.message}" if self.where else self.message
        if self.hint:
            text += f" ({self.hint})"
        return text


class TaskError(OswError):
    """A task file, folder or index is unreadable or does not describe a valid task."""


class ActionParseError(OswError):
    """A model reply could not be turned into actions."""


class GuestError(OswError):
    """The guest server, its display or one of its processes failed.

    Args:
        status: The HTTP status the guest server answered with, when it answered at all.
    """

    def __init__(
        self, message: str, *, where: str | None = None, hint: str | None = None, status: int | None = None
    ) -> None:
        super().__init__(message, where=where, hint=hint)
        self.status = status


class ModelError(OswError):
    """The model endpoint failed, timed out, or replied with something unusable."""


class EvaluationError(OswError):
    """A task cannot be scored: an unknown func or getter, or a broken evaluator spec."""


class SettingsError(OswError):
    """Settings or secrets are missing, unreadable or invalid."""


class StoreError(OswError):
    """A run store cannot be written (disk full, no permission) or read (missing or corrupt files)."""


class ExportError(OswError):
    """Run stores cannot be converted to the requested format."""
