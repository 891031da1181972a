"""Commands run in the guest: OSWorld's ``/execute`` and ``/setup/launch`` semantics, and screen recording.

Children get the server's environment with ``DISPLAY`` set and the server's own Python first on
``PATH``, so ``python -c "import pyautogui; ..."`` from OSWorld host code finds pyautogui. Launched
apps stay in the server's process group, so whoever started the server can stop them with it.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

DEFAULT_TIMEOUT_S = 120.0


def child_env() -> dict[str, str]:
    """The environment for commands run in the guest."""
    env = dict(os.environ)
    bin_dir = str(Path(sys.executable).parent)
    parts = env.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(os.pathsep)
    if bin_dir not in parts:
        env["PATH"] = os.pathsep.join([bin_dir, *parts])
    return env


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


def run_command(command: str | list[str], shell: bool, timeout: float | None = None) -> dict[str, Any]:
    """Run a command to completion: OSWorld's ``{status, output, error, returncode}``.

    Raises:
        ValueError: If the command is malformed (see :func:`normalize_command`).
    """
    normalized = normalize_command(command, shell)
    try:
        result = subprocess.run(
            normalized,
            shell=shell,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout or DEFAULT_TIMEOUT_S,
            env=child_env(),
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired as exc:
        return {
            "status": "error",
            "output": _text(exc.stdout),
            "error": f"timed out after {exc.timeout:g} s",
            "returncode": -1,
        }
    except OSError as exc:
        return {"status": "error", "output": "", "error": str(exc), "returncode": -1}
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
        return child.pid


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
