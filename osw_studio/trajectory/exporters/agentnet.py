"""``agentnet``: one JSON line per run in the AgentNet / OpenCUA trajectory shape.

Each line of ``data.jsonl`` holds ``task_id, instruction, traj, task_completed`` (plus ``run_id``,
``domain``, ``score``); each ``traj`` entry is ``{index, image, value{code, thought, action, source,
verdict}}`` with ``code`` in pyautogui on normalised 0-1 coordinates (as AgentNet writes it; ``--coords``
changes that) and the end of a task as ``computer.terminate(status=...)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from osw_studio.actions.coords import CoordinateSpace
from osw_studio.actions.pyautogui import render_pyautogui
from osw_studio.core.actions import Action, CallUser, Done, Fail
from osw_studio.trajectory.exporters.base import ExportOptions, ExportRun
from osw_studio.trajectory.exporters.chat import DEFAULT_SCREEN
from osw_studio.trajectory.exporters.describe import describe_actions
from osw_studio.trajectory.exporters.sft import JsonlExporter


def agentnet_code(actions: list[Action], space: CoordinateSpace) -> str:
    """Actions as AgentNet code: pyautogui lines, and ``computer.terminate`` for done and fail.

    >>> agentnet_code([Done()], CoordinateSpace(mode="norm"))
    "computer.terminate(status='success')"
    """
    lines = []
    pending: list[Action] = []
    for action in actions:
        if isinstance(action, Done | Fail):
            if pending:
                lines.append(render_pyautogui(pending, space))
                pending = []
            status = "success" if isinstance(action, Done) else "failure"
            lines.append(f"computer.terminate(status={status!r})")
        elif not isinstance(action, CallUser):
            pending.append(action)
    if pending:
        lines.append(render_pyautogui(pending, space))
    return "\n".join(lines)


class AgentNetExporter(JsonlExporter):
    """Writes ``data.jsonl`` with one trajectory per run."""

    name = "agentnet"

    def __init__(self, out: Path, options: ExportOptions) -> None:
        super().__init__(out, options)
        self.coords = options.coords or "norm"

    def add_run(self, run: ExportRun) -> int:
        """One line for the run."""
        traj: list[dict[str, Any]] = []
        space: CoordinateSpace | None = None
        for step in run.steps():
            if not step.executed:
                continue
            if space is None:
                screen = run.screen_size(step) or DEFAULT_SCREEN
                space = CoordinateSpace(screen=screen, mode=self.coords)
            path = run.store.screenshot_path(step)
            traj.append(
                {
                    "index": len(traj),
                    "image": self.images.ref(run, path) if path is not None else None,
                    "value": {
                        "code": agentnet_code(step.executed, space),
                        "thought": step.thought if step.verdict != "edited" else None,
                        "action": describe_actions(step.executed),
                        "source": step.source,
                        "verdict": step.verdict,
                    },
                }
            )
        self.write(
            {
                "task_id": run.task_id,
                "instruction": run.meta.instruction,
                "traj": traj,
                "task_completed": run.success,
                "run_id": run.run_id,
                "domain": run.domain,
                "score": run.score,
            }
        )
        return 1
