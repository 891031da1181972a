"""``rollouts``: RL rollouts, for trainers that group runs by task and filter them by reward.

Each run becomes ``<run-id>/messages.json`` (the whole conversation, the model's own replies on the steps
it chose, screenshots under ``<run-id>/screens/``), and ``rollouts.parquet`` holds one row per run:
``run_id, trajectory_id, task_id, group_id, model_version, instruction, reward, num_steps`` plus
``domain, status, success, messages``. Failed, errored and interrupted runs are rows too (reward 0 when
there is no score), so a trainer sees every attempt of a group.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from osw_studio.trajectory.exporters.base import Exporter, ExportOptions, ExportRun, ImageSink
from osw_studio.trajectory.exporters.chat import ChatBuilder, to_messages

ROWS_PER_GROUP = 1024

SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("trajectory_id", pa.string()),
        ("task_id", pa.string()),
        ("group_id", pa.string()),
        ("model_version", pa.string()),
        ("instruction", pa.string()),
        ("reward", pa.float64()),
        ("num_steps", pa.int32()),
        ("domain", pa.string()),
        ("status", pa.string()),
        ("success", pa.bool_()),
        ("messages", pa.string()),
    ]
)


class RolloutsExporter(Exporter):
    """Writes a folder per run and ``rollouts.parquet``."""

    name = "rollouts"

    def __init__(self, out: Path, options: ExportOptions) -> None:
        super().__init__(out, options)
        self.chat = ChatBuilder(options, ImageSink(self.out, self.image_mode, "{run_id}/screens"))
        self._writer = pq.ParquetWriter(self.out / "rollouts.parquet", SCHEMA)
        self._rows: list[dict[str, Any]] = []
        # Rollouts per group so far; one counter per task, not per run.
        self._per_group: Counter[str] = Counter()

    def add_run(self, run: ExportRun) -> int:
        """Write the run's folder and its row."""
        turns = self.chat.episode(run, raw=True)
        folder = self.out / run.run_id
        folder.mkdir(parents=True, exist_ok=True)
        messages = {"run_id": run.run_id, "task_id": run.task_id, "messages": to_messages(turns)}
        (folder / "messages.json").write_text(json.dumps(messages, ensure_ascii=False), encoding="utf-8")
        group = f"{run.domain}/{run.task_id}"
        number = self._per_group[group]
        self._per_group[group] += 1
        extra = run.meta.model_extra or {}
        self._rows.append(
            {
                "run_id": run.run_id,
                "trajectory_id": f"{group}#{number}",
                "task_id": run.task_id,
                "group_id": group,
                "model_version": str(extra.get("model_version") or run.model),
                "instruction": run.meta.instruction,
                "reward": run.score if run.score is not None else 0.0,
                "num_steps": run.store.count_steps(),
                "domain": run.domain,
                "status": run.status,
                "success": run.success,
                "messages": f"{run.run_id}/messages.json",
            }
        )
        if len(self._rows) >= ROWS_PER_GROUP:
            self._flush()
        return 1

    def _flush(self) -> None:
        if self._rows:
            self._writer.write_table(pa.Table.from_pylist(self._rows, schema=SCHEMA))
        self._rows = []

    def close(self) -> None:
        """Write the last rows and the file footer."""
        self._flush()
        self._writer.close()
