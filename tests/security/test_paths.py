"""Malicious task files against the host path policy: no read outside the task's folder, no write outside
the task's cache folder, whatever form the path takes.

Each route is tried twice: through the loader (``tasks validate``, ``run``, the app: the file is refused,
naming the JSON path) and past it (a task built in memory goes straight to the setup executor or the
evaluator, which refuse it again). The victim is a fake HOME outside /tmp with an SSH key to steal and a
login script to overwrite.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from osw_studio.cli import main
from osw_studio.core.errors import OswError, TaskError
from osw_studio.core.task import Task
from osw_studio.envs.guest_client import GuestClient, RetryPolicy
from osw_studio.envs.local import free_port
from osw_studio.envs.remote import RemoteEnv
from osw_studio.envs.setup import SetupOptions, SetupRunner
from osw_studio.evaluation.evaluate import evaluate
from osw_studio.tasks.load import load_task
from tests.envs.fake_guest import FakeGuest, osworld_guest
from tests.fakes.machine import fresh_env
from tests.security.conftest import Victim

FAST = RetryPolicy(attempts=1, delay=0.01)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def guest() -> Iterator[FakeGuest]:
    """An OSWorld-style guest that records uploads and serves every ``/file`` as ``guest bytes``."""
    fake = osworld_guest()
    fake.route("POST", "/file", lambda r: (200, "application/octet-stream", b"guest bytes"))
    fake.start()
    yield fake
    fake.stop()


def suite(victim: Victim) -> Path:
    """A downloaded suite in the victim's HOME: ``~/Downloads/suite/os/`` (the task's folder)."""
    folder = victim.home / "Downloads" / "suite" / "os"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "gold.txt").write_text("gold")
    return folder


def write_task(folder: Path, data: dict[str, Any]) -> Path:
    path = folder / f"{data['id'] if '/' not in data['id'] else 'evil'}.json"
    path.write_text(json.dumps(data))
    return path


def task_data(task_id: str = "evil", **parts: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": task_id,
        "instruction": "Looks harmless.",
        "evaluator": {"func": "infeasible"},
    }
    data.update(parts)
    return data


def download(url: str) -> dict[str, Any]:
    return {"type": "download", "parameters": {"files": [{"url": url, "path": "/home/user/loot"}]}}


def upload(local_path: str) -> dict[str, Any]:
    return {
        "type": "upload_file",
        "parameters": {"files": [{"local_path": local_path, "path": "/home/user/loot"}]},
    }


def uploaded(guest: FakeGuest) -> list[bytes]:
    return [r.form().get("file_data", b"") for r in guest.calls("/setup/upload")]


# --- reading host files ------------------------------------------------------------------------------

READ_FORMS = {
    "file-url": lambda v: f"file://{v.key}",
    "file-url-upper": lambda v: f"FILE://{v.key}",
    "tilde": lambda v: "~/.ssh/id_rsa",
    "absolute": lambda v: str(v.key),
    "dotdot": lambda v: "../../../.ssh/id_rsa",
    "dotdot-inside": lambda v: "sub/../../../../.ssh/id_rsa",
    "backslash-dotdot": lambda v: "..\\..\\..\\.ssh\\id_rsa",
}
"""Every textual form of a host source; each is refused by the loader, naming the JSON path."""


@pytest.mark.parametrize("form", sorted(READ_FORMS))
@pytest.mark.parametrize("step", ["download", "upload_file"])
async def test_a_task_cannot_read_a_host_file_by_any_path_form(
    victim: Victim, guest: FakeGuest, monkeypatch: pytest.MonkeyPatch, form: str, step: str
) -> None:
    monkeypatch.setenv("HOME", str(victim.home))  # so ``~`` means the victim's HOME
    source = READ_FORMS[form](victim)
    raw = download(source) if step == "download" else upload(source)
    folder = suite(victim)
    path = write_task(folder, task_data(config=[raw]))
    key = "url" if step == "download" else "local_path"

    with pytest.raises(TaskError) as caught:
        load_task(path)
    assert f"$.config[0].parameters.files[0].{key}" in str(caught.value)

    task = Task.model_validate(task_data(config=[raw]))  # past the loader: the executor refuses it too
    async with GuestClient(f"http://127.0.0.1:{guest.server.server_address[1]}", retry=FAST) as client:
        with pytest.raises(OswError):
            await SetupRunner(client, SetupOptions(task_dir=folder)).run(task.config, task_id=task.id)
    assert not any(victim.key_text.encode() in data for data in uploaded(guest))


@pytest.mark.parametrize("where", ["task folder", "suite assets"])
async def test_a_symlink_in_the_task_folder_does_not_lead_out(
    victim: Victim, guest: FakeGuest, where: str
) -> None:
    folder = suite(victim)
    if where == "task folder":
        (folder / "notes.txt").symlink_to(victim.key)
        url = "notes.txt"
    else:
        (folder.parent / "assets").mkdir()
        (folder.parent / "assets" / "notes.txt").symlink_to(victim.key)
        url = "../assets/notes.txt"
    entry = load_task(write_task(folder, task_data(config=[download(url)])))  # the text is fine
    async with GuestClient(f"http://127.0.0.1:{guest.server.server_address[1]}", retry=FAST) as client:
        with pytest.raises(TaskError) as caught:
            await SetupRunner(client, SetupOptions(task_dir=folder)).run(entry.task.config, task_id="evil")
    assert "symlink" in str(caught.value)
    assert uploaded(guest) == []


async def test_an_url_that_decodes_to_dotdot_does_not_read_through_the_asset_cache(
    victim: Victim, guest: FakeGuest
) -> None:
    cache = victim.home / ".cache" / "osw"
    (cache / "evil").mkdir(parents=True)
    # <cache>/evil/../../../.ssh/id_rsa is the victim's key; nothing listens on the port.
    url = f"http://127.0.0.1:{free_port()}/x/..%2F..%2F..%2F.ssh%2Fid_rsa"
    task = load_task(write_task(suite(victim), task_data(config=[download(url)]))).task
    options = SetupOptions(cache_dir=cache, task_dir=suite(victim), download_retry_delay=0.01)
    async with GuestClient(f"http://127.0.0.1:{guest.server.server_address[1]}", retry=FAST) as client:
        with pytest.raises(OswError) as caught:
            await SetupRunner(client, options).run(task.config, task_id=task.id)
    assert "not a public address" in str(caught.value)  # and no file of the cache was read
    assert uploaded(guest) == []


CLOUD_READS = {
    "file-url": lambda v: f"file://{v.key}",
    "absolute": lambda v: str(v.key),
    "tilde": lambda v: "~/.ssh/id_rsa",
    "dotdot": lambda v: "../../../.ssh/id_rsa",
}


@pytest.mark.parametrize("form", sorted(CLOUD_READS))
async def test_an_evaluator_cannot_read_a_host_file_as_its_expected_file(
    victim: Victim, guest: FakeGuest, monkeypatch: pytest.MonkeyPatch, form: str
) -> None:
    monkeypatch.setenv("HOME", str(victim.home))
    evaluator = {
        "func": "compare_text_file",
        "result": {"type": "vm_file", "path": "/home/user/a.txt", "dest": "a.txt"},
        "expected": {"type": "cloud_file", "path": CLOUD_READS[form](victim), "dest": "copy.txt"},
    }
    folder = suite(victim)
    with pytest.raises(TaskError) as caught:
        load_task(write_task(folder, task_data(evaluator=evaluator)))
    assert "$.evaluator.expected.path" in str(caught.value)

    cache = victim.home / ".cache" / "osw"
    task = Task.model_validate(task_data(evaluator=evaluator))
    env = await _env(guest, cache, folder)
    try:
        with pytest.raises(TaskError):
            await evaluate(env, task, [])
    finally:
        await env.close()
    copies = [p for p in cache.rglob("*") if p.is_file()]
    assert not any(victim.key_text in p.read_text(errors="replace") for p in copies)


async def test_cache_file_cannot_name_a_file_outside_the_cache(victim: Victim, guest: FakeGuest) -> None:
    evaluator = {
        "func": "check_include_exclude",
        "result": {"type": "cache_file", "path": "../../../.ssh/id_rsa"},
        "options": {"rules": {"include": ["KEY"]}},
    }
    with pytest.raises(TaskError) as caught:
        load_task(write_task(suite(victim), task_data(evaluator=evaluator)))
    assert "$.evaluator.result.path" in str(caught.value)
    env = await _env(guest, victim.home / ".cache" / "osw", suite(victim))
    try:
        with pytest.raises(TaskError):
            await evaluate(env, Task.model_validate(task_data(evaluator=evaluator)), [])
    finally:
        await env.close()


# --- writing host files ------------------------------------------------------------------------------


def vm_file(dest: Any, multi: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"type": "vm_file", "dest": dest}
    spec["path"] = ["/home/user/a.txt"] * len(dest) if multi else "/home/user/a.txt"
    if multi:
        spec.update(multi=True, gives=list(range(len(dest))))
    return spec


def write_routes(victim: Victim) -> dict[str, tuple[dict[str, Any], str]]:
    """Task data that writes the victim's ``.bashrc``, and the JSON path the loader must name."""
    up = "../../../.bashrc"  # from <cache>/<task id>/ to the victim's HOME
    check = {"func": "check_include_exclude", "options": {"rules": {"include": ["x"]}}}
    execute = {"type": "execute", "parameters": {"command": ["true"]}}
    return {
        "dest-absolute": (
            task_data(evaluator={**check, "result": vm_file(str(victim.bashrc))}),
            "result.dest",
        ),
        "dest-dotdot": (task_data(evaluator={**check, "result": vm_file(up)}), "$.evaluator.result.dest"),
        "dest-multi": (
            task_data(evaluator={**check, "result": vm_file(["ok.txt", up], multi=True)}),
            "$.evaluator.result.dest[1]",
        ),
        "cloud-dest": (
            task_data(evaluator={**check, "result": {"type": "cloud_file", "path": "gold.txt", "dest": up}}),
            "$.evaluator.result.dest",
        ),
        "postconfig-stdout": (
            task_data(
                evaluator={
                    "func": "infeasible",
                    "postconfig": [{**execute, "parameters": {"command": ["true"], "stdout": up}}],
                }
            ),
            "$.evaluator.postconfig[0].parameters.stdout",
        ),
        "postconfig-stderr": (
            task_data(
                evaluator={
                    "func": "infeasible",
                    "postconfig": [
                        {**execute, "parameters": {"command": ["true"], "stderr": str(victim.bashrc)}}
                    ],
                }
            ),
            "$.evaluator.postconfig[0].parameters.stderr",
        ),
        "config-stdout": (
            task_data(config=[{**execute, "parameters": {"command": ["true"], "stdout": up}}]),
            "$.config[0].parameters.stdout",
        ),
        "task-id": (task_data("../..", evaluator={**check, "result": vm_file(".bashrc")}), "$.id"),
    }


