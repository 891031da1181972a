r"""One writer per results folder: ``eval run`` holds ``OUT/.osw-run.lock`` while it runs.

Two runs writing one ``--out`` would interleave their summaries and resume state. The lock file holds
the holder's PID; a second run that finds a living holder stops with an error naming it, and a lock
left by a process that died (kill -9, a crash, a reboot) is taken over.

Examples:
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> with OutLock(folder):
    ...     (folder / LOCK_NAME).read_text() == f"{os.getpid()}\n"
    True
    >>> (folder / LOCK_NAME).exists()
    False
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from types import TracebackType

from osw_studio.core.errors import OswError

LOCK_NAME = ".osw-run.lock"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's living process
    except OverflowError:
        return False
    return True


def _holder(path: Path) -> int | None:
    """The PID in the lock file, or ``None`` if it holds none (torn, garbage, not a file)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        text = fh.read(32).strip()
    return int(text) if text.isdigit() and len(text) < 10 else None


class OutLock:
    """Holds the lock on a results folder (a context manager).

    Raises:
        OswError: On entry, if a living process holds the folder, or the lock cannot be written.
    """

    def __init__(self, folder: Path) -> None:
        self.path = Path(folder) / LOCK_NAME
        self._held = False

    def __enter__(self) -> OutLock:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        mine = f"{os.getpid()}\n".encode()
        for _ in range(3):
            try:
                fd = os.open(
                    self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644
                )
            except FileExistsError:
                holder = _holder(self.path)
                if holder is not None and _alive(holder):
                    raise OswError(
                        f"another run (PID {holder}) is writing to this folder",
                        where=str(self.path.parent),
                        hint="wait for it to end, or pass another --out",
                    ) from None
                # Left by a process that is gone: take it over (one taker wins the O_EXCL race).
                with contextlib.suppress(FileNotFoundError):
                    self.path.unlink()
                continue
            except OSError as exc:
                raise OswError(
                    f"cannot lock the results folder: {exc.strerror}", where=str(self.path)
                ) from None
            try:
                os.write(fd, mine)
            finally:
                os.close(fd)
            self._held = True
            return self
        raise OswError(
            "cannot lock the results folder: another run keeps taking it",
            where=str(self.path.parent),
            hint="pass another --out",
        )

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._held and _holder(self.path) == os.getpid():
            with contextlib.suppress(OSError):
                self.path.unlink()
        self._held = False
