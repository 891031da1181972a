"""``osworld``: OSWorld's results layout, readable by its ``show_result.py`` and its analysis scripts.

::

    <action_space>/<observation_type>/<model>/args.json      (action_space: pyautogui or computer_13)
    <action_space>/<observation_type>/<model>/<domain>/<task_id>/traj.jsonl
    <action_space>/<observation_type>/<model>/<domain>/<task_id>/step_<n>_<timestamp>.png
    <action_space>/<observation_type>/<model>/<domain>/<task_id>/result.txt

As in OSWorld, each executed action is one ``traj.jsonl`` line (``step_num, action_timestamp, action,
response, reward, done, info, screenshot_file``) and its screenshot is the screen *after* the step (the
next step's screen, or the final screen); ``action`` is pyautogui code in screen pixels, or a
``computer_13`` object when the run spoke that. ``result.txt`` holds the score and is written only for
scored runs, so interrupted runs are not counted, as OSWorld does not count them. When several runs share
a task, the latest (by run id) wins, as a rerun does in OSWorld: an export that is given them all
(:func:`~osw_studio.trajectory.export.export_runs`) writes the latest only, and counts the others.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path
from typing import IO, Any

from osw_studio.actions.computer13 import to_dicts
from osw_studio.actions.pyautogui import render_pyautogui
from osw_studio.core.actions import Action, CallUser, Done, Fail
from osw_studio.core.step import StepRecord
from osw_studio.trajectory.exporters.base import Exporter, ExportOptions, ExportRun


def _segment(name: str) -> str:
    """A folder-name-safe version of a model name or id (OSWorld uses them as folder names).

    >>> _segment("Qwen/Qwen2.5-VL-7B"), _segment("..")
    ('Qwen_Qwen2.5-VL-7B', '_')
    """
    safe = re.sub(r"[^A-Za-z0-9._@+=-]", "_", name)
    return "_" if set(safe) <= {"."} else safe


def _stamp(epoch: float) -> str:
    """OSWorld's action timestamp (``%Y%m%d@%H%M%S``, local time as its runner writes it)."""
    return time.strftime("%Y%m%d@%H%M%S", time.localtime(epoch))


def osworld_action_space(name: str) -> str:
    """OSWorld's name for the action space a run spoke: ``computer_13``, else ``pyautogui``.

    OSWorld's UI-TARS runners (and every other agent that executes pyautogui code) file their results
    under ``pyautogui``, where its tools look.

    >>> osworld_action_space("uitars"), osworld_action_space("computer_13")
    ('pyautogui', 'computer_13')
    """
    return "computer_13" if name == "computer_13" else "pyautogui"


def action_value(action: Action, action_space: str) -> Any:
    """One action as OSWorld stores it: pyautogui code, ``DONE``/``FAIL``, or a computer_13 object.

    >>> from osw_studio.core.actions import Click
    >>> action_value(Click(x=1, y=2), "pyautogui"), action_value(Done(), "pyautogui")
    ('pyautogui.click(1, 2)', 'DONE')
    >>> action_value(Click(x=1, y=2), "computer_13")
    {'action_type': 'CLICK', 'parameters': {'button': 'left', 'x': 1, 'y': 2, 'num_clicks': 1}}
    """
    if action_space == "computer_13":
        items = to_dicts(action)
        return items[0] if len(items) == 1 else items
    if isinstance(action, Done | Fail):
        return "DONE" if isinstance(action, Done) else "FAIL"
    return render_pyautogui([action])


