"""``preference``: DPO pairs in TRL's vision layout, both sides in the model's own output format.

A pair is a prompt (the request the model was sent at a step) with two replies to it:

- a person's edit: ``chosen`` is the person's actions written as the model writes replies (same action
  language, coordinate space and thought structure), ``rejected`` the model's raw reply;
- a skipped proposal: ``rejected`` is the skipped reply, ``chosen`` what was done next on the same
  screen (the model's next reply as approved or run, or a person's correction).

Each line of ``data.jsonl`` holds TRL's conversational preference columns with images apart, as its
vision DPO expects: ``images`` (the prompt's images in order, paths beside the data or data URLs) and
``prompt`` messages whose content parts are ``{"type": "text", "text"}`` and ``{"type": "image"}``
placeholders, one per image; ``chosen`` and ``rejected`` are one assistant message each.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from osw_studio.trajectory.exporters.base import ExportRun
from osw_studio.trajectory.exporters.samples import Sample
from osw_studio.trajectory.exporters.sft import SampleExporter
from osw_studio.trajectory.requests import IMAGE_REF


def vision_messages(messages: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[Mapping[str, Any]]]:
    """Messages with image placeholders (TRL's layout), and the image references they stand for.

    >>> vision_messages([{"role": "user", "content": [{"type": "image_ref", "file": "a.png"}, {"type": "text", "text": "hi"}]}])
    ([{'role': 'user', 'content': [{'type': 'image'}, {'type': 'text', 'text': 'hi'}]}], [{'type': 'image_ref', 'file': 'a.png'}])
    """  # noqa: E501
    out: list[dict[str, Any]] = []
    refs: list[Mapping[str, Any]] = []
    for message in messages:
        content = message.get("content")
        parts: list[dict[str, Any]] = []
        if isinstance(content, str):
            parts.append({"type": "text", "text": content})
        else:
            for part in content or []:
                if isinstance(part, Mapping) and part.get("type") == IMAGE_REF:
                    refs.append(part)
                    parts.append({"type": "image"})
                elif isinstance(part, Mapping) and part.get("type") == "text":
                    parts.append({"type": "text", "text": part.get("text", "")})
        out.append({"role": message.get("role"), "content": parts})
    return out, refs


def _reply(text: str) -> list[dict[str, Any]]:
    return [{"role": "assistant", "content": [{"type": "text", "text": text}]}]


class PreferenceExporter(SampleExporter):
    """Writes ``data.jsonl`` with ``images``, ``prompt``, ``chosen`` and ``rejected``."""

    name = "preference"
    episode_level = False

    def card_details(self) -> list[str]:
        """How TRL reads the pairs."""
        return [
            "`data.jsonl`: TRL's conversational preference format with images apart (`images`, "
            '`prompt`, `chosen`, `rejected`): load with `datasets.load_dataset("json", ...)` and train '
            "with TRL's DPO trainer and a vision processor; image paths are relative to this folder.",
            *super().card_details(),
        ]

    def add_run(self, run: ExportRun) -> int:
        """One pair per edited step and per skipped proposal followed by a step on its screen."""
        count = 0
        skipped: Sample | None = None
        for sample in self.samples.samples(run):
            if sample.step.verdict == "skipped":
                skipped = sample
                continue
            pair: tuple[Sample, str, str] | None = None
            if skipped is not None and sample.target is not None:
                assert skipped.rejected is not None
                pair = (skipped, sample.target, skipped.rejected)
            elif sample.rejected is not None and sample.target is not None:
                pair = (sample, sample.target, sample.rejected)
            skipped = None
            if pair is None or not self.keeps(sample.step):
                continue
            base, chosen, rejected = pair
            chosen, rejected = self.rescaled(run, base, chosen), self.rescaled(run, base, rejected)
            base_prompt = base.prompt
            if self.rescaler is not None and base.space is not None:
                base_prompt = self.rescaler.messages(base_prompt, self.language(run, base), base.space)
            prompt, refs = vision_messages(base_prompt)
            self.write(
                {
                    "id": f"{run.run_id}/{base.step.index}",
                    "run_id": run.run_id,
                    "task_id": run.task_id,
                    "domain": run.domain,
                    "step": base.step.index,
                    "source": "skipped" if base is not sample else sample.source,
                    "prompt_origin": base.origin,
                    "images": [self.image_url(run, ref) for ref in refs],
                    "prompt": prompt,
                    "chosen": _reply(chosen),
                    "rejected": _reply(rejected),
                }
            )
            self.count(run, base)
            count += 1
        return count
