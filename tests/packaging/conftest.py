"""Helpers for packaging tests: run a built program the way a user would, with a throwaway home."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def user_env(home: Path, **extra: str) -> dict[str, str]:
    """A user's environment with HOME and the XDG folders in ``home``, so nothing real is touched."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VIRTUAL_ENV", "PYTHON"))}
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_CACHE_HOME=str(home / ".cache"),
        QT_QPA_PLATFORM="offscreen",
        OSW_STUDIO_NO_ENV="1",  # the window only: no local sandbox desktop
        PIP_CACHE_DIR=os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip")),
    )
    env.update(extra)
    return env


def run(
    argv: list[str | Path], env: dict[str, str], timeout: float = 120, cwd: Path = ROOT
) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` (from the repository root by default) and capture its output as text."""
    return subprocess.run(
        [str(a) for a in argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout
    )


def opens_and_closes_window(program: list[str | Path], home: Path) -> None:
    """The app opens its window offscreen, closes it after half a second and exits cleanly."""
    result = run(program, user_env(home, OSW_STUDIO_EXIT_AFTER_MS="500"), timeout=60)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    log = (home / ".local" / "state" / "osw-studio" / "log" / "osw-studio.log").read_text()
    assert "window shown" in log
    assert " ERROR " not in log, log
