"""Desktop app figures: event-loop lag during a run with the live viewer, viewer fps, cold start.

- lag: a 10 ms ticker on the app's qasync loop measures how late it wakes while an episode runs on the
  local sandbox (a zero-latency scripted agent typing into xterm) and the viewer shows the live stream;
  p50 / p99 over every tick (target p99 <= 50 ms).
- viewer fps: while the guest screen changes all the time (a clock in xterm), the frames the guest sent
  in a window of time (numbered as they arrive) and, of those very frames, the ones the viewer painted:
  both divided by the same window, so viewer fps <= guest fps and their ratio is the share of the stream
  the viewer showed (target >= 25 fps, ratio ~1). The load average is recorded with the figures.
- cold start: a fresh process from spawn to the main window shown, median of 5 (target <= 2 s).
- wall (``python bench/ui.py wall``): an 8-env suite on the local sandbox with every task held paused
  and a clock changing each desktop, the Wall showing all eight: the loop's lag p99 over 10 s (target
  <= 50 ms), each tile's frames a second (target >= 2) and the app's memory (RSS) added per env and tile,
  against the window before the suite; written under "ui_wall".

Prints a table and writes the figures under "ui" in bench/results.json.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import qasync
from PySide6.QtWidgets import QApplication

from osw_studio.agent.base import Agent, Prediction
from osw_studio.core.actions import Press, Typing
from osw_studio.core.observation import Observation
from osw_studio.settings import Settings
from osw_studio.tasks import TaskEntry, TaskLibrary
from osw_studio.ui.main_window import MainWindow
from osw_studio.ui.services import Services

RESULTS = Path(__file__).with_name("results.json")
ROOT = Path(__file__).resolve().parent.parent
TARGETS = {"lag_p99_ms": 50.0, "viewer_fps": 25.0, "cold_start_s": 2.0}
WALL_TARGETS = {"lag_p99_ms": 50.0, "tile_fps_min": 2.0}
WALL_ENVS = 8
STEPS = 40


class TypingAgent(Agent):
    """A zero-latency agent: types a line into the focused xterm each step, then says done."""

    name = kind = "bench"
    model_name = "bench-typing"

    async def predict(self, instruction: str, observation: Observation, *, on_token=None) -> Prediction:  # type: ignore[no-untyped-def]
        n = len(self.history) + 1
        if n >= STEPS:
            return Prediction(response="DONE", actions=[])
        text = f"echo step {n} $(date +%N)"
        if on_token:
            for part in text.split():
                on_token(part + " ")
        return Prediction(response=text, actions=[Typing(text=text), Press(key="enter")])


async def measure_run(window: MainWindow, entry: TaskEntry) -> dict[str, float]:
    env = await window.services.ensure_env()
    # A screen that never stops changing: a clock printed every 5 ms into xterm, by one process (a shell
    # loop forking `date` 200 times a second would load the machine more than the app under test).
    clock = (
        "import time\nwhile True:\n"
        "    print(time.strftime('%T'), time.time_ns(), flush=True)\n    time.sleep(0.005)"
    )
    await env.guest.launch(["xterm", "-geometry", "120x40+0+0", "-e", "python3", "-c", clock])
    await asyncio.sleep(1.0)
    controller = await window.run_view.start_run(entry, "auto")
    assert controller is not None
    loop = asyncio.get_running_loop()
    lags: list[float] = []
    stream = window.viewer.stream
    assert stream is not None
    start_number, start = 0, 0.0
    while controller.running:
        t = loop.time()
        await asyncio.sleep(0.01)
        lags.append(max(0.0, loop.time() - t - 0.01))
        if not start and stream.decoded:
            start_number, start = stream.received, loop.time()
    run_sent, run_shown, run_time = await sent_and_shown(window, start_number, start)
    # the same on a changing screen with no run going on
    sent, shown, elapsed = await sent_and_shown(window, stream.received, loop.time(), wait=5.0)
    lags.sort()
    return {
        "lag_p50_ms": round(statistics.median(lags) * 1000, 2),
        "lag_p99_ms": round(lags[int(len(lags) * 0.99) - 1] * 1000, 2),
        "lag_max_ms": round(lags[-1] * 1000, 2),
        "viewer_fps_during_run": round(run_shown / run_time, 1),
        "guest_stream_fps_during_run": round(run_sent / run_time, 1),
        "viewer_fps": round(shown / elapsed, 1),
        "guest_stream_fps": round(sent / elapsed, 1),  # frames the guest sent: the viewer's upper limit
        "viewer_shown_share": round(shown / sent, 3) if sent else 0.0,
        "frames_dropped": float(stream.dropped),
        "steps": float(len(controller.episode.steps)),
        "load_avg_1min": round(os.getloadavg()[0], 2),
    }


async def sent_and_shown(
    window: MainWindow, after: int, since: float, wait: float = 0.0
) -> tuple[int, int, float]:
    """Frames the guest sent from ``since`` (numbers above ``after``) until now (after ``wait`` seconds),
    the number of those the viewer painted, and the seconds between."""
    loop = asyncio.get_running_loop()
    await asyncio.sleep(wait)
    stream = window.viewer.stream
    assert stream is not None
    last, elapsed = stream.received, loop.time() - since
    await asyncio.sleep(0.5)  # the last frames sent are still being decoded and painted
    shown = sum(1 for n in set(window.viewer.canvas.painted_numbers) if after < n <= last)
    return last - after, shown, elapsed


def cold_start() -> float:
    code = (
        "import time, argparse;"
        "from PySide6.QtCore import QTimer;"
        "from PySide6.QtWidgets import QApplication;"
        "import osw_studio.app as a;"
        "QTimer.singleShot(0, lambda: (print('shown', flush=True), QApplication.quit()));"
        "a.main(argparse.Namespace(config=None))"
    )
    env = {**os.environ, "OSW_STUDIO_NO_ENV": "1", "QT_QPA_PLATFORM": "offscreen"}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, env=env, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    shown = time.perf_counter() - start
    proc.wait(timeout=30)
    assert line.strip() == "shown", line
    return shown


def rss_mb() -> float:
    """This process's resident memory in MiB (Linux)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def measure_wall(window: MainWindow, tmp: Path) -> dict[str, float]:
    from osw_studio.ui.suite_dialog import SuiteDialog
    from tests.batch.suite import write_suite

    loop = asyncio.get_running_loop()
    await asyncio.sleep(1.0)
    before = rss_mb()
    window.suite_action.trigger()
    (dialog,) = [d for d in window.findChildren(SuiteDialog) if d.isVisible()]
    dialog.set_suite(str(write_suite(tmp / "suite", WALL_ENVS)))
    dialog.envs.setValue(WALL_ENVS)
    dialog.out.setText(str(tmp / "out"))
    dialog.run_button.click()
    wall = window.wall
    clock = "import time\nwhile True:\n    print(time.time_ns(), flush=True)\n    time.sleep(0.05)"
    launched: set[str] = set()
    async with asyncio.timeout(600):
        while len(launched) < WALL_ENVS:
            for tile in wall.tiles.values():
                episode = tile.episode
                if episode is not None and not episode.paused:
                    episode.pause()
                ready = episode is not None and episode.paused and episode.state.value != "resetting"
                if ready and episode is not None and tile.name not in launched:
                    launched.add(tile.name)
                    await episode.env.guest.launch(
                        ["xterm", "-geometry", "80x30+0+0", "-e", "python3", "-c", clock]
                    )
            await asyncio.sleep(0.05)
    await asyncio.sleep(3.0)
    frames = {t.name: t.frames for t in wall.tiles.values()}
    lags: list[float] = []
    start = loop.time()
    while loop.time() - start < 10.0:
        t = loop.time()
        await asyncio.sleep(0.01)
        lags.append(max(0.0, loop.time() - t - 0.01))
    elapsed = loop.time() - start
    fps = sorted((t.frames - frames[t.name]) / elapsed for t in wall.tiles.values())
    during = rss_mb()
    for tile in wall.tiles.values():
        if tile.episode is not None:
            tile.episode.resume()
    async with asyncio.timeout(600):
        while window.suite_view.running:  # noqa: ASYNC110 (a view's state has no event to await)
            await asyncio.sleep(0.2)
    lags.sort()
    return {
        "envs": float(WALL_ENVS),
        "lag_p50_ms": round(statistics.median(lags) * 1000, 2),
        "lag_p99_ms": round(lags[int(len(lags) * 0.99) - 1] * 1000, 2),
        "lag_max_ms": round(lags[-1] * 1000, 2),
        "tile_fps_min": round(fps[0], 2),
        "tile_fps_median": round(statistics.median(fps), 2),
        "rss_before_mb": round(before, 1),
        "rss_wall_mb": round(during, 1),
        "rss_added_per_tile_mb": round((during - before) / WALL_ENVS, 1),
    }


