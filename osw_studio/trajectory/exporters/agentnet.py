"""``agentnet``: one JSON line per run in the AgentNet / OpenCUA trajectory shape, in OpenCUA's action syntax.

Each line of ``data.jsonl`` holds ``task_id, instruction, traj, task_completed`` (plus ``run_id``,
``domain``, ``score``); each ``traj`` entry is ``{index, image, value{code, thought, action, source,
verdict}}``. ``code`` is written as OpenCUA's models write it and as its reply parser reads it:
pyautogui calls with keyword arguments on normalised 0-1 coordinates (``--coords`` changes that),
``computer.wait()`` for a wait and ``computer.terminate(status='success'|'failure')`` for the end. A
pointed scroll or mouse button press moves the pointer first (OpenCUA rescales only pointer calls).
``thought`` is the model's on steps a model decided, else the person's note or a neutral sentence.

"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from osw_studio.actions.coords import CoordinateSpace
from osw_studio.core.step import StepRecord
from osw_studio.trajectory.exporters.base import ExportOptions, ExportRun
from osw_studio.trajectory.exporters.chat import DEFAULT_SCREEN
from osw_studio.trajectory.exporters.describe import describe_actions
from osw_studio.trajectory.exporters.opencua_code import agentnet_code as agentnet_code
from osw_studio.trajectory.exporters.replies import neutral_thought
from osw_studio.trajectory.exporters.samples import MODEL_AGENTS, person_note
from osw_studio.trajectory.exporters.sft import JsonlExporter


class AgentNetExporter(JsonlExporter):
    """Writes ``data.jsonl`` with one trajectory per run."""

    name = "agentnet"
    reads_requests = False

    def __init__(self, out: Path, options: ExportOptions) -> None:
        super().__init__(out, options)
        self.coords = options.coords or "norm"

    def thought(self, run: ExportRun, step: StepRecord) -> str:
        """The step's thought: the model's when a model decided it, else a person's or a neutral one."""
        model_decided = step.source == "agent" and step.verdict in ("auto", "approved")
        if model_decided and step.thought and (step.request is not None or run.meta.agent in MODEL_AGENTS):
            return step.thought
        return person_note(step) or neutral_thought(step.executed)

    def add_run(self, run: ExportRun) -> int:
        """One line for the run."""
        traj: list[dict[str, Any]] = []
        space: CoordinateSpace | None = None
        for step in run.steps(requests=False):
            if space is None:
                screen = run.screen_size(step) or DEFAULT_SCREEN
                space = CoordinateSpace(screen=screen, mode=self.coords)
            code = agentnet_code(step.executed, space)
            if not code:
                continue
            path = run.screenshot_path(step)
            traj.append(
                {
                    "index": len(traj),
                    "image": self.images.ref(run, path) if path is not None else None,
                    "value": {
                        "code": code,
                        "thought": self.thought(run, step),
                        "action": describe_actions(step.executed),
                        "source": step.source,
                        "verdict": step.verdict,
                    },
                }
            )
            self.count_step(step)
        if space is not None:
            self.card.spaces[f"{space.mode} (OpenCUA pyautogui)"] += len(traj)
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

    def card_details(self) -> list[str]:
        """How the trajectories are written."""
        return [
            "`data.jsonl`: one trajectory per run (`task_id, instruction, traj, task_completed`); each "
            "`traj` entry holds `image` and `value{code, thought, action, source, verdict}`.",
            "`code` is OpenCUA's action syntax: pyautogui calls with keyword arguments on 0-1 coordinates, "
            "`computer.wait()`, `computer.terminate(status='success'|'failure')`.",
        ]
