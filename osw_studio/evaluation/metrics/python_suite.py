"""``check_python_file_by_test_suite``: the task's own test function, run on the files the agent wrote.

The test file comes with the task (downloaded, so untrusted): it runs in a separate Python inside
bubblewrap, as the local sandbox confines a guest: only the system folders shown, read-only, a
private ``/tmp``, no capabilities, no network and no other process in sight, and only its own folder
(the task's cache folder, which also holds the fetched result files) writable. Without bubblewrap the
metric refuses to run it rather than run it unconfined. The score follows OSWorld's: the test
function's ``True``/``False`` as 1/0, a number clamped to [0, 1], anything else by its truth; a test
file that does not load, lacks the function or raises scores 0.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Any

from osw_studio.core.errors import EvaluationError
from osw_studio.envs.sandbox import Sandbox, keep_mounts
from osw_studio.evaluation.registry import metric

TIMEOUT = 300.0
"""Seconds the test function may run; a test that takes longer scores 0."""

_MARK = "OSW-TEST-SCORE "

_RUNNER = r"""
import importlib.util, json, os, sys
path, name = sys.argv[1], sys.argv[2]
def score():
    sys.path.insert(0, os.path.dirname(path))
    try:
        spec = importlib.util.spec_from_file_location("osw_task_test_suite", path)
        module = importlib.util.module_from_spec(spec)
        sys.modules["osw_task_test_suite"] = module
        spec.loader.exec_module(module)
        test = getattr(module, name, None)
        if not callable(test):
            return 0.0
        result = test()
    except BaseException:
        return 0.0
    if isinstance(result, bool):
        return 1.0 if result else 0.0
    if isinstance(result, (int, float)):
        return max(0.0, min(1.0, float(result)))
    try:
        return 1.0 if result else 0.0
    except BaseException:
        return 0.0
value = score()
sys.stdout.flush()
os.write(1, ("\n" + MARK + json.dumps(value) + "\n").encode())
""".replace("MARK", repr(_MARK))


def sandboxed(folder: Path, argv: list[str]) -> list[str]:
    """``argv`` inside bubblewrap with only ``folder`` writable (see the module docs).

    The confinement is the local sandbox's (:class:`~osw_studio.envs.sandbox.Sandbox`): a user namespace
    with no capabilities (also when run as root), no network, only the system folders and this Python
    shown, read-only.
    """
    keep = tuple(p for p in (Path(sys.prefix), Path(sys.base_prefix)) if p.exists())
    return [
        "bwrap",
        *Sandbox(folder, folder, keep).common(),
        "--tmpfs", "/tmp",
        *keep_mounts(keep),
        "--bind", str(folder), str(folder),
        "--chdir", str(folder),
        "--",
        *argv,
    ]  # fmt: skip


@metric("check_python_file_by_test_suite")
def check_python_file_by_test_suite(actual_files: Any, test_file: str | None, **options: Any) -> float:
    """Run the task's test function (``test_function_name``, default ``test``) from ``test_file``.

    Raises:
        EvaluationError: bubblewrap is not installed (the task's code is never run unconfined).
    """
    if not test_file:
        return 0.0
    path = Path(test_file).resolve()
    if not path.is_file():
        return 0.0
    if shutil.which("bwrap") is None:
        raise EvaluationError(
            "this task scores by running its own test code, and bubblewrap (bwrap) is not installed to "
            "confine it",
            where=str(path),
            hint="install bubblewrap (Debian: apt install bubblewrap)",
        )
    name = str(options.get("test_function_name", "test"))
    argv = sandboxed(path.parent, [sys.executable, "-I", "-c", _RUNNER, str(path), name])
    done = run_tail(argv, TIMEOUT)
    if done is None:
        return 0.0
    returncode, stdout, stderr = done
    for line in reversed(stdout.decode("utf-8", "replace").splitlines()):
        if line.startswith(_MARK):
            return float(json.loads(line[len(_MARK) :]))
    raise EvaluationError(
        f"the task's test code ended without a score (exit {returncode})",
        where=str(path),
        hint=stderr.decode("utf-8", "replace").strip()[-300:] or "run it by hand to see why",
    )


KEEP_OUTPUT = 64 * 1024
"""Bytes kept of each of the test's output streams: their ends (the score is written last)."""


def run_tail(argv: list[str], timeout: float, keep: int = KEEP_OUTPUT) -> tuple[int, bytes, bytes] | None:
    r"""Run ``argv``; ``(exit status, last bytes of stdout, last bytes of stderr)``, or None on timeout.

    The streams are read as they come and only their last ``keep`` bytes kept: a test that prints
    gigabytes costs no memory here.

    >>> run_tail([sys.executable, "-c", "print('x' * 100000); print('end')"], 10, keep=8)[1]
    b'xxx\nend\n'
    """
    process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    tails = [bytearray(), bytearray()]

    def drain(stream: IO[bytes], tail: bytearray) -> None:
        while chunk := os.read(stream.fileno(), 1 << 16):
            tail += chunk
            if len(tail) > 2 * keep:
                del tail[:-keep]

    assert process.stdout is not None and process.stderr is not None
    readers = [
        threading.Thread(target=drain, args=(stream, tail), daemon=True)
        for stream, tail in zip((process.stdout, process.stderr), tails, strict=True)
    ]
    for reader in readers:
        reader.start()
    try:
        returncode = process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return None
    finally:
        for reader in readers:
            reader.join(5)
        process.stdout.close()
        process.stderr.close()
    return returncode, bytes(tails[0][-keep:]), bytes(tails[1][-keep:])
