r"""What a run store keeps of a step's text: replies within a cap, everything valid UTF-8.

A reply may be refused (too long, unparsable) and still be recorded; the store keeps its first
:data:`~osw_studio.core.limits.STORED_REPLY_CHARS` characters and, in ``response_chars``
(``attempts_chars`` for earlier attempts), how long it was. Lone surrogates from a model's JSON
(``"\\ud800"``) become U+FFFD, so the line always encodes.
"""

from __future__ import annotations

from typing import Any

from osw_studio.core.limits import STORED_REPLY_CHARS, bounded_prefix
from osw_studio.core.step import StepRecord
from osw_studio.core.unicode import well_formed, well_formed_data


def _cut(text: str) -> tuple[str, int | None]:
    kept, cut = bounded_prefix(well_formed(text), STORED_REPLY_CHARS)
    return kept, (len(text) if cut else None)


def bounded_step(step: StepRecord) -> StepRecord:
    """``step`` with its reply, thought and earlier attempts cut to the stored cap (a copy when changed)."""
    updates: dict[str, Any] = {}
    for name in ("response", "thought"):
        text = getattr(step, name)
        if text is not None:
            kept, length = _cut(text)
            if kept is not text:
                updates[name] = kept
            if length is not None:
                updates[f"{name}_chars"] = length
    if any(len(a.response) > STORED_REPLY_CHARS for a in step.attempts):
        cuts = [_cut(a.response) for a in step.attempts]
        updates["attempts"] = [
            a.model_copy(update={"response": kept}) for a, (kept, _) in zip(step.attempts, cuts, strict=False)
        ]
        updates["attempts_chars"] = [len(a.response) for a in step.attempts]
    return step.model_copy(update=updates) if updates else step


def encodable_step(step: StepRecord) -> StepRecord:
    """``step`` with every string made valid Unicode (for a step whose JSON would not encode)."""
    return StepRecord.model_validate(well_formed_data(step.model_dump(mode="python")))
