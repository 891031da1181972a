"""The ``replay`` agent: plays a task's reference solution or a recorded run, one step per prediction.

A task's solution is the ``solution`` list of its file (:class:`~osw_studio.core.task.SolutionStep`);
a recorded run is a run store's ``steps.jsonl``, whose executed actions are replayed (steps that ran
nothing are skipped; a torn last line from a crash is ignored). After the last step it answers ``done``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from osw_studio.agent.base import Agent, Prediction, TokenCallback
from osw_studio.core.actions import Action, Done, dump_actions
from osw_studio.core.errors import OswError, TaskError
from osw_studio.core.observation import Observation
from osw_studio.core.step import StepRecord
from osw_studio.core.task import Task


class ReplayAgent(Agent):
    """Replays a fixed list of steps (each a list of actions), then says ``done``.

    Args:
        steps: The actions of each step, in order.
        source: What is replayed, for messages (``task t1's solution``, a run folder).
    """

    name = kind = "replay"
    model_name = "replay"

    def __init__(self, steps: Sequence[Sequence[Action]], *, source: str = "steps") -> None:
        super().__init__()
        self.steps = [list(step) for step in steps]
        self.source = source
        self.position = 0

    @classmethod
    def from_task(cls, task: Task) -> ReplayAgent:
        """Replay ``task``'s reference solution.

        Raises:
            TaskError: If the task has none.
        """
        if not task.solution:
            raise TaskError(
                "the task has no reference solution to replay",
                where=f"task {task.id}: $.solution",
                hint="record one, or pick a task that has a solution",
            )
        return cls([step.actions for step in task.solution], source=f"task {task.id}'s solution")

    @classmethod
    def from_run(cls, run: str | os.PathLike[str]) -> ReplayAgent:
        """Replay the executed actions of a run store (its folder or its ``steps.jsonl``).

        Raises:
            OswError: If the file cannot be read or holds no step that ran anything.
        """
        path = Path(run)
        if path.is_dir():
            path = path / "steps.jsonl"
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise OswError(f"cannot read the recorded run: {exc.strerror}", where=str(path)) from None
        steps: list[list[Action]] = []
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            try:
                record = StepRecord.model_validate_json(line)
            except ValidationError as exc:
                if number == len(lines):
                    break  # a torn last line: the run crashed mid-write
                detail = exc.errors()[0]["msg"] if exc.errors() else str(exc)
                raise OswError(f"not a step record: {detail}", where=f"{path}:{number}") from None
            if record.executed:
                steps.append(list(record.executed))
        if not steps:
            raise OswError("the recorded run has no executed actions to replay", where=str(path))
        return cls(steps, source=str(path.parent))

    def reset(self, task: Task | None = None) -> None:
        """Start again from the first step."""
        super().reset(task)
        self.position = 0

    @property
    def remaining(self) -> int:
        """Steps not yet played."""
        return max(0, len(self.steps) - self.position)

    async def predict(
        self, instruction: str, observation: Observation, *, on_token: TokenCallback | None = None
    ) -> Prediction:
        """The next recorded step, or ``done`` after the last."""
        if self.position >= len(self.steps):
            actions: list[Action] = [Done(message=f"replayed {len(self.steps)} steps of {self.source}")]
        else:
            actions = list(self.steps[self.position])
            self.position += 1
        text = json.dumps(dump_actions(actions), ensure_ascii=False)
        if on_token is not None:
            on_token(text)
        return Prediction(
            response=text,
            thought=f"replay step {min(self.position, len(self.steps))}/{len(self.steps)} of {self.source}",
            actions=actions,
            coordinate_mode="abs",
        )
