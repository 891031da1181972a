"""Commands run in the guest: OSWorld's ``/execute`` and ``/setup/launch`` semantics, and screen recording.

Children run as on an OSWorld VM: ``python3``, ``python`` and ``pip`` are the system's (so ``import gi``
works), not the server's own virtual environment. OSWorld's host code runs ``python -c "import
pyautogui; ..."``, so when the system Python has no pyautogui of its own and is the same version as the
server's, a private folder on ``PYTHONPATH`` lends it the server's pyautogui and what it imports. The
server's token is not in their environment (:func:`osw_studio.guest.serve.serve` removes it).

What a command prints is kept up to :data:`MAX_OUTPUT` bytes per stream; the rest is read and dropped,
with a note, so a command that prints gigabytes cannot exhaust the server's memory. Launched apps stay
in the server's process group, so whoever started the server can stop them with it.
"""

from __future__ import annotations

import atexit
import importlib.util
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import IO, Any

DEFAULT_TIMEOUT_S = 120.0

MAX_OUTPUT = 16 << 20
"""The most bytes of one output stream (stdout or stderr) a command result holds: 16 MiB."""

SYSTEM_PYTHON = "/usr/bin/python3"

PYAUTOGUI_MODULES = (
    "pyautogui",
    "pymsgbox",
    "pytweening",
    "pyscreeze",
    "pygetwindow",
    "pyrect",
    "mouseinfo",
    "pyperclip",
    "Xlib",
    "PIL",
    "six",
)
"""pyautogui and the top-level modules it imports on Linux."""


@cache
def _system_python_version() -> str | None:
    try:
        result = subprocess.run(
            [SYSTEM_PYTHON, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return result.stdout.strip() or None


@cache
def _system_has_pyautogui() -> bool:
    try:
        result = subprocess.run(
            [SYSTEM_PYTHON, "-c", "import importlib.util as u; exit(u.find_spec('pyautogui') is None)"],
            capture_output=True,
            timeout=20,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0


@dataclass(frozen=True)
class _PythonShim:
    bin_dir: Path | None
    """Holds ``python``, ``python3`` (and ``pip``) naming the system's; first on PATH."""
    lib_dir: Path | None
    """The server's pyautogui and its imports, lent to the system Python; on PYTHONPATH."""


@cache
def _python_shim() -> _PythonShim:
    """Make (once) the folders that let the system Python stand in for an OSWorld VM's."""
    if not Path(SYSTEM_PYTHON).exists():  # no system Python: the server's own is the best there is
        return _PythonShim(Path(sys.executable).parent, None)
    top = Path(tempfile.mkdtemp(prefix="osw-guest-python-"))
    atexit.register(shutil.rmtree, top, True)
    # The system's Python under the names OSWorld's host code uses, ahead of any other on PATH
    # (pyenv's shims, a virtual environment's bin): `python -c ...` is how it runs pyautogui code.
    bin_dir = top / "bin"
    bin_dir.mkdir()
    for name in ("python", "python3"):
        (bin_dir / name).symlink_to(SYSTEM_PYTHON)
    for name in ("pip", "pip3"):
        if Path("/usr/bin/pip3").exists():
            (bin_dir / name).symlink_to("/usr/bin/pip3")
    lib_dir: Path | None = None
    ours = f"{sys.version_info[0]}.{sys.version_info[1]}"
    if not _system_has_pyautogui() and _system_python_version() == ours:
        lib_dir = top / "lib"
        lib_dir.mkdir()
        for name in PYAUTOGUI_MODULES:
            spec = importlib.util.find_spec(name)
            if spec is None or not spec.origin:
                continue
            origin = Path(spec.origin)
            source = origin.parent if spec.submodule_search_locations else origin
            if source.exists():  # not inside a frozen app's archive
                (lib_dir / source.name).symlink_to(source)
    return _PythonShim(bin_dir, lib_dir)


def _system_path() -> str:
    """``$PATH`` without the server's own virtual environment."""
    ours = str(Path(sys.executable).parent)
    parts = os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(os.pathsep)
    return os.pathsep.join(part for part in parts if part and part != ours)


def child_env() -> dict[str, str]:
    """The environment for commands run in the guest (see the module's description)."""
    env = dict(os.environ)
    for name in ("VIRTUAL_ENV", "PYTHONHOME", "OSW_GUEST_TOKEN"):
        env.pop(name, None)
    shim = _python_shim()
    path = _system_path()
    env["PATH"] = os.pathsep.join([str(shim.bin_dir), path]) if shim.bin_dir else path
    if shim.lib_dir is not None:
        inherited = env.get("PYTHONPATH")
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(shim.lib_dir), inherited]))
    return env


