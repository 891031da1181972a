"""``parquet``: one row per step, the screenshot embedded, readable by pyarrow and Hugging Face datasets.

The file is ``data.parquet``; its schema metadata carries the ``huggingface`` features, so
``datasets.load_dataset("parquet", ...)`` shows the ``image`` column as an ``Image``. Rows are written in
row groups of bounded size, so memory does not grow with the number of runs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from osw_studio.core.actions import dump_actions
from osw_studio.trajectory.exporters.base import Exporter, ExportOptions, ExportRun, step_kind

ROWS_PER_GROUP = 256
BYTES_PER_GROUP = 64 * 1024 * 1024

IMAGE_TYPE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
SCHEMA = pa.schema(
    [
        ("run_id", pa.string()),
        ("task_id", pa.string()),
        ("domain", pa.string()),
        ("instruction", pa.string()),
        ("model", pa.string()),
        ("step", pa.int32()),
        ("source", pa.string()),
        ("verdict", pa.string()),
        ("thought", pa.string()),
        ("response", pa.string()),
        ("actions", pa.string()),
        ("proposed", pa.string()),
        ("image", IMAGE_TYPE),
        ("screen_width", pa.int32()),
        ("screen_height", pa.int32()),
        ("status", pa.string()),
        ("success", pa.bool_()),
        ("score", pa.float64()),
    ]
)


def hf_features(schema: pa.Schema) -> dict[str, Any]:
    """The Hugging Face ``features`` description of ``schema`` (``image`` is an ``Image``).

    >>> hf_features(pa.schema([("image", IMAGE_TYPE), ("step", pa.int32())]))
    {'image': {'_type': 'Image'}, 'step': {'dtype': 'int32', '_type': 'Value'}}
    """
    names = {pa.string(): "string", pa.int32(): "int32", pa.bool_(): "bool", pa.float64(): "float64"}
    features: dict[str, Any] = {}
    for f in schema:
        if f.type == IMAGE_TYPE:
            features[f.name] = {"_type": "Image"}
        else:
            features[f.name] = {"dtype": names[f.type], "_type": "Value"}
    return features


class ParquetExporter(Exporter):
    """Writes ``data.parquet``: one row per (filtered) step with its screenshot's bytes."""

    name = "parquet"
    reads_requests = False
    episode_level = False

    def __init__(self, out: Path, options: ExportOptions) -> None:
        super().__init__(out, options)
        meta = {b"huggingface": json.dumps({"info": {"features": hf_features(SCHEMA)}}).encode()}
        self._schema = SCHEMA.with_metadata(meta)
        self._writer = pq.ParquetWriter(self.staged("data.parquet"), self._schema, compression="zstd")
        self._rows: list[dict[str, Any]] = []
        self._bytes = 0

    def add_run(self, run: ExportRun) -> int:
        """Add a row per step of ``run`` that passes the filters."""
        count = 0
        for step in run.steps(requests=False):
            if not self.keeps(step):
                continue
            self.count_step(step)
            path = run.screenshot_path(step)
            image = None
            if path is not None:
                data = path.read_bytes()
                image = {"bytes": data, "path": f"{run.run_id}/{path.name}"}
                self._bytes += len(data)
            size = run.screen_size(step) or (None, None)
            self._rows.append(
                {
                    "run_id": run.run_id,
                    "task_id": run.task_id,
                    "domain": run.domain,
                    "instruction": run.meta.instruction,
                    "model": run.model,
                    "step": step.index,
                    "source": step_kind(step),
                    "verdict": step.verdict,
                    "thought": step.thought,
                    "response": step.response,
                    "actions": json.dumps(dump_actions(step.executed), ensure_ascii=False),
                    "proposed": json.dumps(dump_actions(step.proposed), ensure_ascii=False),
                    "image": image,
                    "screen_width": size[0],
                    "screen_height": size[1],
                    "status": run.status,
                    "success": run.success,
                    "score": run.score,
                }
            )
            count += 1
            if len(self._rows) >= ROWS_PER_GROUP or self._bytes >= BYTES_PER_GROUP:
                self._flush()
        return count

    def _flush(self) -> None:
        if self._rows:
            self._writer.write_table(pa.Table.from_pylist(self._rows, schema=self._schema))
        self._rows = []
        self._bytes = 0

    def close(self) -> None:
        """Write the last row group and the file footer."""
        self._flush()
        self._writer.close()
