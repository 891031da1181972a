"""Render the app's main states to PNG under docs/screenshots/ (README shows them).

It runs the real window offscreen against a real local sandbox, with the replay agent playing a bundled
task's reference solution in approve mode, so every picture shows a real guest screen:

- main.png: the task browser with a task's details, the viewer, the inspector and timeline;
- approve.png: a proposal drawn on the live screen, waiting for Approve / Edit / Skip / Take over;
- takeover.png: a person in control of the guest;
- history.png: a finished run opened from the run history, its timeline marked;
- review.png: that run in the review window, a step labelled wrong with its actions open to correct;
- results.png: the Results dock over the runs folder, per domain, with the domain's tasks;
- accounting.png: the Results dock's accounting over two example results folders (made up here, two
  models on the same 40 tasks): rates with their intervals, why tasks ended, cost, the comparison;
- export.png: File > Export runs… after exporting the run as SFT chat data;
- settings.png: the settings dialog;
- maximised.png: a maximised 1920x1080 window on a 1920x1080 guest, the viewer taking the space so the
  guest's text stays readable;
- small.png: the same window at 1280x720, the smallest it is made for;
- instruction.png: an instruction typed in the instruction box, to run on the live desktop;
- switcher.png: the toolbar's profile and agent switcher, its profile list open;
- authoring.png: the authoring window on a bundled task, as Tasks › Author a task… opens it;
- wall.png: the Wall during a 4-env suite, each env's live screen a tile with its task, step, state and
  last action (``--wall``: only this picture).

Usage: .venv/bin/python scripts/screenshots.py [OUT_DIR] [--accounting] (only accounting.png, no sandbox)
       [--wall] (only wall.png)
"""

from __future__ import annotations

import asyncio
import os
import random
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import qasync
from PySide6.QtCore import QRect, QSettings, Qt
from PySide6.QtGui import QPainter
from PySide6.QtWidgets import QApplication, QSplitter, QWidget

from osw_studio.agent.registry import make_agent
from osw_studio.core.actions import Typing
from osw_studio.settings import Settings
from osw_studio.tasks import TaskLibrary
from osw_studio.ui.main_window import MainWindow
from osw_studio.ui.services import Services

ROOT = Path(__file__).resolve().parent.parent
TASK = "write-hello-file"


async def until(predicate: Callable[[], bool], seconds: float = 60) -> None:
    async with asyncio.timeout(seconds):
        while not predicate():  # noqa: ASYNC110 (widget state has no event to await)
            await asyncio.sleep(0.05)


def save(widget: QWidget, out: Path, name: str) -> None:
    widget.grab().save(str(out / name))
    print(f"wrote {out / name}")


async def render(window: MainWindow, out: Path) -> None:
    window.tasks.select_task(TASK)
    env = await window.services.ensure_env()
    window.status.set_env(window.services.env_description() + " · ready")
    await window.run_view.show_idle_env(env)  # as the app does once the env is ready
    stream = window.viewer.stream
    await until(lambda: stream is not None and stream.decoded >= 1)
    await asyncio.sleep(1.0)
    save(window, out, "main.png")

    window.mode.setCurrentText("approve")
    window.run_action.trigger()
    inspector = window.inspector
    await until(lambda: inspector.approve_button.isEnabled())
    stream = window.viewer.stream
    await until(lambda: stream is not None and stream.decoded >= 1)
    await asyncio.sleep(1.0)  # a second of live frames for the fps label
    save(window, out, "approve.png")

    window.approve_action.trigger()
    await until(lambda: len(window.timeline.records) == 1 and inspector.approve_button.isEnabled())
    window.takeover_action.trigger()
    await until(lambda: window.viewer.canvas.takeover)
    controller = window.run_view.controller
    assert controller is not None
    # the person types the command themselves (the held proposal is dropped)
    controller.human_input([Typing(text="echo hello > ~/Desktop/hello.txt\n")])
    await controller.drain_human_input()
    await asyncio.sleep(0.8)
    save(window, out, "takeover.png")
    window.takeover_action.trigger()

    while controller.running:
        if inspector.approve_button.isEnabled():
            window.approve_action.trigger()
        await asyncio.sleep(0.1)
    window.history.refresh()
    window.docks["history"].raise_()
    window.run_view.open_run(window.history.runs[0])
    window.timeline.setCurrentRow(1)
    await window.timeline.thumbnails_ready()
    await asyncio.sleep(0.5)
    save(window, out, "history.png")

    review = window.review_run(window.history.runs[0])
    assert review is not None
    review.resize(1400, 820)
    review.label_step("correct")
    review.label_step("wrong")
    review.set_verdict("accepted")
    review.rate(4)
    await asyncio.sleep(0.3)
    save(review, out, "review.png")
    review.close()

    window.show_results(window.services.runs_dir)
    window.results.show_domain("os")
    window.results.tasks.setCurrentItem(window.results.tasks.topLevelItem(0))
    await asyncio.sleep(0.3)
    save(window, out, "results.png")

    await render_accounting(window, out, window.services.runs_dir.parent)

    window.history.tree.selectAll()
    exporter = window.open_export()
    exporter.format.setCurrentText("sft-messages")
    exporter.out.setText(str(window.services.runs_dir.parent / "export"))
    exporter.start()
    await exporter.wait()
    await asyncio.sleep(0.3)
    save(exporter, out, "export.png")
    exporter.reject()

    dialog = window.open_settings()
    await asyncio.sleep(0.3)
    save(dialog, out, "settings.png")
    dialog.reject()

    await render_new_basics(window, out)

    # a full-HD guest in a maximised full-HD window, then the smallest window, both live
    settings = window.services.settings
    settings.evaluation = settings.evaluation.model_copy(update={"screen_resolution": (1920, 1080)})
    big = await window.services.ensure_env()
    window.status.set_env(window.services.env_description() + " · ready")
    await big.guest.launch(["xterm", "-geometry", "100x30+200+150", "-title", "Terminal"])
    window.docks["inspector"].raise_()
    window.resize(1920, 1080)
    await window.run_view.watch_env(big)
    stream = window.viewer.stream
    await until(lambda: stream is not None and stream.decoded >= 2)
    await asyncio.sleep(1.5)
    save(window, out, "maximised.png")
    window.resize(1280, 720)
    await asyncio.sleep(1.0)
    save(window, out, "small.png")