def main_wall() -> None:
    load_start = os.getloadavg()[0]
    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    library = TaskLibrary.from_paths([ROOT / "tasks" / "os" / "write-hello-file.json"])
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.model_validate({"evaluation": {"screen_resolution": "1280x720", "max_steps": 6}})
        services = Services(settings, Path(tmp) / "runs")
        from PySide6.QtCore import QSettings

        window = MainWindow(
            library, services, qsettings=QSettings(str(Path(tmp) / "l.ini"), QSettings.Format.IniFormat)
        )
        window.resize(1920, 1080)
        window.show()
        try:
            with loop:
                figures = loop.run_until_complete(measure_wall(window, Path(tmp)))
                loop.run_until_complete(window.shutdown())
        finally:
            window.close()
    figures["load_avg_1min_start"] = round(load_start, 2)
    for key, value in figures.items():
        print(f"{key:<24}{value:>14}{WALL_TARGETS.get(key, '')!s:>10}")
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    data["ui_wall"] = {**figures, "tile": [480, 3], "targets": WALL_TARGETS}
    RESULTS.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


def main() -> None:
    if sys.argv[1:] == ["wall"]:
        main_wall()
        return
    load_start = os.getloadavg()[0]
    cold = [cold_start() for _ in range(5)]
    app = QApplication.instance() or QApplication([])
    loop = qasync.QEventLoop(app)
    asyncio.set_event_loop(loop)
    library = TaskLibrary.from_paths([ROOT / "tasks"])
    entry = library.get("write-hello-file")
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings.model_validate(
            {"evaluation": {"screen_resolution": "1920x1080", "max_steps": STEPS}}
        )
        services = Services(settings, Path(tmp) / "runs", agent_factory=lambda p, e: TypingAgent())
        from PySide6.QtCore import QSettings

        window = MainWindow(
            library, services, qsettings=QSettings(str(Path(tmp) / "l.ini"), QSettings.Format.IniFormat)
        )
        window.show()
        try:
            with loop:
                figures = loop.run_until_complete(measure_run(window, entry))
                loop.run_until_complete(services.aclose())
        finally:
            window.close()
    figures["cold_start_s"] = round(statistics.median(cold), 3)
    figures["load_avg_1min_start"] = round(load_start, 2)
    print(f"{'figure':<24}{'median/value':>14}{'target':>10}")
    for key, value in figures.items():
        target = TARGETS.get(key.replace("_during_run", ""), "")
        print(f"{key:<24}{value:>14}{target!s:>10}")
    data = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    data["ui"] = {**figures, "screen": [1920, 1080], "cold_start_runs": 5, "targets": TARGETS}
    RESULTS.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
