"""A task names its desktop (``"desktop": "osworld"``); ``tasks check`` runs it there or says why not.

These run without a display: where the named desktop's programs are missing, the task is skipped with the
command that installs them, and a desktop asked for with ``--desktop`` fails the check instead.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from osw_studio.core.task import Task

ROOT = Path(__file__).resolve().parents[2]
CHROME_TASK = ROOT / "tasks" / "chrome" / "open-saved-recipe.json"


def check(*args: str, path: str) -> subprocess.CompletedProcess[str]:
    """``osw-studio tasks check`` with ``PATH`` as given (the Python runs by its full path)."""
    return subprocess.run(
        [sys.executable, "-m", "osw_studio", "tasks", "check", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PATH": path},
    )


def test_a_task_names_one_of_the_known_desktops() -> None:
    data = json.loads(CHROME_TASK.read_text())
    assert Task.model_validate(data).desktop == "osworld"
    assert Task.model_validate({**data, "desktop": None}).desktop is None
    with pytest.raises(ValidationError, match="desktop"):
        Task.model_validate({**data, "desktop": "gnome"})


def test_a_task_whose_desktop_is_not_installed_is_skipped_with_the_install_command(tmp_path: Path) -> None:
    done = check(str(CHROME_TASK), path=str(tmp_path))
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("SKIP open-saved-recipe: needs the osworld desktop"), done.stdout + done.stderr
    assert "make setup-osworld" in lines[0] and "chromium" in lines[0]
    assert lines[-1] == "0 passed, 0 failed, 1 skipped"
    assert done.returncode == 0


def test_a_desktop_asked_for_by_name_must_be_installed(tmp_path: Path) -> None:
    done = check(str(CHROME_TASK), "--desktop", "osworld", path=str(tmp_path))
    assert done.returncode != 0
    assert "make setup-osworld" in done.stderr and "SKIP" not in done.stdout, done.stdout + done.stderr