class OsworldExporter(Exporter):
    """Writes run stores in OSWorld's results layout."""

    name = "osworld"
    reads_requests = False
    replaces_runs = True

    def __init__(self, out: Path, options: ExportOptions) -> None:
        super().__init__(out, options)
        self._args_written: set[Path] = set()
        self.replaced = 0

    def _names(self, run: ExportRun) -> tuple[str, str]:
        settings = run.meta.settings
        action_space = osworld_action_space(
            run.meta.action_space or _setting(settings, "evaluation", "action_space") or "pyautogui"
        )
        observation = (
            run.meta.observation_type or _setting(settings, "agent", "observation_type") or "screenshot"
        )
        return action_space, observation

    def slot(self, run: ExportRun) -> object:
        """The run's task folder (a later run of the task replaces it)."""
        action_space, observation = self._names(run)
        base = self.out / _segment(action_space) / _segment(observation) / _segment(run.model)
        return base / _segment(run.domain) / _segment(run.task_id)

    def _base(self, run: ExportRun) -> tuple[Path, str]:
        action_space, observation = self._names(run)
        settings = run.meta.settings
        base = self.out / _segment(action_space) / _segment(observation) / _segment(run.model)
        if base not in self._args_written:
            base.mkdir(parents=True, exist_ok=True)
            args = {
                "action_space": action_space,
                "observation_type": observation,
                "model": run.model,
                "provider": run.meta.provider,
                "screen_width": run.meta.screen_width,
                "screen_height": run.meta.screen_height,
                "max_steps": _setting(settings, "evaluation", "max_steps"),
                "result_dir": str(self.out),
            }
            (base / "args.json").write_text(json.dumps(args, indent=4), encoding="utf-8")
            self._args_written.add(base)
        return base, action_space

    def add_run(self, run: ExportRun) -> int:
        """Write the run's task folder; return the number of ``traj.jsonl`` lines."""
        base, action_space = self._base(run)
        folder = base / _segment(run.domain) / _segment(run.task_id)
        if folder.exists():
            self.copier.wait()  # copies on their way into the folder land before it goes
            shutil.rmtree(folder)
            self.replaced += 1
        folder.mkdir(parents=True)
        with open(folder / "traj.jsonl", "w", encoding="utf-8") as traj:
            lines = self._steps(run, action_space, traj, folder)
        if run.score is not None:
            (folder / "result.txt").write_text(f"{run.score}\n", encoding="utf-8")
        return lines

    def count_run(self, run: ExportRun) -> int:
        """Count the run's steps and lines as :meth:`add_run` does, writing only ``args.json`` if first."""
        _base, action_space = self._base(run)
        return self._steps(run, action_space, None, None)

    def _steps(self, run: ExportRun, action_space: str, traj: IO[str] | None, folder: Path | None) -> int:
        lines = 0
        previous: StepRecord | None = None
        for step in run.steps(requests=False):
            if previous is not None:
                after = run.screenshot_path(step) if folder is not None else None
                lines += self._write_step(traj, folder, run, action_space, previous, after)
            previous = step
        if previous is not None:
            after = run.final_screen_path() if folder is not None else None
            lines += self._write_step(traj, folder, run, action_space, previous, after)
        return lines

    def _write_step(
        self,
        traj: IO[str] | None,
        folder: Path | None,
        run: ExportRun,
        action_space: str,
        step: StepRecord,
        after: Path | None,
    ) -> int:
        actions = [a for a in step.executed if not isinstance(a, CallUser)]
        if not actions:
            return 0
        self.count_step(step)
        if traj is None or folder is None:  # counted only
            return len(actions)
        stamp = _stamp(step.finished_at or step.started_at)
        shot = None
        if after is not None:
            shot = f"step_{step.index}_{stamp}{after.suffix}"
            self.copier.copy(after, folder / shot)
        info: dict[str, Any] = {"source": step.source, "verdict": step.verdict}
        if step.error:
            info["error"] = step.error
        for action in actions:
            line = {
                "step_num": step.index,
                "action_timestamp": stamp,
                "action": action_value(action, action_space),
                "response": step.response or "",
                "reward": 0,
                "done": isinstance(action, Done | Fail),
                "info": info,
                "screenshot_file": shot,
            }
            traj.write(json.dumps(line, ensure_ascii=False) + "\n")
        return len(actions)


def _setting(settings: dict[str, Any], section: str, key: str) -> Any:
    value = settings.get(section)
    return value.get(key) if isinstance(value, dict) else None
