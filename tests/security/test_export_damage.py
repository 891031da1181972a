"""Damaged run stores, settings and sidecars, killed re-exports and full disks: a clear word, no traceback."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from osw_studio.cli import main
from osw_studio.core.errors import SettingsError
from osw_studio.settings.store import load_settings
from osw_studio.tasks.assets import AssetStore
from osw_studio.trajectory.export import export_runs
from osw_studio.trajectory.exporters import EXPORTERS
from osw_studio.trajectory.exporters.card import CARD
from tests.fakes.runs import SyntheticRun, write_run

pytestmark = pytest.mark.timeout(60)

DEEP = 100_000
"""Nesting far past the interpreter's recursion limit."""


def _damaged_runs(root: Path) -> dict[str, Path]:
    runs = {name: write_run(root, SyntheticRun(name, steps=3)) for name in ("good", "deep", "index", "fifo")}
    steps = runs["deep"] / "steps.jsonl"
    lines = steps.read_bytes().splitlines(keepends=True)
    deep = json.loads(lines[0])
    raw = json.dumps(deep)[:-1] + ', "extra": ' + "[" * DEEP + "]" * DEEP + "}\n"
    steps.write_bytes(raw.encode() + b"".join(lines[1:]))
    steps = runs["index"] / "steps.jsonl"
    lines = steps.read_bytes().splitlines(keepends=True)
    first = json.loads(lines[0])
    first["index"] = 10**30
    steps.write_bytes((json.dumps(first) + "\n").encode() + b"".join(lines[1:]))
    result = runs["fifo"] / "result.json"
    result.unlink()
    os.mkfifo(result)
    return runs


@pytest.mark.parametrize("fmt", sorted(EXPORTERS))
def test_damaged_runs_are_reported_and_skipped_and_the_good_one_exported(fmt: str, tmp_path: Path) -> None:
    runs = _damaged_runs(tmp_path / "runs")
    summary = export_runs([tmp_path / "runs"], fmt, tmp_path / "out")
    assert summary.runs_found == 4
    assert summary.runs_exported == 1, summary.damaged
    text = "\n".join(summary.damaged)
    assert len(summary.damaged) == 3, text
    assert "nested too deeply" in text
    assert "step index" in text
    assert "not a regular file" in text
    assert str(runs["good"]) not in text
    assert (tmp_path / "out" / CARD).is_file()


def test_export_cli_on_damaged_runs_exits_cleanly(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _damaged_runs(tmp_path / "runs")
    code = main(["export", str(tmp_path / "runs"), "-f", "sft-messages", "-o", str(tmp_path / "out")])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err + captured.out
    assert code in (0, 1)
    assert (tmp_path / "out" / "data.jsonl").stat().st_size > 0


def test_a_failed_re_export_leaves_the_old_export_whole_with_its_card(tmp_path: Path) -> None:
    for i in range(3):
        write_run(tmp_path / "runs", SyntheticRun(f"t{i}", steps=4))
    out = tmp_path / "out"
    export_runs([tmp_path / "runs"], "sft-messages", out)
    before = (out / "data.jsonl").read_bytes(), (out / CARD).read_bytes()
    # The re-export is killed part-way: the child dies by SIGKILL in its second run.
    script = (
        "import os, signal, sys\n"
        "from osw_studio.trajectory.exporters import sft\n"
        "from osw_studio.trajectory.export import export_runs\n"
        "seen = []\n"
        "add = sft._SftExporter.add_run\n"
        "def dying(self, run):\n"
        "    seen.append(run)\n"
        "    if len(seen) == 2:\n"
        "        self._file.flush(); os.kill(os.getpid(), signal.SIGKILL)\n"
        "    return add(self, run)\n"
        "sft._SftExporter.add_run = dying\n"
        "export_runs([sys.argv[1]], 'sft-messages', sys.argv[2])\n"
    )
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "runs"), str(out)], timeout=40)
    assert done.returncode == -9
    card = out / CARD
    if card.exists():  # a card is only ever beside the data it describes
        assert ((out / "data.jsonl").read_bytes(), card.read_bytes()) == before
    assert (out / "data.jsonl").read_bytes() == before[0]


def test_export_on_a_full_disk_is_a_clear_error(tmp_path: Path) -> None:
    write_run(tmp_path / "runs", SyntheticRun("t1", steps=30, typed_text="x" * 4000))
    out = tmp_path / "out"
    # A file-size limit makes the kernel refuse writes past 64 KiB, as a full disk does (EFBIG).
    script = (
        "import resource, signal, sys\n"
        "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))\n"
        "from osw_studio.cli import main\n"
        "args = ['export', sys.argv[1], '-f', 'sft-messages', '-o', sys.argv[2], '--images', 'embed']\n"
        "sys.exit(main(args))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(tmp_path / "runs"), str(out)],
        capture_output=True,
        text=True,
        timeout=40,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "cannot write the export" in done.stderr
    assert "free some space" in done.stderr
    assert not (out / CARD).exists()
    assert not (out / "data.jsonl").exists()  # nothing half-written left in place
    assert (
        resource.getrlimit(resource.RLIMIT_FSIZE)[0] == resource.RLIM_INFINITY
    )  # only the child was limited


def test_a_deeply_nested_settings_file_is_a_clear_error(tmp_path: Path) -> None:
    file = tmp_path / "settings.json"
    file.write_text('{"model_provider": ' + "[" * DEEP + "]" * DEEP + "}")
    with pytest.raises(SettingsError, match="nested too deeply"):
        load_settings(file)


def test_a_deeply_nested_asset_sidecar_is_treated_as_damaged(tmp_path: Path) -> None:
    store = AssetStore(tmp_path / "assets")
    url = "https://example.com/a.txt"
    store.path(url).parent.mkdir(parents=True)
    store.path(url).write_bytes(b"data")
    store.path(url).with_suffix(".json").write_text('{"url": ' + "[" * DEEP + "]" * DEEP + "}")
    assert store.meta(url) is None
    assert store.entries() == []