def example_results(root: Path) -> tuple[Path, Path]:
    """Two results folders of two made-up models on the same 40 tasks, with tokens and costs."""
    from osw_studio.core.outcome import OutcomeKind
    from osw_studio.core.step import Usage
    from osw_studio.runner.summary import BatchSummary, TaskOutcome, write_summary

    domains = ["chrome", "gimp", "libreoffice_calc", "os", "vs_code"]
    kinds_a = "ssffsFtsesssffsTsmsfs"
    kinds_b = "sssfsssesssfsssssfss"
    names = {
        "s": OutcomeKind.SOLVED,
        "f": OutcomeKind.FAILED,
        "F": OutcomeKind.STEP_LIMIT,
        "t": OutcomeKind.STUCK,
        "e": OutcomeKind.ENV_ERROR,
        "m": OutcomeKind.MODEL_ERROR,
        "T": OutcomeKind.TIMEOUT,
    }
    folders = []
    for seed, (name, kinds, price) in enumerate((("model-a", kinds_a, 0.004), ("model-b", kinds_b, 0.011))):
        draw = random.Random(seed)
        tasks = []
        for i in range(40):
            kind = names[draw.choice(kinds)]
            solved = kind is OutcomeKind.SOLVED
            error = not kind.valid
            tokens = 20_000 + (i * 3_517) % 60_000
            tasks.append(
                TaskOutcome(
                    task_id=f"task-{i:02d}",
                    domain=domains[i % len(domains)],
                    score=None if error else 1.0 if solved else 0.0,
                    success=solved,
                    status="error" if error else "finished" if solved else "failed",
                    kind=kind,
                    usage=Usage(
                        prompt_tokens=tokens, completion_tokens=tokens // 20, total_tokens=tokens * 21 // 20
                    ),
                    cost=round(tokens / 1000 * price, 4),
                )
            )
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        write_summary(folder, BatchSummary(model=name, tasks=tasks))
        folders.append(folder)
    return folders[0], folders[1]


