"""A key the model echoes in a trivial encoding (hex, reversed, split over lines or over pieces of
typing) never reaches a run store or an export."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from osw_studio.core.actions import Done, Typing
from osw_studio.core.step import StepRecord
from osw_studio.core.task import Task
from osw_studio.runner.store import RunStoreWriter
from osw_studio.trajectory.export import export_options, export_runs
from osw_studio.trajectory.scrub import Scrubber

KEY = "sk-live-0123456789abcdefghij"

FORMS = {
    "hex": KEY.encode().hex(),
    "HEX": KEY.encode().hex().upper(),
    "hex-escapes": "".join(f"\\x{b:02x}" for b in KEY.encode()),
    "hex-spaced": " ".join(f"{b:02x}" for b in KEY.encode()),
    "hex-0x": ", ".join(f"0x{b:02X}" for b in KEY.encode()),
    "reversed": KEY[::-1],
    "lines": "\n".join(KEY[i : i + 5] for i in range(0, len(KEY), 5)),
    "escaped-lines": "\\n".join(KEY[i : i + 7] for i in range(0, len(KEY), 7)),
    "quoted-parts": '" + "'.join(KEY[i : i + 6] for i in range(0, len(KEY), 6)),
    "spaced": " ".join(KEY),
}


@pytest.mark.parametrize("name", sorted(FORMS))
def test_a_key_in_a_trivial_encoding_is_scrubbed(name: str) -> None:
    encoded = FORMS[name]
    text = Scrubber(secrets=[KEY]).text(f"here it is: {encoded} (done)")
    assert encoded not in text and "[REDACTED]" in text, text


def test_ordinary_text_is_left_alone() -> None:
    scrubber = Scrubber(secrets=[KEY])
    for text in ("0123456789abcdef " * 4, "sk-live is a prefix", "jihgfedcba is backwards"):
        assert scrubber.text(text) == text


def test_a_key_typed_in_pieces_or_spread_over_message_parts_is_scrubbed_in_every_piece() -> None:
    pieces = [KEY[:9], KEY[9:18], KEY[18:]]
    step = StepRecord(
        index=1,
        proposed=[Typing(text=p) for p in pieces],
        executed=[Typing(text="hello"), *(Typing(text=p) for p in pieces)],
    )
    clean = Scrubber(secrets=[KEY]).step(step)
    assert [a.text for a in clean.executed] == ["hello", "[REDACTED]", "[REDACTED]", "[REDACTED]"]  # type: ignore[attr-defined]
    assert all(a.text == "[REDACTED]" for a in clean.proposed)  # type: ignore[attr-defined]
    request = {"messages": [{"role": "assistant", "content": [{"type": "text", "text": p} for p in pieces]}]}
    data = Scrubber(secrets=[KEY]).step_data({"index": 1, "request": request})
    assert KEY not in str(data) and not any(p in str(data) for p in pieces), data


def test_encoded_keys_reach_no_export(tmp_path: Path) -> None:
    task = Task.model_validate({"id": "leak", "instruction": "x", "evaluator": {"func": "infeasible"}})
    store = RunStoreWriter.create(tmp_path / "runs", task, domain="os", model="m", secrets=[KEY])
    for index, (name, encoded) in enumerate(sorted(FORMS.items()), start=1):
        store.write_step(
            StepRecord(index=index, response=f"{name}: {encoded}", executed=[Typing(text=encoded)])
        )
    store.write_step(
        StepRecord(index=len(FORMS) + 1, executed=[Typing(text=KEY[:14]), Typing(text=KEY[14:])])
    )
    store.close()
    out = tmp_path / "out"
    export_runs([tmp_path / "runs"], "sft-messages", out, export_options())
    text = "\n".join(
        p.read_bytes().decode("utf-8") for p in [*out.rglob("*"), *store.path.rglob("*")] if p.is_file()
    )
    for name, encoded in FORMS.items():
        assert encoded not in text and encoded.replace("\n", "\\n") not in text, name
    assert KEY[:14] not in text and KEY[14:] not in text
    assert base64.b64encode(KEY.encode()).decode()[:20] not in text


def test_a_key_typed_across_two_steps_reaches_no_export(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    task = Task.model_validate({"id": "split", "instruction": "x", "evaluator": {"func": "infeasible"}})
    store = RunStoreWriter.create(tmp_path / "runs", task, domain="os", model="m", secrets=[KEY])
    head, tail = KEY[:13], KEY[13:]
    store.write_step(StepRecord(index=1, executed=[Typing(text="ordinary words")]))
    for index, piece in ((2, head), (3, tail)):
        store.write_step(
            StepRecord(
                index=index,
                response=f"pyautogui.write({piece!r})",
                proposed=[Typing(text=piece)],
                executed=[Typing(text=piece)],
            )
        )
    store.close()
    out = tmp_path / "out"
    monkeypatch.setenv("OPENAI_API_KEY", KEY)  # the key in use when exporting, as the user has it
    export_runs([tmp_path / "runs"], "sft-messages", out, export_options())
    text = "\n".join(p.read_bytes().decode("utf-8") for p in out.rglob("*") if p.is_file())
    assert head not in text and tail not in text, text
    assert "ordinary words" in text  # the steps around it are untouched


def test_only_steps_whose_typing_joins_are_redacted() -> None:
    scrubber = Scrubber(secrets=[KEY])
    steps = [
        StepRecord(index=1, executed=[Typing(text=KEY[:10])]),
        StepRecord(index=2, executed=[Typing(text=KEY[10:])]),
        StepRecord(index=3, executed=[Typing(text=KEY[:10])]),  # the rest never comes
        StepRecord(index=4, executed=[Done()]),
        StepRecord(index=5, executed=[Typing(text=KEY[10:])]),
    ]
    texts = [
        a.text if isinstance(a, Typing) else "-" for s in scrubber.across_steps(steps) for a in s.executed
    ]
    assert texts == ["[REDACTED]", "[REDACTED]", KEY[:10], "-", KEY[10:]]
