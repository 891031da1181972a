"""The Results dock in the real window: rates with their intervals as error bars, why tasks ended as a
stacked bar per domain, cost per domain, and the comparison of two folders."""

from __future__ import annotations

from pathlib import Path

import pytest
from PySide6.QtWidgets import QTableWidget

from osw_studio.core.outcome import OutcomeKind
from osw_studio.core.step import Usage
from osw_studio.runner.significance import wilson
from osw_studio.runner.summary import BatchSummary, TaskOutcome, write_summary
from osw_studio.ui.main_window import MainWindow
from tests.fakes.openai_server import FakeOpenAIServer
from tests.ui.conftest import OpenWindow, model_settings


def outcome(
    task: str, domain: str, score: float | None, kind: OutcomeKind, cost: float | None = None
) -> TaskOutcome:
    status = "error" if score is None else "finished" if score >= 1 else "failed"
    usage = Usage(prompt_tokens=900, completion_tokens=100, total_tokens=1000, cached_tokens=300)
    return TaskOutcome(
        task_id=task,
        domain=domain,
        score=score,
        success=bool(score and score >= 1),
        status=status,
        kind=kind,
        usage=usage,
        cost=cost,
    )


def results(path: Path, model: str, rows: list[TaskOutcome]) -> Path:
    path.mkdir(parents=True)
    write_summary(path, BatchSummary(model=model, tasks=rows))
    return path


def folder_a(root: Path) -> Path:
    rows = [
        outcome(
            f"os-{i}", "os", 1.0 if i < 4 else 0.0, OutcomeKind.SOLVED if i < 4 else OutcomeKind.FAILED, 0.01
        )
        for i in range(5)
    ]
    rows += [
        outcome("gimp-1", "gimp", 0.0, OutcomeKind.STUCK, 0.02),
        outcome("gimp-2", "gimp", None, OutcomeKind.ENV_ERROR, None),
    ]
    return results(root / "a", "model-a", rows)


def folder_b(root: Path) -> Path:
    rows = [outcome(f"os-{i}", "os", 0.0, OutcomeKind.FAILED, 0.005) for i in range(5)]
    rows += [outcome("gimp-1", "gimp", 1.0, OutcomeKind.SOLVED, 0.005)]
    return results(root / "b", "model-b", rows)


def cells(table: QTableWidget) -> list[list[str]]:
    return [[table.item(r, c).text() for c in range(table.columnCount())] for r in range(table.rowCount())]


@pytest.fixture
async def window(open_window: OpenWindow, model_server: FakeOpenAIServer) -> MainWindow:
    return await open_window(model_settings(model_server))


async def test_results_show_intervals_kinds_cost_and_a_comparison(window: MainWindow, tmp_path: Path) -> None:
    window.show_results(folder_a(tmp_path))
    panel = window.results.accounting
    assert panel.isVisible()

    bars = panel.intervals.error_bars()
    assert bars["os"] == pytest.approx(tuple(100 * x for x in wilson(4, 5)))
    assert bars["total"] == pytest.approx(tuple(100 * x for x in wilson(4, 7)))
    assert "over the 6 valid runs: 66.7%" in panel.rates.text()

    assert panel.kinds.segments() == {
        "gimp": [("stuck", 1), ("env_error", 1)],
        "os": [("solved", 4), ("failed", 1)],
    }
    assert "stuck" in panel.legend.text()

    table = {row[0]: row for row in cells(panel.cost)}
    assert table["os"] == ["os", "5", "5,000", "4,500", "1,500", "500", "–", "$0.0500"]
    assert table["gimp"][-1] == "$0.0200 + 1 unpriced"  # the env error's run had no price
    assert table["total"][2] == "7,000"

    panel.compare_with(folder_b(tmp_path))
    compared = {row[0]: row for row in cells(panel.compare_table)}
    # os: A solved 4 that B did not: exact McNemar p = 2 * (1/2)^4 = 0.125, not significant at 5%
    assert compared["os"][:7] == ["os", "5", "80.0%", "0.0%", "4", "0", "0.1250"]
    assert compared["os"][-1] == "no (mcnemar)"
    assert compared["gimp"][1:7] == ["1", "0.0%", "100.0%", "0", "1", "1.0000"]
    assert "A = model-a, B = model-b" in panel.compare_label.text()
    assert panel.currentIndex() == panel.count() - 1

    panel.compare_with(tmp_path / "nowhere")
    assert "not a results folder" in panel.compare_label.text() and panel.compare_table.rowCount() == 0