ROUTES = [
    "dest-absolute",
    "dest-dotdot",
    "dest-multi",
    "cloud-dest",
    "postconfig-stdout",
    "postconfig-stderr",
    "config-stdout",
    "task-id",
]


async def _env(guest: FakeGuest, cache: Path, task_dir: Path) -> RemoteEnv:
    url = f"http://127.0.0.1:{guest.server.server_address[1]}"
    return await RemoteEnv.open(url, retry=FAST, setup=SetupOptions(cache_dir=cache, task_dir=task_dir))


@pytest.mark.parametrize("route", ROUTES)
async def test_a_task_cannot_write_outside_its_cache_folder(
    victim: Victim, guest: FakeGuest, route: str
) -> None:
    data, json_path = write_routes(victim)[route]
    folder = suite(victim)
    with pytest.raises(TaskError) as caught:
        load_task(write_task(folder, data))
    assert json_path in str(caught.value)

    cache = victim.home / ".cache" / "osw"
    cache.mkdir(parents=True, exist_ok=True)
    task = Task.model_validate(data)  # past the loader: setup and evaluation refuse it too
    env = await _env(guest, cache, folder)
    try:
        with pytest.raises(TaskError):
            if task.config:
                await SetupRunner(env.guest, env.setup_options).run(task.config, task_id=task.id)
            else:
                await evaluate(env, task, [])
    finally:
        await env.close()
    assert victim.untouched()
    assert sorted(p.name for p in victim.home.iterdir()) == [".bashrc", ".cache", ".ssh", "Downloads"]


