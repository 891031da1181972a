"""Copying image files into an export, in line or on worker threads while the export goes on.

Copying a screenshot is mostly the kernel's work (creating the file costs more than its bytes on a busy
file system), so worker threads can make the copies while the exporter reads and writes the next steps.
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

import errno
import os
import queue
import threading
from pathlib import Path
from types import TracebackType

_Job = tuple[Path, "str | Path"] | None


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
    """Makes :func:`place_file` copies, on ``workers`` threads (0: each one when asked).

    Args:
        workers: Worker threads; 0 copies in line.
        backlog: Copies each worker may have waiting before :meth:`copy` blocks (bounds memory).
    """

    def __init__(self, workers: int = 0, backlog: int = 64) -> None:
        self._queues: list[queue.Queue[_Job]] = [queue.Queue(maxsize=backlog) for _ in range(workers)]
        self._threads: list[threading.Thread] = []
        self._error: BaseException | None = None  # the first copy that failed
        self._dropping = False

    def copy(self, src: Path, dest: str | Path) -> None:
        """Copy ``src`` to ``dest`` (whose folder exists), now or on a worker.

        Raises:
            OSError: A copy failed (this one in line, or an earlier one on a worker).
        """
        if not self._queues:
            place_file(src, dest)
            return
        self._raise()
        if not self._threads:
            for q in self._queues:
                thread = threading.Thread(target=self._work, args=(q,), name="export-copies", daemon=True)
                thread.start()
                self._threads.append(thread)
        self._queues[hash(os.fspath(dest)) % len(self._queues)].put((src, dest))

    def wait(self) -> None:
        """Return once every copy asked for is made.

        Raises:
            OSError: The first copy that failed.
        """
        for q in self._queues:
            q.join()
        self._raise()

    def close(self) -> None:
        """Stop the workers; copies not made yet are dropped (call :meth:`wait` first to keep them)."""
        self._dropping = True
        for q in self._queues[: len(self._threads)]:
            q.put(None)
        for thread in self._threads:
            thread.join()
        self._threads = []
        self._dropping = False

    def __enter__(self) -> FileCopier:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    def _raise(self) -> None:
        if self._error is not None:
            raise self._error

    def _work(self, jobs: queue.Queue[_Job]) -> None:
        while True:
            job = jobs.get()
            try:
                if job is None:
                    return
                if self._error is None and not self._dropping:
                    place_file(job[0], job[1])
            except BaseException as exc:  # kept for wait(): the worker must go on emptying its queue
                if self._error is None:
                    self._error = exc
            finally:
                jobs.task_done()
