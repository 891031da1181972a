"""OSWorld's own task files on the OSWorld desktop (``--desktop osworld``): a sample CI runs.

``osw-studio tasks check`` runs each task's setup on a fresh local sandbox and scores the untouched end
state; OSWorld's tasks have no reference solution here, so each must score 0.0. The sample spans the
domains whose tasks need no downloaded file; the full run over all of them is in the issue notes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SAMPLE = (
    "os/13584542-872b-42d8-b299-866967b5c3ef",
    "os/3ce045a0-877b-42aa-8d2c-b4a863336ab8",
    "gimp/7b7617bd-57cc-468e-9c91-40c4ec2bcb3d",
    "libreoffice_impress/2cd43775-7085-45d8-89fa-9e35c0a915cf",
    "chrome/bb5e4c0d-f964-439c-97b6-bdb9747de3f4",
    "multi_apps/3c8f201a-009d-4bbe-8b65-a6f8b35bb57f",
)


@pytest.mark.slow
@pytest.mark.xvfb
@pytest.mark.timeout(900)
def test_a_sample_of_osworld_tasks_sets_up_and_scores_on_the_osworld_desktop(
    osworld_dir: Path, tmp_path: Path
) -> None:
    if shutil.which("libreoffice") is None or shutil.which("chromium") is None:
        message = "the OSWorld desktop's applications are not installed (make setup-osworld)"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    files = [str(osworld_dir / "examples" / f"{name}.json") for name in SAMPLE]
    env = {**os.environ, "OSW_ASSET_CACHE": str(tmp_path / "assets")}
    done = subprocess.run(
        [sys.executable, "-m", "osw_studio", "tasks", "check", *files, "--desktop", "osworld", "--envs", "2"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=880,
        check=False,
        env=env,
    )
    lines = done.stdout.strip().splitlines()
    results = [line for line in lines if line.startswith(("PASS ", "FAIL ", "SKIP "))]
    assert len(results) == len(SAMPLE), done.stdout + done.stderr[-2000:]
    assert all(line.startswith("PASS ") and " empty=0.0 (" in line for line in results), "\n".join(results)
    assert lines[-1] == f"{len(SAMPLE)} passed, 0 failed, 0 skipped"
    assert done.returncode == 0 and "Traceback" not in done.stderr
