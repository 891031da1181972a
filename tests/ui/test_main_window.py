"""The main window without a guest: the Results dock, File › Export runs…, Help › About and a layout
that survives closing the window."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from PySide6.QtCore import QSettings, Qt
from PySide6.QtWidgets import QDockWidget, QMenu, QWidget
from pytestqt.qtbot import QtBot

from osw_studio.core.actions import Click
from osw_studio.core.step import EpisodeResult, StepRecord
from osw_studio.core.task import Task
from osw_studio.runner.store import RunStoreWriter
from osw_studio.settings import Settings
from osw_studio.tasks import TaskLibrary
from osw_studio.trajectory.layout import new_run_id
from osw_studio.ui.about import AboutDialog
from osw_studio.ui.export_dialog import ExportDialog
from osw_studio.ui.main_window import MainWindow
from osw_studio.ui.services import Services
from tests.ui.waiting import until

ROOT = Path(__file__).resolve().parents[2]


def add_run(
    runs: Path, task_id: str, domain: str, score: float, steps: int = 2, started: float | None = 1.7e9
) -> str:
    """A finished run store with ``steps`` agent steps, started at ``started`` (None: now)."""
    task = Task.model_validate(
        {"id": task_id, "instruction": f"Do {task_id}.", "config": [], "evaluator": {"func": "infeasible"}}
    )
    run_id = new_run_id(task_id, now=started)
    with RunStoreWriter.create(
        runs, task, domain=domain, model="model-a", screen_size=(1280, 720), run_id=run_id
    ) as w:
        for n in range(1, steps + 1):
            w.write_step(StepRecord(index=n, response=f"step {n}", executed=[Click(x=10 * n, y=20)]))
        result = EpisodeResult(
            success=score >= 1.0, score=score, steps=steps, task_id=task_id, domain=domain, status="finished"
        )
        w.finish(result)
        return w.run_id


def make_window(qtbot: QtBot, runs: Path, layout: QSettings) -> MainWindow:
    library = TaskLibrary.from_paths([ROOT / "tasks" / "os" / "write-hello-file.json"])
    window = MainWindow(library, Services(Settings(), runs), qsettings=layout)
    qtbot.addWidget(window)
    window.show()
    qtbot.waitExposed(window)
    return window


@pytest.fixture
async def window(qtbot: QtBot, tmp_path: Path, qsettings: QSettings) -> AsyncIterator[MainWindow]:
    runs = tmp_path / "runs"
    add_run(runs, "write-hello-file", "os", 1.0)
    add_run(runs, "fix-greeting-typo", "mousepad", 0.0, steps=3)
    win = make_window(qtbot, runs, qsettings)
    try:
        yield win
    finally:
        await win.shutdown()


def menu_texts(window: MainWindow) -> dict[str, list[str]]:
    found = {}
    for action in window.menuBar().actions():
        menu = action.menu()
        assert isinstance(menu, QMenu)
        found[action.text().replace("&", "")] = [
            a.text().replace("&", "") for a in menu.actions() if not a.isSeparator()
        ]
    return found


def in_front(widget: QWidget) -> bool:
    """Whether a person sees the widget (a dock behind another tab is covered, not hidden)."""
    return widget.isVisible() and not widget.visibleRegion().isEmpty()


def table_rows(window: MainWindow) -> list[list[str]]:
    table = window.results.table
    return [[table.item(r, c).text() for c in range(4)] for r in range(table.rowCount())]


async def test_results_dock_shows_the_runs_and_opens_one_in_the_timeline(window: MainWindow) -> None:
    menus = menu_texts(window)
    assert menus["File"] == [
        "Open tasks folder…",
        "Close opened tasks folders",
        "Open results folder…",
        "Export runs…",
        "Quit",
    ]
    assert "Results" in menus["View"] and menus["Help"] == ["Keyboard shortcuts", "About OSW Studio"]

    results = window.docks["results"]
    assert window.tabifiedDockWidgets(window.docks["inspector"]) == [results]
    assert window.centralWidget() is window.viewer  # the viewer takes the space the docks leave
    assert in_front(window.inspector) and not in_front(window.results)
    results.raise_()
    await until(lambda: in_front(window.results))
    assert ["mousepad", "1", "0", "0.0%"] in table_rows(window)
    assert ["os", "1", "1", "100.0%"] in table_rows(window)
    assert window.results.visible_tasks() == ["fix-greeting-typo", "write-hello-file"]

    window.results.show_domain("mousepad")
    window.results.tasks.setCurrentItem(window.results.tasks.topLevelItem(0))
    window.results.open_button.click()
    # the run is shown like any past run: its steps on the timeline, the viewer in front
    assert [r.index for r in window.timeline.records] == [1, 2, 3]
    await until(lambda: in_front(window.viewer) and not in_front(window.results))
    assert "fix-greeting-typo, finished, 3 steps" in window.status.currentMessage()


async def test_results_refresh_when_a_run_finishes(window: MainWindow) -> None:
    # the newest run of that task failed
    add_run(window.services.runs_dir, "write-hello-file", "os", 0.0, started=None)
    window.run_view._on_episode_finished(
        EpisodeResult(success=False, score=0.0, steps=2, task_id="write-hello-file", status="finished")
    )
    assert ["os", "1", "0", "0.0%"] in table_rows(window)


async def test_export_selected_runs_with_a_filter_and_see_the_result(
    qtbot: QtBot, window: MainWindow, tmp_path: Path
) -> None:
    tree = window.history.tree
    tree.selectAll()
    window.export_action.trigger()
    dialog = window.findChild(ExportDialog)
    assert isinstance(dialog, ExportDialog) and dialog.isVisible()
    assert dialog.use_selected.isChecked() and dialog.use_selected.text().endswith("(2)")
    assert [dialog.format.itemText(i) for i in range(dialog.format.count())][:3] == [
        "osworld",
        "sft-messages",
        "sft-sharegpt",
    ]

    dialog.export_button.click()  # no output folder yet
    assert "no output folder" in dialog.message.text() and "choose where" in dialog.message.text()

    out = tmp_path / "sft"
    dialog.format.setCurrentText("sft-messages")
    dialog.out.setText(str(out))
    dialog.success_only.setChecked(True)
    dialog.export_button.click()
    assert not dialog.export_button.isEnabled()  # running in a worker thread
    summary = await dialog.wait()
    assert summary is not None and (summary.runs_found, summary.runs_exported) == (2, 1)
    assert dialog.message.text() == (
        f"Exported 1 of 2 runs as sft-messages to {out} (2 samples; skipped: 1 filtered out)."
    )
    assert dialog.progress.value() == dialog.progress.maximum() == 2
    lines = [json.loads(line) for f in out.glob("*.jsonl") for line in f.read_text().splitlines()]
    assert len(lines) == 2 and all("messages" in line for line in lines)
    assert dialog.export_button.isEnabled()


async def test_export_errors_show_what_to_do(window: MainWindow, tmp_path: Path) -> None:
    dialog = window.open_export()
    assert dialog.use_folder.isChecked()  # nothing selected in Run history: the runs folder
    assert dialog.runs_folder.text() == str(window.services.runs_dir)
    dialog.runs_folder.setText(str(tmp_path / "nowhere"))
    dialog.out.setText(str(tmp_path / "out"))
    dialog.format.setCurrentText("osworld")
    dialog.start()
    assert await dialog.wait() is None
    text = dialog.message.text()
    assert "no such file or folder" in text and str(tmp_path / "nowhere") in text
    assert "Traceback" not in text and dialog.export_button.isEnabled()

    for kind in ("agent", "human", "edited"):
        dialog.sources[kind].setChecked(False)
    dialog.start()
    assert "no step source chosen" in dialog.message.text()


async def test_help_about_shows_the_versions_of_the_app_qt_and_python(window: MainWindow) -> None:
    import platform

    from PySide6.QtCore import qVersion

    from osw_studio import __version__

    window.about_action.trigger()
    dialog = window.findChild(AboutDialog)
    assert isinstance(dialog, AboutDialog) and dialog.isVisible()
    assert dialog.windowTitle() == "About OSW Studio"
    shown = {label: field.text() for label, field in dialog.values.items()}
    assert shown["OSW Studio"] == __version__ and shown["Qt"] == qVersion()
    assert shown["Python"].startswith(platform.python_version())
    dialog.reject()


async def test_a_moved_dock_is_where_it_was_left_after_a_restart(qtbot: QtBot, tmp_path: Path) -> None:
    ini = tmp_path / "layout.ini"
    runs = tmp_path / "runs"
    first = make_window(qtbot, runs, QSettings(str(ini), QSettings.Format.IniFormat))
    inspector, timeline = first.docks["inspector"], first.docks["timeline"]
    assert first.dockWidgetArea(inspector) == Qt.DockWidgetArea.RightDockWidgetArea
    first.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, inspector)  # as a person drags it
    timeline.setFloating(True)
    first.docks["history"].hide()
    first.close()
    await first.shutdown()

    second = make_window(qtbot, runs, QSettings(str(ini), QSettings.Format.IniFormat))
    try:
        again = second.findChild(QDockWidget, "dock_inspector")
        assert again is second.docks["inspector"]
        assert second.dockWidgetArea(again) == Qt.DockWidgetArea.LeftDockWidgetArea
        assert second.docks["timeline"].isFloating()
        assert not second.docks["history"].isVisible() and second.docks["tasks"].isVisible()
    finally:
        await second.shutdown()


async def test_the_timeline_is_a_strip_of_whole_thumbnails(window: MainWindow) -> None:
    window.resize(1600, 960)
    window.run_view.open_run(
        next(run for run in window.history.runs if run.meta.task_id == "fix-greeting-typo")
    )
    timeline = window.timeline
    await until(lambda: timeline.count() == 3 and timeline.isVisible())
    assert timeline.iconSize().height() == 120
    # short: the viewer keeps most of the window's height
    assert window.docks["timeline"].height() < 0.25 * window.height()
    assert window.viewer.height() > 2.5 * window.docks["timeline"].height()
    # and every thumbnail with its label is shown whole, without scrolling down
    for row in range(timeline.count()):
        rect = timeline.visualItemRect(timeline.item(row))
        assert rect.top() >= 0 and rect.bottom() <= timeline.viewport().height()
        assert rect.height() >= 120


async def test_task_details_name_the_file_relative_to_the_task_root(window: MainWindow) -> None:
    assert window.tasks.select_task("write-hello-file")
    text = window.tasks.details.toPlainText()
    assert "file tasks/os/write-hello-file.json" in text
    assert str(ROOT) not in text
