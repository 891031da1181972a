"""Copying image files into an export, in line or in worker processes while the export goes on.

Copying a screenshot is mostly the kernel's work (creating the file costs more than its bytes on a busy
file system), so a worker process can make the copies on another core while the exporter reads and writes
the next steps. A process, not a thread: each copy is five system calls, and a thread would take the
interpreter's lock back from the exporter after each one (measured: threads made the export slower than
copies in line). This module is also the worker's whole program (run as a script, standard library only):
it reads pairs of NUL-ended paths on its input and answers each empty pair with the first error or ``ok``.
:class:`FileCopier` keeps the outcome what copies made in line give: copies to one destination are made by
one worker in the order asked (the first wins, as in line), and :meth:`FileCopier.wait` returns once every
copy asked for is made, raising the first error.

Examples:
    >>> import tempfile
    >>> from pathlib import Path
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.png").write_bytes(b"first"), (folder / "b.png").write_bytes(b"second")
    >>> with FileCopier(workers=2) as copier:
    ...     copier.copy(folder / "a.png", folder / "c.png")
    ...     copier.copy(folder / "b.png", folder / "c.png")  # c.png exists by then: kept
    ...     copier.wait()
    >>> (folder / "c.png").read_bytes()
    b'first'
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import subprocess
import sys
from pathlib import Path
from types import TracebackType


def place_file(src: Path, dest: str | Path) -> None:
    """Copy ``src`` to ``dest`` (whose folder exists); an existing ``dest`` is kept.

    Never a hard link: an export is shared and edited on its own, and a change to it must not reach back
    into the run store (nor a run store's link reach a file outside it). ``src`` comes from the run
    store's checked paths; the copy follows a symlink there, as reading it would.

    The copy is the kernel's (``sendfile``, no bytes through Python) with bare descriptors: two opens,
    the copy and two closes, no status, mode or time calls. The new file's mode is ``0o644`` less the
    umask, its times those of its making, as before. A missing ``src`` leaves no ``dest`` behind.

    Args:
        src: The file to copy.
        dest: Where to put it.
    """
    fd_in = os.open(src, os.O_RDONLY | os.O_CLOEXEC)
    try:
        try:
            fd_out = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644)
        except FileExistsError:
            return  # kept, whatever it is (a dangling symlink included: O_EXCL never follows one)
        try:
            _copy_fd(fd_in, fd_out)
        finally:
            os.close(fd_out)
    finally:
        os.close(fd_in)


_CHUNK = 1 << 30


def _copy_fd(fd_in: int, fd_out: int) -> None:
    """Copy what ``fd_in`` holds from its start to ``fd_out`` (``sendfile``, else reads and writes)."""
    offset = 0
    try:
        while sent := os.sendfile(fd_out, fd_in, offset, _CHUNK):
            offset += sent
        return
    except OSError as exc:
        if offset or exc.errno not in _NO_SENDFILE:
            raise
    while data := os.read(fd_in, 1 << 20):
        view = memoryview(data)
        while view:
            view = view[os.write(fd_out, view) :]


_NO_SENDFILE = frozenset({errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSOCK, errno.EXDEV})
"""What ``sendfile`` says on a system or file system that cannot copy between these files."""


class FileCopier:
    """Makes :func:`place_file` copies, in ``workers`` processes (0: each one when asked, in line).

    Where no worker can be started (a frozen application has no interpreter to run this file with),
    copies are made in line.

    Args:
        workers: Worker processes; 0 copies in line.
    """

    def __init__(self, workers: int = 0) -> None:
        self._workers = workers if workers > 0 and _CAN_SPAWN else 0
        self._procs: list[subprocess.Popen[bytes]] = []
        self._error: OSError | None = None  # the first copy that failed

    def copy(self, src: Path, dest: str | Path) -> None:
        """Copy ``src`` to ``dest`` (whose folder exists), now or in a worker.

        Raises:
            OSError: A copy failed (this one in line, or an earlier one in a worker that
                :meth:`wait` reported), or a worker is gone.
        """
        if not self._workers:
            place_file(src, dest)
            return
        self._raise()
        if not self._procs:
            self._procs = [self._start() for _ in range(self._workers)]
        proc = self._procs[hash(os.fspath(dest)) % len(self._procs)]
        try:
            proc.stdin.write(os.fsencode(src) + b"\0" + os.fsencode(dest) + b"\0")  # type: ignore[union-attr]
        except OSError as exc:  # the worker is gone (a broken pipe)
            raise OSError(exc.errno, f"the export's copying process ended early: {exc.strerror}") from exc

    def wait(self) -> None:
        """Return once every copy asked for is made.

        Raises:
            OSError: The first copy that failed, or a worker that ended early.
        """
        for proc in self._procs:
            try:
                proc.stdin.write(b"\0\0")  # type: ignore[union-attr]
                proc.stdin.flush()  # type: ignore[union-attr]
                line = proc.stdout.readline()  # type: ignore[union-attr]
            except OSError:
                line = b""
            if self._error is None:
                self._error = _answer(line)
        self._raise()

    def close(self) -> None:
        """Stop the workers; copies not made yet are dropped (call :meth:`wait` first to keep them)."""
        procs, self._procs = self._procs, []
        for proc in procs:
            proc.kill()
            proc.wait()
            for pipe in (proc.stdin, proc.stdout):
                if pipe is not None:
                    with contextlib.suppress(OSError):  # what was still buffered for a gone worker
                        pipe.close()

    def __enter__(self) -> FileCopier:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error

    @staticmethod
    def _start() -> subprocess.Popen[bytes]:
        # -I: this file alone, no user site or environment paths; the paths go through a pipe, no shell.
        return subprocess.Popen(
            [sys.executable, "-I", "-S", __file__],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            bufsize=1 << 16,
            close_fds=True,
        )


_CAN_SPAWN = not getattr(sys, "frozen", False) and __file__.endswith(".py") and Path(__file__).is_file()
"""Whether this file can be run as a worker (not in a frozen application)."""


def _answer(line: bytes) -> OSError | None:
    """What a worker's answer line says: None for ``ok``, else the first failed copy's error."""
    if line == b"ok\n":
        return None
    if not line:
        return OSError(errno.EPIPE, "the export's copying process ended early")
    try:
        code, message, filename = json.loads(line)
    except ValueError:
        return OSError(errno.EIO, "the export's copying process gave an answer it should not")
    return OSError(code, message, filename) if isinstance(code, int) else OSError(errno.EIO, str(message))


def _serve() -> None:
    """The worker: copy each pair of paths read; answer each empty pair with the first error or ``ok``."""
    read = sys.stdin.buffer.raw.read  # type: ignore[union-attr]  # what the pipe has, at once
    out = sys.stdout.buffer
    error: bytes | None = None
    held = b""
    while chunk := read(1 << 16):
        fields = (held + chunk).split(b"\0")
        held = fields.pop()  # what follows the last NUL: the start of a path
        if len(fields) % 2:  # a pair's first path whole, its second not yet
            held = fields.pop() + b"\0" + held
        for src, dest in zip(fields[::2], fields[1::2], strict=True):
            if not src:
                out.write(error or b"ok\n")
                out.flush()
            elif error is None:
                try:
                    place_file(Path(os.fsdecode(src)), os.fsdecode(dest))
                except OSError as exc:
                    error = json.dumps([exc.errno, exc.strerror, exc.filename]).encode() + b"\n"
                except Exception as exc:  # reported, not raised: the export fails on it
                    error = json.dumps([None, f"{type(exc).__name__}: {exc}", None]).encode() + b"\n"


if __name__ == "__main__":
    _serve()