async def render_accounting(window: MainWindow, out: Path, scratch: Path) -> None:
    a, b = example_results(scratch / "examples")
    window.show_results(a)
    dock = window.docks["results"]
    dock.raise_()
    window.resizeDocks([dock], [1000], Qt.Orientation.Horizontal)
    panel = window.results.accounting
    splitter = window.results.accounting_area.parentWidget()
    assert isinstance(splitter, QSplitter)
    splitter.setSizes([150, 420, 150])
    pictures = []
    for index in range(panel.count()):
        panel.setCurrentIndex(index)
        if index == panel.count() - 1:
            panel.compare_with(b)
        await asyncio.sleep(0.3)
        pictures.append(panel.grab())
    # the four tabs side by side in one picture
    from PySide6.QtGui import QPixmap

    width = sum(p.width() for p in pictures[:2])
    height = max(p.height() for p in pictures) * 2
    sheet = QPixmap(width, height)
    sheet.fill(window.palette().window().color())
    painter = QPainter(sheet)
    for index, picture in enumerate(pictures):
        painter.drawPixmap((index % 2) * pictures[0].width(), (index // 2) * (height // 2), picture)
    painter.end()
    sheet.save(str(out / "accounting.png"))
    print(f"wrote {out / 'accounting.png'}")


async def render_new_basics(window: MainWindow, out: Path) -> None:
    """The instruction box, the profile switcher and the authoring window."""
    box = window.instruction_box
    box.text.setText("Open a terminal and list the files on the Desktop")
    box.text.setFocus()
    env = await window.services.ensure_env()
    await window.run_view.watch_env(env)
    await asyncio.sleep(1.0)
    save(window, out, "instruction.png")

    switcher = window.switcher
    switcher.profile.showPopup()
    await asyncio.sleep(0.5)
    toolbars = switcher.mapTo(window, switcher.rect().bottomRight()).y() + 8
    popup = switcher.profile.view().window()
    shot = window.grab(QRect(0, 0, window.width(), toolbars + popup.height()))
    painter = QPainter(shot)
    origin = popup.mapToGlobal(popup.rect().topLeft()) - window.mapToGlobal(window.rect().topLeft())
    painter.drawPixmap(origin, popup.grab())
    painter.end()
    shot.save(str(out / "switcher.png"))
    print(f"wrote {out / 'switcher.png'}")
    switcher.profile.hidePopup()

    authoring = window.open_authoring()
    authoring.open_task(ROOT / "tasks" / "os" / f"{TASK}.json")  # type: ignore[attr-defined]
    authoring.resize(1400, 860)  # as placed on a 1600x1000 screen (the offscreen screen is smaller)
    await asyncio.sleep(0.8)
    save(authoring, out, "authoring.png")
    authoring.close()


async def render_wall(window: MainWindow, out: Path, scratch: Path) -> None:
    from osw_studio.ui.suite_dialog import SuiteDialog

    sys.path.insert(0, str(ROOT))
    from tests.batch.suite import write_suite

    window.resize(1600, 1000)
    window.suite_action.trigger()
    (dialog,) = [d for d in window.findChildren(SuiteDialog) if d.isVisible()]
    dialog.set_suite(str(write_suite(scratch / "suite", 4)))
    dialog.agent.setCurrentIndex(dialog.agent.findText("replay", Qt.MatchFlag.MatchStartsWith))
    dialog.envs.setValue(4)
    dialog.out.setText(str(scratch / "out"))
    dialog.run_button.click()
    wall = window.wall
    await until(
        lambda: len(wall.tiles) == 4 and all(t.step >= 2 and t.frames for t in wall.tiles.values()), 180
    )
    for tile in wall.tiles.values():
        if tile.episode is not None:
            tile.episode.pause()
    dock = window.docks["wall"]
    dock.setFloating(True)  # the wall on its own, as on a second screen
    dock.resize(1480, 700)
    await asyncio.sleep(1.5)
    save(dock, out, "wall.png")
    dock.setFloating(False)
    for tile in wall.tiles.values():
        if tile.episode is not None:
            tile.episode.resume()
    await until(lambda: not window.suite_view.running, 180)


def main() -> int:
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    only_accounting = "--accounting" in sys.argv[1:]
    only_wall = "--wall" in sys.argv[1:]
    out = Path(args[0]) if args else ROOT / "docs" / "screenshots"
    out.mkdir(parents=True, exist_ok=True)
    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    with tempfile.TemporaryDirectory(prefix="osw-studio-") as tmp:
        settings = Settings.model_validate(
            {
                "evaluation": {"screen_resolution": "1280x720", "max_steps": 10},
                "model_provider": {"model": "replay"},
                "profiles": {
                    "ui-tars-7b": {"model": "ui-tars-1.5-7b", "agent": "uitars"},
                    "qwen3-vl": {"model": "qwen3-vl-8b", "agent": "qwen3vl"},
                },
            }
        )
        services = Services(
            settings,
            Path(tmp) / "runs",
            agent_factory=lambda p, e: make_agent(p.model_copy(update={"agent": "replay"}), task=e.task),
        )
        library = TaskLibrary.from_paths([ROOT / "tasks"])
        layout = QSettings(str(Path(tmp) / "layout.ini"), QSettings.Format.IniFormat)
        window = MainWindow(library, services, qsettings=layout)
        window.resize(1600, 960)
        window.show()
        with loop:
            try:
                if only_accounting:
                    loop.run_until_complete(render_accounting(window, out, Path(tmp)))
                elif only_wall:
                    loop.run_until_complete(render_wall(window, out, Path(tmp)))
                else:
                    loop.run_until_complete(render(window, out))
            finally:
                loop.run_until_complete(window.shutdown())
    return 0


if __name__ == "__main__":
    sys.exit(main())
