"""Running a typed instruction without a task file, in the app's instruction box and ``run --instruction``.

An instruction becomes a task of its own (:func:`instruction_entry`): the instruction, no setup steps (it
runs on the desktop as it is), and no evaluator of OSWorld's. Its run is recorded like any other; its
score (:func:`score_instruction`) says only whether the agent declared the instruction done, and the
run's evaluation says so. :func:`task_from_run` turns such a run into a task file's data, with the run's
executed actions as its solution draft, for the person to give it an evaluator in the authoring window.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from osw_studio.core.actions import Action, Done, dump_actions
from osw_studio.core.errors import TaskError
from osw_studio.core.task import Task
from osw_studio.tasks.load import TaskEntry
from osw_studio.trajectory.store import RunStore

INSTRUCTION_DOMAIN = "instructions"
"""The domain instruction runs are filed under."""

UNSCORED_FUNC = "infeasible"
"""The metric named in an instruction task's evaluator block (a valid OSWorld task needs one); the run is
scored by :func:`score_instruction`, never by it."""


def instruction_entry(text: str, *, now: float | None = None, folder: Path | None = None) -> TaskEntry:
    """The task an instruction runs as, with an id from the time (``instruction-20260102-030405``).

    Raises:
        TaskError: If the instruction is empty.

    >>> entry = instruction_entry("  Open the terminal. ", now=0)
    >>> entry.task.id, entry.task.instruction, entry.domain, entry.task.config
    ('instruction-19700101-000000', 'Open the terminal.', 'instructions', [])
    """
    instruction = text.strip()
    if not instruction:
        raise TaskError("the instruction is empty", hint="type what the agent should do")
    stamp = time.strftime("%Y%m%d-%H%M%S", time.gmtime(time.time() if now is None else now))
    task = Task.model_validate(
        {
            "id": f"instruction-{stamp}",
            "instruction": instruction,
            "config": [],
            "evaluator": {"func": UNSCORED_FUNC},
        }
    )
    where = folder or Path.cwd()
    return TaskEntry(task=task, path=where / f"{task.id}.json", domain=INSTRUCTION_DOMAIN)


class InstructionEvaluation(BaseModel):
    """What an instruction run's evaluation says: no evaluator, only whether the agent said it is done."""

    score: float
    reason: str


async def score_instruction(_env: object, _task: Task, actions: Sequence[Action]) -> InstructionEvaluation:
    """1.0 when the agent's last action declared the instruction done, else 0.0 (no evaluator checked it)."""
    done = bool(actions) and isinstance(actions[-1], Done)
    return InstructionEvaluation(
        score=1.0 if done else 0.0,
        reason="an instruction has no evaluator: the score only says whether the agent said DONE",
    )


def task_from_run(run: RunStore) -> dict[str, Any]:
    """A task file's data from an instruction run: its instruction, and its executed actions as solution.

    Raises:
        StoreError: If the run cannot be read.
    """
    meta = run.meta
    solution = [{"actions": dump_actions(step.executed)} for step in run.iter_steps() if step.executed]
    return {
        "id": meta.task_id,
        "instruction": meta.instruction,
        "config": [],
        "evaluator": {"func": UNSCORED_FUNC},
        "solution": solution,
    }
