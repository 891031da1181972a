"""``preference``: a DPO pair for every step a person edited.

Each line of ``data.jsonl`` (TRL's conversational preference shape) holds ``prompt`` (the chat messages up
to that step, screenshots included), ``chosen`` (the person's actions, written in the target model's
output format) and ``rejected`` (the model's own reply). Steps a person performed alone have no model
reply to reject and are not pairs.
"""

from __future__ import annotations

from pathlib import Path

from osw_studio.core.step import StepRecord
from osw_studio.trajectory.exporters.base import ExportOptions, ExportRun, step_kind
from osw_studio.trajectory.exporters.chat import ChatBuilder, Turn, to_messages
from osw_studio.trajectory.exporters.sft import JsonlExporter


def _is_edit(step: StepRecord) -> bool:
    return step_kind(step) == "edited" and bool(step.response or step.proposed)


class PreferenceExporter(JsonlExporter):
    """Writes ``data.jsonl`` with ``prompt``, ``chosen`` and ``rejected`` messages."""

    name = "preference"
    episode_level = False

    def __init__(self, out: Path, options: ExportOptions) -> None:
        super().__init__(out, options)
        self.chat = ChatBuilder(options, self.images)

    def add_run(self, run: ExportRun) -> int:
        """One pair per edited step."""
        count = 0
        for step, turns, chosen in self.chat.step_samples(run, select=_is_edit):
            rejected = step.response or self.chat.profile.render(step.proposed, self.chat.space(run, step))
            self.write(
                {
                    "id": f"{run.run_id}/{step.index}",
                    "run_id": run.run_id,
                    "task_id": run.task_id,
                    "domain": run.domain,
                    "step": step.index,
                    "prompt": to_messages(turns),
                    "chosen": to_messages([Turn("assistant", chosen)]),
                    "rejected": to_messages([Turn("assistant", rejected)]),
                }
            )
            count += 1
        return count
