"""``osw-studio export`` as a person runs it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osw_studio.cli import main
from tests.trajectory.conftest import KNOWN_SECRET, RUNS


def test_export_prints_progress_and_a_summary(
    runs_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_SERVICE_API_KEY", KNOWN_SECRET)
    code = main(
        ["export", str(runs_dir), "--format", "sft-messages", "--out", str(tmp_path), "--domain", "chrome"]
    )
    out, err = capsys.readouterr()
    assert code == 0
    assert f"3 of {len(RUNS)} runs exported as sft-messages" in out and "3 filtered out" in out
    assert f"[{'#' * 30}] {len(RUNS)}/{len(RUNS)} runs" in err
    text = (tmp_path / "data.jsonl").read_text()
    assert KNOWN_SECRET not in text  # taken from the environment variable's name
    assert {json.loads(line)["domain"] for line in text.splitlines()} == {"chrome"}


def test_export_user_errors_are_one_line(
    runs_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["export", str(tmp_path / "nope"), "-f", "html", "-o", str(tmp_path / "o")]) == 2
    assert "no such file or folder" in capsys.readouterr().err
    assert (
        main(["export", str(runs_dir), "-f", "html", "-o", str(tmp_path / "o"), "--since", "last week"]) == 2
    )
    assert "not a date" in capsys.readouterr().err
    code = main(
        ["export", str(runs_dir), "-f", "sft-messages", "-o", str(tmp_path / "o"), "--scrub-typed", "(["]
    )
    assert code == 2 and "bad pattern to scrub typed text (--scrub-typed)" in capsys.readouterr().err


def test_export_retarget_options_are_checked(
    runs_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = str(tmp_path / "o")
    assert main(["export", str(runs_dir), "-f", "sft-messages", "-o", out, "--reprompt", "gpt-9"]) == 2
    assert "unknown profile 'gpt-9'" in capsys.readouterr().err
    assert main(["export", str(runs_dir), "-f", "sft-sharegpt", "-o", out, "--train-size", "768"]) == 2
    assert "not a size: '768'" in capsys.readouterr().err
    code = main(["export", str(runs_dir), "-f", "sft-messages", "-o", out, "--reprompt", "uitars", "-q"])
    assert code == 0
    rows = [json.loads(line) for line in (tmp_path / "o" / "data.jsonl").read_text().splitlines()]
    assert rows and all(r["prompt"] == "reprompt" for r in rows)
    # sft-messages embeds images by default: data URLs, as hosted fine-tuning takes them.
    urls = [
        p["image_url"]["url"]
        for r in rows
        for m in r["messages"]
        if isinstance(m["content"], list)
        for p in m["content"]
        if p["type"] == "image_url"
    ]
    assert urls and all(u.startswith("data:image/png;base64,") for u in urls)
    assert "--reprompt uitars" in (tmp_path / "o" / "README.md").read_text()
