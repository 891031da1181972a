"""The bundled task suite under ``tasks/``: valid, indexed, and every task checks out on a local sandbox.

``osw-studio tasks check`` plays each task's reference solution (it must score 1.0) and evaluates the
untouched start state (it must score 0.0), as a user would run it; each task runs on the desktop it names
(the OSWorld desktop's applications have one task each), the others on the default ``studio`` desktop.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "tasks"

OSWORLD_APPS = {
    "libreoffice_calc": "libreoffice --calc",
    "libreoffice_writer": "libreoffice --writer",
    "libreoffice_impress": "libreoffice --impress",
    "gimp": "gimp",
    "vlc": "vlc",
    "thunderbird": "thunderbird",
    "chrome": "google-chrome",
}
"""The domains of the bundled tasks for the OSWorld desktop, and how each starts its application."""


def osw_studio(*args: str, timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "osw_studio", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def index(name: str) -> dict[str, list[str]]:
    data: dict[str, list[str]] = json.loads((TASKS / name).read_text())
    return data


def test_the_suite_is_valid_and_both_indexes_list_existing_tasks() -> None:
    done = osw_studio(
        "tasks", "validate", "tasks/", "tasks/test_all.json", "tasks/test_small.json", timeout=60
    )
    assert done.returncode == 0, done.stdout + done.stderr
    files = sorted(TASKS.glob("*/*.json"))
    total = len(files) + sum(len(ids) for ids in index("test_all.json").values())
    total += sum(len(ids) for ids in index("test_small.json").values())
    assert done.stdout.strip().splitlines()[-1] == f"{total} valid, 0 invalid"
    listed = {f"{domain}/{task_id}" for domain, ids in index("test_all.json").items() for task_id in ids}
    assert listed == {f"{f.parent.name}/{f.stem}" for f in files}


def test_the_suite_covers_four_domains_with_solutions_and_infeasible_tasks() -> None:
    tasks = [json.loads(f.read_text()) for f in sorted(TASKS.glob("*/*.json"))]
    domains = Counter(f.parent.name for f in TASKS.glob("*/*.json"))
    assert len(tasks) >= 40 and len(domains) >= 4, domains
    assert all(t["solution"] for t in tasks)
    lengths = {len(t["solution"]) for t in tasks}
    assert min(lengths) == 1 and max(lengths) >= 10
    infeasible = [t for t in tasks if t["evaluator"]["func"] == "infeasible"]
    assert len(infeasible) >= 3
    assert all(t["solution"][-1]["actions"][-1]["kind"] == "fail" for t in infeasible)
    small = sum(len(ids) for ids in index("test_small.json").values())
    assert 8 <= small <= 14


def test_the_evaluator_implements_everything_the_suite_uses() -> None:
    done = osw_studio("eval", "coverage", "tasks/", "--json", timeout=60)
    total = json.loads(done.stdout)["total"]
    assert total["covered"] == total["tasks"] >= 40 and total["missing"] == {}, total


def test_each_application_of_the_osworld_desktop_has_a_bundled_task_that_names_the_desktop() -> None:
    named = {
        f.parent.name: json.loads(f.read_text())
        for f in TASKS.glob("*/*.json")
        if f.parent.name in OSWORLD_APPS
    }
    assert set(named) == set(OSWORLD_APPS)
    for domain, task in named.items():
        assert task["desktop"] == "osworld" and task["solution"], domain
        programs = " ".join(str(step["parameters"].get("command", "")) for step in task["config"])
        assert OSWORLD_APPS[domain] in programs, (domain, programs)


@pytest.mark.slow
@pytest.mark.timeout(1200)  # the OSWorld desktop's seven tasks add about three minutes to the studio ones
def test_every_bundled_task_passes_the_check() -> None:
    done = osw_studio("tasks", "check", "tasks/", "--envs", "2", "--require-solution", timeout=1180)
    lines = done.stdout.strip().splitlines()
    results = [line for line in lines if line.startswith(("PASS ", "FAIL "))]
    failures = [line for line in results if line.startswith("FAIL ")]
    assert not failures, "\n".join(failures) + done.stderr[-2000:]
    assert done.returncode == 0, done.stdout + done.stderr
    expected = sum(len(ids) for ids in index("test_all.json").values())
    # The OSWorld desktop's tasks are skipped, saying why, where its applications are not installed
    # (CI installs them: there every task must run).
    skipped = [line for line in lines if line.startswith("SKIP ")]
    if shutil.which("libreoffice") is None and not os.environ.get("CI"):
        osworld = sum(len(index("test_all.json")[domain]) for domain in OSWORLD_APPS)
        assert len(skipped) == osworld and all("make setup-osworld" in line for line in skipped), skipped
    assert len(results) == expected - len(skipped)
    assert all(" solution=1.0 empty=0.0 (" in line for line in results)
    assert lines[-1] == f"{expected - len(skipped)} passed, 0 failed, {len(skipped)} skipped"
    assert "checked 7 tasks on the osworld desktop" in done.stdout or skipped
