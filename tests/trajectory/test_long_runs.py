"""One long run exports in bounded memory: steps streamed, prompts and per-run caches bounded."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from osw_studio.trajectory.export import export_runs
from osw_studio.trajectory.exporters import base
from osw_studio.trajectory.exporters.base import RECENT, ExportOptions, ExportRun
from osw_studio.trajectory.exporters.chat import MAX_PREVIOUS_ACTIONS
from osw_studio.trajectory.exporters.sft import MessagesExporter
from osw_studio.trajectory.scrub import Scrubber
from osw_studio.trajectory.store import RunStore
from tests.fakes.runs import SyntheticRun, write_run

STEPS = RECENT + 150


@pytest.fixture(scope="module")
def long_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_run(tmp_path_factory.mktemp("long") / "runs", SyntheticRun("long", steps=STEPS))


def _lines(out: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (out / "data.jsonl").read_text().splitlines()]


def test_a_rebuilt_prompt_lists_a_bounded_number_of_previous_actions(long_run: Path, tmp_path: Path) -> None:
    export_runs([long_run], "sft-messages", tmp_path / "out", ExportOptions(images="copy"))
    lines = _lines(tmp_path / "out")
    assert len(lines) == STEPS
    last = json.dumps(lines[-1]["messages"])
    first = json.dumps(lines[MAX_PREVIOUS_ACTIONS]["messages"])
    listed = last.count("\\nStep ")
    assert listed == MAX_PREVIOUS_ACTIONS
    omitted = re.search(r"\((\d+) earlier steps left out\)", last)
    assert omitted is not None and int(omitted[1]) + listed == STEPS - 1  # one history round per step
    assert len(last) < 1.2 * len(first)  # the prompt stops growing with the run


def test_a_long_run_is_read_a_step_at_a_time_with_the_same_output(
    long_run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    export_runs([long_run], "sft-messages", tmp_path / "kept", ExportOptions(images="copy"))
    monkeypatch.setattr(base, "STREAM_ABOVE", 0)
    run = ExportRun(RunStore(long_run), Scrubber())
    assert run._steps is None  # nothing kept: each walk reads the store again
    assert [s.index for s in run.steps()] == list(range(1, STEPS + 1))
    export_runs([long_run], "sft-messages", tmp_path / "streamed", ExportOptions(images="copy"))
    assert _lines(tmp_path / "streamed") == _lines(tmp_path / "kept")


def test_per_run_caches_stay_bounded(long_run: Path, tmp_path: Path) -> None:
    exporter = MessagesExporter(tmp_path / "out", ExportOptions(images="embed", history=3))
    try:
        exporter.add_run(ExportRun(RunStore(long_run), Scrubber()))
    finally:
        exporter.close()
    assert len(exporter._urls[1]) <= RECENT
    assert len(exporter._counted_messages) <= RECENT
    assert len(exporter._resolved[1]) <= RECENT
