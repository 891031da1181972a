"""``osw-studio run`` and ``osw-studio eval run`` with ``--provider docker``, as a user runs them.

Each command is a subprocess on a fresh HOME with no key, pointed at the private engine by
``DOCKER_HOST``, on the studio image built by the fixture.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import docker
import pytest

from osw_studio.envs.docker_spec import LABEL
from osw_studio.trajectory.store import RunStore
from tests.fakes.machine import fresh_env

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ROOT = Path(__file__).resolve().parents[2]
HELLO = ROOT / "tasks" / "os" / "write-hello-file.json"


def osw(*args: str, home: Path, docker_url: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "osw_studio", *args],
        cwd=ROOT,
        env=fresh_env(home, DOCKER_HOST=docker_url),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def started_containers(url: str, since: float) -> list[str]:
    """The names of the containers the engine started since ``since`` (from its event log)."""
    client = docker.DockerClient(base_url=url)
    try:
        events = client.events(
            since=int(since),
            until=int(time.time()) + 1,
            decode=True,
            filters={"type": "container", "event": "start"},
        )
        return [e["Actor"]["Attributes"]["name"] for e in events if LABEL in e["Actor"]["Attributes"]]
    finally:
        client.close()


def our_containers(url: str) -> list[str]:
    client = docker.DockerClient(base_url=url)
    try:
        return [c.name for c in client.containers.list(all=True, filters={"label": LABEL})]
    finally:
        client.close()


def test_run_replays_a_bundled_task_in_a_container(
    tmp_path: Path, docker_url: str, studio_image: str
) -> None:
    out = tmp_path / "runs"
    since = time.time() - 1
    proc = osw(
        *["run", str(HELLO), "--agent", "replay", "--out", str(out)],
        *["--provider", "docker", f"image={studio_image}", "screen=1280x800"],
        home=tmp_path,
        docker_url=docker_url,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[1] == "agent replay, model replay; starting the docker:studio desktop ..."
    assert any(
        line.startswith("step  2  agent/auto  typing('echo hello > ~/Desktop/hello.txt\\n')")
        for line in lines
    )
    assert lines[-1].startswith("score 1.00 (finished) after 3 steps; run stored in ")
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    run = RunStore(run_dir)
    assert run.meta.provider == "docker" and (run.meta.screen_width, run.meta.screen_height) == (1280, 800)
    assert run.result is not None and run.result.score == 1.0
    assert len(started_containers(docker_url, since)) == 1
    assert our_containers(docker_url) == []  # removed when the run ended


def test_eval_run_starts_one_container_per_env(tmp_path: Path, docker_url: str, studio_image: str) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    (suite / "os").symlink_to(ROOT / "tasks" / "os")
    index = suite / "two.json"
    index.write_text(json.dumps({"os": ["write-hello-file", "make-projects-folder"]}), encoding="utf-8")
    out = tmp_path / "results"
    since = time.time() - 1
    proc = osw(
        *["eval", "run", str(index), "--agent", "replay", "--out", str(out), "--envs", "2"],
        *["--provider", "docker", "studio", f"image={studio_image}"],
        home=tmp_path,
        docker_url=docker_url,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "2 tasks on 2 docker env(s)" in proc.stdout
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    outcomes = {t["task_id"]: (t["status"], t["score"]) for t in summary["tasks"]}
    assert outcomes == {"write-hello-file": ("finished", 1.0), "make-projects-folder": ("finished", 1.0)}
    assert sorted(t["env"] for t in summary["tasks"]) == ["env-1", "env-2"]
    started = started_containers(docker_url, since)
    assert len(started) == 2 and len(set(started)) == 2
    assert our_containers(docker_url) == []
