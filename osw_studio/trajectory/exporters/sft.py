"""``sft-messages`` and ``sft-sharegpt``: chat SFT data, one sample per step or per episode.

Both write ``data.jsonl`` (one sample a line) and put the screenshots under ``images/<run-id>/`` (or embed
them as data URLs). ``sft-messages`` holds OpenAI chat ``messages`` whose content parts are ``text`` and
``image_url``; ``sft-sharegpt`` holds LLaMA-Factory's ShareGPT shape: ``system``, ``conversations``
(``from: human|gpt``, one ``<image>`` per image) and ``images``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import IO, Any

from osw_studio.trajectory.exporters.base import Exporter, ExportOptions, ExportRun, ImageSink
from osw_studio.trajectory.exporters.chat import ChatBuilder, Turn, to_messages, to_sharegpt


class JsonlExporter(Exporter):
    """An exporter that writes one JSON object a line to ``data.jsonl``."""

    file_name = "data.jsonl"

    def __init__(self, out: Path, options: ExportOptions) -> None:
        super().__init__(out, options)
        self.images = ImageSink(self.out, options.images)
        self._file: IO[str] = open(self.out / self.file_name, "w", encoding="utf-8")  # noqa: SIM115

    def write(self, record: dict[str, Any]) -> None:
        """Append one line."""
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")

    def close(self) -> None:
        """Close ``data.jsonl``."""
        self._file.close()


class _SftExporter(JsonlExporter):
    def __init__(self, out: Path, options: ExportOptions) -> None:
        super().__init__(out, options)
        self.chat = ChatBuilder(options, self.images)
        self.episode_level = options.per == "episode"

    def shape(self, turns: list[Turn]) -> dict[str, Any]:
        raise NotImplementedError

    def add_run(self, run: ExportRun) -> int:
        """One line per kept step, or one line for the run."""
        ids = {"run_id": run.run_id, "task_id": run.task_id, "domain": run.domain}
        if self.options.per == "episode":
            self.write({"id": run.run_id, **ids, **self.shape(self.chat.episode(run))})
            return 1
        count = 0
        for step, turns, target in self.chat.step_samples(run):
            record = self.shape([*turns, Turn("assistant", target)])
            self.write({"id": f"{run.run_id}/{step.index}", **ids, "step": step.index, **record})
            count += 1
        return count


class MessagesExporter(_SftExporter):
    """OpenAI chat messages with ``image_url`` parts."""

    name = "sft-messages"

    def shape(self, turns: list[Turn]) -> dict[str, Any]:
        """``{"messages": [...]}``."""
        return {"messages": to_messages(turns)}


class ShareGptExporter(_SftExporter):
    """ShareGPT conversations with ``<image>`` tokens and an ``images`` list."""

    name = "sft-sharegpt"

    def shape(self, turns: list[Turn]) -> dict[str, Any]:
        """``{"system", "conversations", "images"}``."""
        return to_sharegpt(turns)
