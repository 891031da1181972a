"""Reference code in a box: how ``--evaluator osworld``'s worker runs OSWorld's metrics.

OSWorld's metric functions run guest-controlled text (``check_gnome_favorite_apps`` calls ``eval``
on a getter's output, ``check_python_file_by_test_suite`` imports the test file and, in real VS Code
tasks, the file the agent wrote). So every request is answered by a fresh worker process confined as
the local sandbox confines a guest (:class:`~osw_studio.envs.sandbox.Sandbox`), the way our own test
runner (:mod:`osw_studio.evaluation.metrics.python_suite`) is:

- a user namespace with no capabilities (also when started by root), its own PID namespace, no
  terminal, dying with its parent;
- **no network** and no host socket: a network namespace of its own, a private ``/tmp``, no
  ``/run`` and no ``/home`` of the host;
- **a throwaway HOME** (``/home/user`` on an empty tmpfs) and a clean environment (no API key of the
  user's is passed on);
- **read-only**: the system folders, the side environment's interpreter and every folder on its
  ``sys.path`` (the reference's code), the worker script, and the files the request scores (inside
  the task's cache folder only);
- **bounded**: a wall-clock limit (the process tree is killed), an address-space and a file-size
  limit, and an answer of at most :data:`MAX_ANSWER` bytes.

A fresh process per request also means one task's ``eval`` cannot change how a later task is scored.
Without bubblewrap the reference code is not run at all.
"""

from __future__ import annotations

import functools
import json
import os
import selectors
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from osw_studio.core.errors import EvaluationError
from osw_studio.envs.sandbox import SANDBOX_HOME, SYSTEM_PATHS, Sandbox

TIMEOUT = 300.0
"""Seconds one metric may take (as our own sandboxed test runner); the worker is killed after."""

MAX_MEMORY = 4 << 30
"""The worker's address-space limit in bytes (``RLIMIT_AS``)."""

MAX_FILE = 256 << 20
"""The largest file the worker may write (``RLIMIT_FSIZE``), in its private ``/tmp``."""

MAX_ANSWER = 1 << 20
"""The most the worker may print on its answer channel; more ends the request as an error."""

_BOOT = (
    "import resource, runpy, sys\n"
    "for kind, value in ((resource.RLIMIT_AS, {mem}), (resource.RLIMIT_FSIZE, {fsize})):\n"
    "    resource.setrlimit(kind, (value, value))\n"
    "sys.argv = [{worker!r}, *{args!r}]\n"
    "runpy.run_path({worker!r}, run_name='__main__')\n"
)

_PASSED_ENV = ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "TZ")
"""The host's environment variables the worker keeps (no key, token or display is passed on)."""


@functools.cache
def interpreter_paths(python: str, pythonpath: str | None) -> tuple[str, ...]:
    """The folders the interpreter ``python`` runs from: its prefixes and its ``sys.path``."""
    probe = "import json, sys; print(json.dumps([sys.prefix, sys.base_prefix, *sys.path]))"
    env = {k: v for k in _PASSED_ENV if (v := os.environ.get(k)) is not None}
    done = subprocess.run(
        [python, "-c", probe], capture_output=True, text=True, timeout=60, check=False, env=env, cwd="/"
    )
    if done.returncode != 0:
        raise EvaluationError(
            f"the OSWorld side environment's interpreter does not start (exit {done.returncode})",
            where=python,
            hint=done.stderr.strip()[-300:] or "run scripts/setup-reference.sh again",
        )
    return tuple(p for p in json.loads(done.stdout) if p and Path(p).is_absolute())


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def readonly_mounts(paths: Iterable[str]) -> list[str]:
    """``--ro-bind`` arguments showing each existing path at its own name (links resolved on the host).

    Paths the system mounts show, or inside another path of the list, are bound once.

    Examples:
        >>> readonly_mounts(["/usr/lib/python3", "/nonexistent/x"])
        []
    """
    existing = sorted(
        {p.rstrip("/") or "/" for p in paths if Path(p).exists()}, key=lambda p: (p.count("/"), p)
    )
    shown: list[str] = []
    args: list[str] = []
    for path in existing:
        if _under(path, SYSTEM_PATHS) or _under(path, shown):
            continue
        shown.append(path)
        args += ["--ro-bind", os.path.realpath(path), path]
    return args


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)