def python_command() -> str:
    """The Python that ``/run_python`` runs code with: the system's, as OSWorld's server does."""
    return SYSTEM_PYTHON if Path(SYSTEM_PYTHON).exists() else sys.executable


def normalize_command(command: str | list[str], shell: bool) -> str | list[str]:
    """OSWorld's rules: a string without ``shell`` is split like a shell would; ``~/`` args expand.

    Examples:
        >>> normalize_command("echo 'a b'", False)
        ['echo', 'a b']
        >>> normalize_command("echo $HOME", True)
        'echo $HOME'
        >>> normalize_command("echo 'a b", False)
        Traceback (most recent call last):
        ...
        ValueError: No closing quotation

    Raises:
        ValueError: If the command is empty, holds a NUL byte, or has unbalanced quotes.
    """
    parts = [command] if isinstance(command, str) else command
    if any("\0" in part for part in parts):
        raise ValueError("the command holds a NUL byte")
    if isinstance(command, str):
        if shell:
            if not command.strip():
                raise ValueError("the command is empty")
            return command
        command = shlex.split(command)
    if not command:
        raise ValueError("the command is empty")
    return [str(Path(arg).expanduser()) if arg.startswith("~/") else arg for arg in command]


@dataclass(frozen=True)
class Completed:
    """A finished (or timed-out) command: its output as text, each stream capped at :data:`MAX_OUTPUT`."""

    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False


class _Capped:
    """Reads a pipe to its end in a thread, keeping the first ``limit`` bytes.

    The thread owns the pipe and closes it at its end: a program the command started in the
    background (``xclip -i`` keeping the selection) may hold the pipe open long after the command
    ended, and the result must not wait for it.
    """

    def __init__(self, pipe: IO[bytes], limit: int) -> None:
        self._fd = pipe.fileno()
        self._pipe = pipe
        self._limit = limit
        self._kept = bytearray()
        self._lock = threading.Lock()
        self.dropped = 0
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            while chunk := os.read(self._fd, 1 << 16):
                with self._lock:
                    room = self._limit - len(self._kept)
                    self._kept += chunk[: max(0, room)]
                    self.dropped += max(0, len(chunk) - max(0, room))
        except OSError:
            pass
        finally:
            self._pipe.close()

    def text(self, wait: float) -> str:
        """What was read (joined for up to ``wait`` seconds), decoded like ``text=True`` would."""
        self._thread.join(wait)
        with self._lock:
            kept, dropped = bytes(self._kept), self.dropped
        text = kept.decode(errors="replace").replace("\r\n", "\n").replace("\r", "\n")
        if dropped:
            text += f"\n[osw-studio: {dropped} more bytes of output dropped]"
        return text


