"""Planning a suite from the settings, as ``eval run`` and the app's Evaluate suite… both do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osw_studio.cli import eval_run
from osw_studio.core.errors import GuestError, SettingsError, StoreError, TaskError
from osw_studio.runner import suite
from osw_studio.runner.suite import SuiteRequest, plan_suite
from osw_studio.settings.model import Settings
from tests.batch.suite import write_suite


def test_a_replay_plan_has_one_env_per_requested_env_and_no_secrets(tmp_path: Path) -> None:
    index = write_suite(tmp_path / "suite", 4)
    settings = Settings.model_validate({"evaluation": {"max_steps": 7, "screen_resolution": "1280x720"}})
    request = SuiteRequest(index, agent="replay", envs=3, out=tmp_path / "out", domains=["os"])
    plan = plan_suite(settings, request)
    assert [e.domain for e in plan.entries] == ["os", "os"]
    assert len(plan.makers) == 3 and {m.options["screen"] for m in plan.makers} == {(1280, 720)}
    assert (plan.info.agent, plan.info.model, plan.info.max_steps) == ("replay", "replay", 7)
    assert plan.config.recycle == "task" and plan.config.secrets == ()
    batch = plan.batch()
    assert [w.name for w in batch.workers] == ["env-1", "env-2", "env-3"]
    assert len(batch.pending()) == 2


def test_a_used_output_folder_is_refused_before_any_env_starts(tmp_path: Path) -> None:
    index = write_suite(tmp_path / "suite", 2)
    out = tmp_path / "out"
    run = out / "runs" / "20250101T000000Z-batch-os-aaaaaa"
    run.mkdir(parents=True)
    (run / "run.json").write_text(json.dumps({"run_id": run.name, "task_id": "batch-os-00", "domain": "os"}))
    batch = plan_suite(Settings(), SuiteRequest(index, agent="replay", out=out)).batch()
    with pytest.raises(StoreError, match="already holds runs"):
        batch.pending()


def test_user_errors_say_what_to_do(tmp_path: Path) -> None:
    index = write_suite(tmp_path / "suite", 2)
    with pytest.raises(TaskError, match="no such suite"):
        plan_suite(Settings(), SuiteRequest(tmp_path / "nowhere.json", agent="replay"))
    with pytest.raises(TaskError, match="no tasks to run"):
        plan_suite(Settings(), SuiteRequest(index, agent="replay", domains=["gimp"]))
    with pytest.raises(SettingsError, match="cannot run a suite unattended"):
        plan_suite(Settings(), SuiteRequest(index, agent="human"))
    with pytest.raises(GuestError, match="give 1 or more envs"):
        plan_suite(Settings(), SuiteRequest(index, agent="replay", envs=0))


def test_the_command_line_offers_the_agents_that_can_run_a_suite() -> None:
    assert eval_run.AGENTS == suite.AGENTS
