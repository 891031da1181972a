"""Results credit each agent and model with its own runs only, and a later run a person helped does not
hide a pass the agent made alone."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings
from pytestqt.qtbot import QtBot

from osw_studio.core.step import EpisodeResult, StepRecord
from osw_studio.core.task import Task
from osw_studio.runner.store import RunStoreWriter
from osw_studio.trajectory.layout import new_run_id
from osw_studio.ui.main_window import MainWindow
from tests.ui.test_main_window import make_window


def add_run(
    runs: Path, task_id: str, *, agent: str, model: str, success: bool, at: float, assisted: bool = False
) -> None:
    task = Task.model_validate(
        {"id": task_id, "instruction": f"Do {task_id}.", "config": [], "evaluator": {"func": "infeasible"}}
    )
    with RunStoreWriter.create(
        runs, task, domain="os", model=model, agent=agent, run_id=new_run_id(task_id, now=at)
    ) as w:
        w.write_step(StepRecord(index=1))
        w.finish(
            EpisodeResult(
                success=success,
                score=1.0 if success else 0.0,
                steps=1,
                task_id=task_id,
                domain="os",
                status="finished" if success else "failed",
                assisted=assisted,
            )
        )


@pytest.fixture
async def window(qtbot: QtBot, tmp_path: Path, qsettings: QSettings) -> AsyncIterator[MainWindow]:
    runs = tmp_path / "runs"
    add_run(runs, "task-a", agent="replay", model="replay", success=True, at=1.7e9)
    add_run(runs, "task-b", agent="replay", model="replay", success=True, at=1.7e9 + 1)
    # the agent passed task-c alone, then a later run of it needed a person's help
    add_run(runs, "task-c", agent="replay", model="replay", success=True, at=1.7e9 + 2)
    add_run(runs, "task-c", agent="replay", model="replay", success=True, at=1.7e9 + 3, assisted=True)
    # another model failed task-a (the newest run of all: it used to name the whole folder)
    add_run(runs, "task-a", agent="osworld", model="fake-cua", success=False, at=1.7e9 + 9)
    win = make_window(qtbot, runs, qsettings)
    try:
        yield win
    finally:
        await win.shutdown()


async def test_results_are_per_agent_and_model_and_an_own_pass_is_not_hidden(window: MainWindow) -> None:
    results = window.results
    assert results.group.isVisibleTo(results)
    labels = [results.group.itemText(i) for i in range(results.group.count())]
    assert labels == ["replay", "fake-cua (osworld)"]
    assert results.group.currentText() == "replay"
    assert "replay: 3/3 solved" in results.where.text()  # task-c's own pass counts, not the helped rerun
    assert sorted(results.visible_tasks()) == ["task-a", "task-b", "task-c"]

    results.group.setCurrentText("fake-cua (osworld)")
    assert "fake-cua (osworld): 0/1 solved" in results.where.text()
    assert results.visible_tasks() == ["task-a"]