def run_capped(
    argv: str | list[str],
    *,
    shell: bool = False,
    timeout: float = DEFAULT_TIMEOUT_S,
    cwd: Path | None = None,
    merge_stderr: bool = False,
) -> Completed:
    """Run a command to completion (or ``timeout``), keeping at most :data:`MAX_OUTPUT` of each stream.

    Raises:
        OSError: If the program cannot be started.
    """
    child = subprocess.Popen(
        argv,
        shell=shell,
        cwd=cwd,
        env=child_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE,
    )
    assert child.stdout is not None
    out = _Capped(child.stdout, MAX_OUTPUT)
    err = _Capped(child.stderr, MAX_OUTPUT) if child.stderr is not None else None
    timed_out = False
    try:
        child.wait(timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        child.kill()
        child.wait()
    # A program left running in the background may keep the pipes open: wait a little, never forever.
    deadline = time.monotonic() + 1.0
    stdout = out.text(1.0)
    stderr = err.text(max(0.0, deadline - time.monotonic())) if err is not None else ""
    return Completed(child.returncode, stdout, stderr, timed_out)


def run_command(command: str | list[str], shell: bool, timeout: float | None = None) -> dict[str, Any]:
    """Run a command to completion: OSWorld's ``{status, output, error, returncode}``.

    A command that cannot start or times out is ``status: error`` with OSWorld's ``message`` too.

    Raises:
        ValueError: If the command is malformed (see :func:`normalize_command`).
    """
    normalized = normalize_command(command, shell)
    limit = timeout or DEFAULT_TIMEOUT_S
    try:
        result = run_capped(normalized, shell=shell, timeout=limit)
    except OSError as exc:
        return {"status": "error", "message": str(exc), "output": "", "error": str(exc), "returncode": -1}
    if result.timed_out:
        message = f"Command {normalized!r} timed out after {limit:g} seconds"
        return {
            "status": "error",
            "message": message,
            "output": result.stdout,
            "error": result.stderr or message,
            "returncode": -1,
        }
    return {
        "status": "success",
        "output": result.stdout,
        "error": result.stderr,
        "returncode": result.returncode,
    }


def _text(data: bytes | str | None) -> str:
    if data is None:
        return ""
    return data.decode(errors="replace") if isinstance(data, bytes) else data


class Launcher:
    """Starts apps in the background and reaps them when they exit (no zombies)."""

    def __init__(self) -> None:
        self._children: list[subprocess.Popen[bytes]] = []
        self._started: dict[int, tuple[subprocess.Popen[bytes], float]] = {}
        self._lock = threading.Lock()

    def launch(self, command: str | list[str], shell: bool) -> int:
        """Start ``command`` without waiting; returns its PID.

        Raises:
            OSError: If the program cannot be started (not found, not executable).
            ValueError: If the command is malformed (see :func:`normalize_command`).
        """
        child = subprocess.Popen(
            normalize_command(command, shell),
            shell=shell,
            env=child_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        with self._lock:
            self._children = [c for c in self._children if c.poll() is None]
            self._children.append(child)
            self._started[child.pid] = (child, time.monotonic())
            while len(self._started) > 256:  # the oldest launches are long settled
                del self._started[next(iter(self._started))]
        return child.pid

    def started(self, pid: int) -> tuple[subprocess.Popen[bytes], float] | None:
        """The child :meth:`launch` started as ``pid`` and when (``time.monotonic``), if it did."""
        with self._lock:
            return self._started.get(pid)


class Recorder:
    """Records the screen to an MP4 with ffmpeg's x11grab (OSWorld's ``/start_recording``)."""

    def __init__(self, display_name: str, size: tuple[int, int]) -> None:
        self._display_name = display_name
        self._size = size
        self._process: subprocess.Popen[bytes] | None = None
        self._path = Path(tempfile.gettempdir()) / f"osw-recording-{os.getpid()}.mp4"

    @staticmethod
    def available() -> bool:
        """Whether ffmpeg is installed."""
        return shutil.which("ffmpeg") is not None

    @property
    def recording(self) -> bool:
        """Whether a recording is in progress."""
        return self._process is not None and self._process.poll() is None

    def start(self) -> None:
        """Start recording.

        Raises:
            RuntimeError: If a recording is already running or ffmpeg exits at once.
        """
        if self.recording:
            raise RuntimeError("a recording is already in progress")
        self._path.unlink(missing_ok=True)
        width, height = self._size
        command = ["ffmpeg", "-y", "-loglevel", "error", "-f", "x11grab", "-draw_mouse", "1"]
        command += ["-video_size", f"{width}x{height}", "-framerate", "25", "-i", self._display_name]
        command += ["-c:v", "libx264", "-preset", "ultrafast", "-pix_fmt", "yuv420p", str(self._path)]
        self._process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        try:
            self._process.wait(timeout=0.5)
        except subprocess.TimeoutExpired:
            return
        error = _text(self._process.stderr.read() if self._process.stderr else b"")
        self._process = None
        raise RuntimeError(f"ffmpeg exited at once: {error.strip()}")

    def stop(self) -> Path:
        """Stop recording and return the MP4 file.

        Raises:
            RuntimeError: If no recording runs or ffmpeg wrote nothing.
        """
        process, self._process = self._process, None
        if process is None or process.poll() is not None:
            raise RuntimeError("no recording in progress")
        process.send_signal(signal.SIGINT)  # lets ffmpeg finish the MP4 index
        try:
            _, error = process.communicate(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            _, error = process.communicate()
        if not self._path.exists() or self._path.stat().st_size == 0:
            raise RuntimeError(f"the recording is empty: {_text(error).strip()}")
        return self._path

    def close(self) -> None:
        """Stop ffmpeg if it still runs."""
        if self.recording and self._process is not None:
            self._process.kill()
            self._process.wait()