def scored_files(request: Any, root: Path | None) -> list[str]:
    """The host paths in ``request`` the worker may read: existing files and folders inside ``root``.

    Without a ``root`` (a caller that scores files of its own, such as a test), only existing regular
    files are shown. A path that leads out of ``root`` through a link is never shown.
    """
    found: list[str] = []
    real_root = os.path.realpath(root) if root is not None else None
    for text in _strings(request):
        if "\0" in text or not text.startswith("/") or len(text) > 4096:
            continue
        real = os.path.realpath(text)
        if real_root is None:
            if Path(real).is_file() and real == os.path.normpath(text):
                found.append(text)
        elif _under(real, [real_root]) and real != real_root and Path(real).exists():
            found.append(real)
    if real_root is not None and found:
        found.append(real_root)  # the task's folder: a test file imports its neighbours
    return found


@dataclass(frozen=True)
class Confined:
    """One sandboxed run of the worker script under the side environment's interpreter.

    Attributes:
        python: The side environment's interpreter.
        worker: The worker script.
        code: More host folders the reference's code lives in (an OSWorld checkout), shown read-only.
        env: More environment variables for the worker (none of the host's is passed on otherwise,
            but for :data:`_PASSED_ENV`).
        args: Arguments for the worker script (its ``sys.argv[1:]``).
    """

    python: Path
    worker: Path
    code: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    args: tuple[str, ...] = ()

    def argv(self, readable: Iterable[str], scratch: Path) -> list[str]:
        """The bwrap command line: see the module docs for what the worker sees."""
        pythonpath = os.environ.get("PYTHONPATH")
        code = interpreter_paths(str(self.python), pythonpath)
        env = {k: v for k in _PASSED_ENV if (v := os.environ.get(k)) is not None}
        env |= dict(self.env)
        env |= {"HOME": SANDBOX_HOME, "TMPDIR": "/tmp", "PYTHONDONTWRITEBYTECODE": "1"}
        boot = _BOOT.format(mem=MAX_MEMORY, fsize=MAX_FILE, worker=str(self.worker), args=list(self.args))
        python_dir = str(self.python.parent)
        return [
            "bwrap",
            *Sandbox(scratch, scratch).common(),
            "--tmpfs", "/tmp",
            "--tmpfs", "/home",
            "--dir", SANDBOX_HOME,
            *readonly_mounts([python_dir, *code, *self.code, str(self.worker), *readable]),
            "--clearenv",
            *[arg for key, value in env.items() for arg in ("--setenv", key, value)],
            "--chdir", "/tmp",
            "--",
            str(self.python), "-c", boot,
        ]  # fmt: skip

    def ask(self, request: dict[str, Any], readable: Iterable[str], *, timeout: float = TIMEOUT) -> bytes:
        """Send ``request`` to a fresh confined worker and return its answer line.

        Raises:
            EvaluationError: bubblewrap is missing, the worker took longer than ``timeout``, printed
                more than :data:`MAX_ANSWER` bytes, or ended without an answer.
        """
        if shutil.which("bwrap") is None:
            raise EvaluationError(
                "--evaluator osworld runs OSWorld's code on guest answers, and bubblewrap (bwrap) is not "
                "installed to confine it",
                where=str(self.python),
                hint="install bubblewrap (Debian: apt install bubblewrap), or score with "
                "--evaluator osw-studio",
            )
        with tempfile.TemporaryDirectory(prefix="osw-osworld-metrics-") as scratch:
            request_file = Path(scratch) / "request.json"
            request_file.write_text(json.dumps(request, default=str) + "\n", encoding="utf-8")
            with request_file.open("rb") as stdin:
                proc = subprocess.Popen(
                    self.argv(readable, Path(scratch)),
                    stdin=stdin,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.DEVNULL,
                    start_new_session=True,
                )
            try:
                answer, why = _read_bounded(proc, timeout)
            finally:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
                assert proc.stdout is not None
                proc.stdout.close()
        if why:
            raise EvaluationError(f"the OSWorld evaluator {why}", where=str(self.python))
        line = answer.split(b"\n", 1)[0]
        if not line.strip():
            raise EvaluationError(
                f"the OSWorld evaluator stopped (exit {proc.returncode}) without an answer",
                where=str(self.python),
                hint="check the side environment (scripts/setup-reference.sh); it runs with at most "
                f"{MAX_MEMORY >> 30} GiB of memory and without network",
            )
        return line


def _read_bounded(proc: subprocess.Popen[bytes], timeout: float) -> tuple[bytes, str]:
    """What ``proc`` prints until it closes its output, and why it was cut (empty if it was not)."""
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    chunks: list[bytes] = []
    size = 0
    with selectors.DefaultSelector() as selector:
        selector.register(proc.stdout, selectors.EVENT_READ)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return b"", f"took longer than {timeout:g} s and was stopped"
            if not selector.select(left):
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                return b"".join(chunks), ""
            size += len(chunk)
            if size > MAX_ANSWER:
                return b"", f"printed more than {MAX_ANSWER} bytes and was stopped"
            chunks.append(chunk)
