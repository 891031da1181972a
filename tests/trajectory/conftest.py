"""A folder of synthetic run stores that every exporter test reads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fakes.runs import SyntheticRun, write_run

KNOWN_SECRET = "correct-horse-battery-9"
"""A key the exporter is told about; it does not look like a key, so only being told catches it."""
KEY_SHAPED = "sk-proj-Zx81QmP0aa7Lr5Tt9Yy2"
"""A key nobody told anyone about; its shape gives it away."""
SETTINGS_KEY = "plain-settings-key-77"
SECRETS = (KNOWN_SECRET, KEY_SHAPED, SETTINGS_KEY)

RUNS = [
    SyntheticRun("os-ok", domain="os", score=1.0, steps=5, edited=(2,), human=(3,), started_at=1_700_000_000),
    SyntheticRun("os-bad", domain="os", score=0.0, steps=3, started_at=1_700_100_000),
    SyntheticRun("chrome-1", domain="chrome", score=1.0, steps=2, started_at=1_700_200_000),
    SyntheticRun("chrome-2", domain="chrome", score=0.0, steps=4, edited=(1,), started_at=1_700_300_000),
    SyntheticRun(
        "chrome-3",
        domain="chrome",
        score=1.0,
        steps=3,
        typed_text=f"my key is {KNOWN_SECRET}",
        settings={"model_provider": {"api_key": SETTINGS_KEY, "model": "m"}},
        started_at=1_700_400_000,
    ),
    SyntheticRun("gimp-cut", domain="gimp", steps=2, finished=False, started_at=1_700_500_000),
]
"""Per domain, as OSWorld would count them: os 1 of 2, chrome 2 of 3, gimp not finished."""


@pytest.fixture(scope="session")
def runs_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("store") / "runs"
    for run in RUNS:
        path = write_run(root, run)
        if run.task_id == "os-bad":
            # A store written before scrubbing existed, or edited by hand: a key-shaped value in a reply.
            lines = (path / "steps.jsonl").read_text().splitlines()
            first = json.loads(lines[0])
            first["response"] += f"\nexport OPENAI_API_KEY={KEY_SHAPED}"
            first["thought"] = f"use {KEY_SHAPED}"
            (path / "steps.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    return root
