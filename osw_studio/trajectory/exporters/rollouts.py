"""``rollouts``: RL rollouts in DART-GUI's rollout table layout, grouped by task and filtered by reward.

Each run becomes a folder ``<run-id>/`` (its ``split_dir``) with ``final_messages.json``: the last request
the policy was sent and its reply (the recorded request, so the history is what the model saw; runs
without recorded requests are rebuilt with the profile), one chunk per policy step in ``chunks.jsonl``
(each step's own request and reply), ``messages.json`` (the whole run as one conversation, the model's
own replies on the steps it chose) and its screenshots under ``screens/``. ``rollouts.parquet`` holds one
row per run: DART's ``trace_id, task_id, trajectory_id, group_id, model_version, instruction, reward,
split_dir, num_chunks`` plus ``run_id, num_steps, domain, status, success, messages``. Failed, errored
and interrupted runs are rows too (reward 0 when there is no score), so a trainer sees every attempt of
a group.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from osw_studio.trajectory.exporters.base import Exporter, ExportOptions, ExportRun, ImageSink, remember
from osw_studio.trajectory.exporters.chat import ChatBuilder, to_messages
from osw_studio.trajectory.exporters.samples import SampleBuilder
from osw_studio.trajectory.requests import openai_messages

ROWS_PER_GROUP = 1024

SCHEMA = pa.schema(
    [
        ("trace_id", pa.string()),
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
        ("split_dir", pa.string()),
        ("num_chunks", pa.int32()),
    ]
)


class RolloutsExporter(Exporter):
    """Writes a folder per run and ``rollouts.parquet``."""

    name = "rollouts"

    def __init__(self, out: Path, options: ExportOptions) -> None:
        super().__init__(out, options)
        self.sink = ImageSink(self.out, self.image_mode, "{run_id}/screens", self.copier)
        self.chat = ChatBuilder(options, self.sink)
        self.samples = SampleBuilder(options)
        self._urls: tuple[str, dict[str, str]] = ("", {})
        self._writer = pq.ParquetWriter(self.staged("rollouts.parquet"), SCHEMA)
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
        chunks = 0
        final: list[dict[str, Any]] = []
        with open(folder / "chunks.jsonl", "w", encoding="utf-8") as out:
            for sample in self.samples.samples(run):
                if sample.target is None:
                    continue
                convo = [*sample.prompt, {"role": "assistant", "content": sample.target}]
                final = openai_messages(convo, lambda ref: self._image(run, ref))
                chunk = {"step": sample.step.index, "source": sample.source, "prompt": sample.origin}
                out.write(json.dumps({**chunk, "messages": final}, ensure_ascii=False) + "\n")
                self.card.count(sample.source, origin=sample.origin)
                chunks += 1
        (folder / "final_messages.json").write_text(json.dumps(final, ensure_ascii=False), encoding="utf-8")
        group = f"{run.domain}/{run.task_id}"
        number = self._per_group[group]
        self._per_group[group] += 1
        extra = run.meta.model_extra or {}
        self._rows.append(
            {
                "trace_id": run.run_id,
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
                "split_dir": run.run_id,
                "num_chunks": chunks,
            }
        )
        if len(self._rows) >= ROWS_PER_GROUP:
            self._flush()
        return 1

    def _image(self, run: ExportRun, ref: Any) -> str:
        name = str(ref.get("file") or "")
        if self._urls[0] != run.run_id:  # the chunks of a run repeat its history images
            self._urls = (run.run_id, {})
        url = self._urls[1].get(name)
        if url is None:
            path = run.screen_file(name)
            url = remember(
                self._urls[1], name, self.sink.ref(run, path, ref.get("mime")) if path is not None else name
            )
        return url

    def _flush(self) -> None:
        if self._rows:
            self._writer.write_table(pa.Table.from_pylist(self._rows, schema=SCHEMA))
        self._rows = []

    def close(self) -> None:
        """Write the last rows and the file footer."""
        self._flush()
        self._writer.close()