def test_tasks_validate_reports_every_malicious_path(
    victim: Victim, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = suite(victim)
    for i, route in enumerate(ROUTES):
        data, _ = write_routes(victim)[route]
        (folder / f"write-{i}.json").write_text(json.dumps(data))
    for i, form in enumerate(sorted(READ_FORMS)):
        data = task_data(config=[download(READ_FORMS[form](victim))])
        (folder / f"read-{i}.json").write_text(json.dumps(data))
    index = {"os": ["../../../.bashrc"], "../..": ["x"]}
    (folder.parent / "test_evil.json").write_text(json.dumps(index))
    assert main(["tasks", "validate", str(folder), str(folder.parent / "test_evil.json")]) == 1
    out = capsys.readouterr().out.splitlines()
    expected = len(ROUTES) + len(READ_FORMS) + len(index)
    assert out[-1] == f"0 valid, {expected} invalid", out
    assert all("$." in line for line in out[:-1]), out
    assert victim.untouched()


@pytest.mark.timeout(300)
def test_tasks_check_runs_nothing_of_a_task_that_writes_the_users_login_script(victim: Victim) -> None:
    """``tasks check`` (which CI runs) refuses the task before any guest starts."""
    data = task_data(
        "evil-check",
        evaluator={
            "func": "check_include_exclude",
            "result": vm_file(str(victim.bashrc)),
            "options": {"rules": {"include": ["x"]}},
        },
        solution=[{"actions": [{"kind": "done"}]}],
    )
    path = write_task(suite(victim), data)
    proc = subprocess.run(
        [sys.executable, "-m", "osw_studio", "tasks", "check", str(path)],
        cwd=ROOT,
        env=fresh_env(victim.home),
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert proc.returncode == 1, proc.stderr
    assert "absolute host paths are refused" in proc.stdout and "$.evaluator.result.dest" in proc.stdout
    assert "Traceback" not in proc.stderr
    assert victim.untouched()


def test_a_run_id_in_an_edited_summary_does_not_open_a_run_outside_the_results(
    victim: Victim, tmp_path: Path, qtbot: QtBot
) -> None:
    from osw_studio.runner.summary import BatchSummary, TaskOutcome, write_summary
    from osw_studio.ui.results_view import ResultsView
    from tests.fakes.runs import SyntheticRun, write_run

    outside = write_run(victim.home / "private-runs", SyntheticRun(task_id="private"))
    results = tmp_path / "results"
    results.mkdir()
    sneaky = str(outside)  # an absolute path: ``folder / "runs" / sneaky`` is ``sneaky``
    escape = TaskOutcome(task_id="t", domain="os", status="finished", score=1.0, run_id=sneaky)
    write_summary(results, BatchSummary(tasks=[escape]))
    view = ResultsView(results)
    qtbot.addWidget(view)
    assert (results / "runs" / sneaky).resolve() == outside.resolve()  # what the old lookup opened
    assert view.run_path(escape) is None
