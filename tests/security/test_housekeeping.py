"""Housekeeping that keeps hostile or damaged data from hurting the user.

Run stores may come from elsewhere (a colleague's folder, a download): an export never follows a symlink
out of one, copies images instead of linking them, and reports and skips a damaged run. Keys are scrubbed
in their encoded forms too. Absurd values and odd settings files give one clear error, never a
traceback. A killed run's env folder does not stay behind.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from pytestqt.qtbot import QtBot

from osw_studio.core.errors import SettingsError
from osw_studio.settings import load_settings
from osw_studio.trajectory.export import export_options, export_runs
from osw_studio.trajectory.exporters import EXPORTERS
from osw_studio.trajectory.scrub import Scrubber
from osw_studio.trajectory.store import RunStore
from tests.fakes.machine import fresh_env
from tests.fakes.runs import SyntheticRun, write_run
from tests.security.conftest import Victim

ROOT = Path(__file__).resolve().parents[2]
KEY = "sk-live-0123456789abcdefghij"


def every_file_text(folder: Path) -> str:
    return "\n".join(p.read_bytes().decode("latin-1") for p in folder.rglob("*") if p.is_file())


# --- scrubbing ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "form",
    [
        pytest.param(lambda k: base64.b64encode(k.encode()).decode(), id="base64"),
        pytest.param(lambda k: base64.b64encode(f"user:{k}".encode()).decode(), id="basic-auth"),
        pytest.param(lambda k: base64.b64encode(f"ab{k}xyz".encode()).decode(), id="base64-offset-2"),
        pytest.param(lambda k: base64.urlsafe_b64encode(f"a{k}?>".encode()).decode(), id="base64-urlsafe"),
        pytest.param(lambda k: quote(k, safe=""), id="url-encoded"),
        pytest.param(lambda k: "".join(f"%{ord(c):02X}" for c in k), id="percent-every-char"),
        pytest.param(
            lambda k: "".join(f"%{ord(c):02x}" if i % 2 else c for i, c in enumerate(k)), id="mixed"
        ),
    ],
)
def test_a_known_key_is_scrubbed_in_its_encoded_forms(form: object) -> None:
    secret = "hunter2+very/secret=key"  # characters that URL encoding and base64 both change
    scrubber = Scrubber(secrets=[KEY, secret])
    for value in (KEY, secret):
        encoded = form(value)  # type: ignore[operator]
        text = scrubber.text(f"the model said: {encoded} (done)")
        assert encoded not in text and "[REDACTED]" in text, text
    assert scrubber.text("an ordinary sentence with base64 aGVsbG8gd29ybGQ=") == (
        "an ordinary sentence with base64 aGVsbG8gd29ybGQ="
    )


def test_a_scrubber_that_has_seen_many_strings_still_scrubs_each_one() -> None:
    """Strings are scrubbed once and remembered; forgetting (to bound memory) never lets one through."""
    scrubber = Scrubber(secrets=[KEY])
    texts = [f"line {i}: {KEY if i % 3 == 0 else 'nothing'}" for i in range(10_000)]
    for _ in range(2):  # the second pass reads what the scrubber remembered (or forgot)
        for i, text in enumerate(texts):
            clean = scrubber.text(text)
            assert (KEY in clean, "[REDACTED]" in clean) == (False, i % 3 == 0), clean
    data = {"response": texts[0], texts[3]: [texts[6], {"k": texts[9]}], "n": 1, "ok": True}
    assert KEY not in json.dumps(scrubber.data(data)) and scrubber.data({"n": 1}) == {"n": 1}


# --- exports -----------------------------------------------------------------------------------------


def test_an_export_never_follows_a_symlink_out_of_a_run_store(victim: Victim, tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    folder = write_run(runs, SyntheticRun(task_id="linked", steps=3))
    screen = folder / "screens" / "step_0001.png"
    screen.unlink()
    screen.symlink_to(victim.key)
    final = folder / "screens" / "final.png"
    final.unlink()
    final.symlink_to(victim.key)
    (runs / "elsewhere").symlink_to(victim.home, target_is_directory=True)  # a folder of runs, linked
    outside = write_run(victim.home / "runs", SyntheticRun(task_id="outside"))
    assert RunStore(folder).screenshot_path(next(RunStore(folder).iter_steps())) is None
    for fmt in sorted(EXPORTERS):
        for images in ("copy", "embed"):
            out = tmp_path / f"out-{fmt}-{images}"
            summary = export_runs([runs], fmt, out, export_options(images=images))
            assert summary.runs_found == 1, fmt
            text = every_file_text(out)
            assert victim.key_text not in text, (fmt, images)
            assert base64.b64encode(victim.key_text.encode()).decode()[:20] not in text, (fmt, images)
            assert outside.name not in text


def test_exported_images_are_copies_not_links(tmp_path: Path) -> None:
    folder = write_run(tmp_path / "runs", SyntheticRun(task_id="copies", steps=2))
    sources = {p.stat().st_ino for p in (folder / "screens").iterdir()}
    for fmt in ("sft-messages", "osworld", "agentnet"):
        out = tmp_path / fmt
        export_runs([tmp_path / "runs"], fmt, out, export_options(images="copy"))
        images = [p for p in out.rglob("*") if p.suffix == ".png"]
        assert images, fmt
        for image in images:
            assert image.stat().st_nlink == 1 and image.stat().st_ino not in sources, image


def damage(folder: Path, how: str) -> None:
    meta = json.loads((folder / "run.json").read_text())
    if how == "torn-json":
        (folder / "run.json").write_text('{"run_id": ')
    elif how == "bad-middle-line":
        lines = (folder / "steps.jsonl").read_text().splitlines()
        lines[1] = '{"index": "two"}'
        (folder / "steps.jsonl").write_text("\n".join(lines) + "\n")
    elif how == "bad-result":
        (folder / "result.json").write_text('{"score": 7}')
    else:
        meta.update(
            {
                "huge-screen": {"screen_width": 10**30},
                "zero-screen": {"screen_width": 0, "screen_height": 0},
                "negative-screen": {"screen_width": -5},
                "nan-date": {"started_at": float("nan")},
                "inf-date": {"started_at": float("inf")},
                "far-date": {"started_at": 1e300},
                "negative-date": {"started_at": -1e18},
            }[how]
        )
        (folder / "run.json").write_text(json.dumps(meta))


DAMAGES = [
    "torn-json",
    "bad-middle-line",
    "bad-result",
    "huge-screen",
    "zero-screen",
    "negative-screen",
    "nan-date",
    "inf-date",
    "far-date",
    "negative-date",
]


@pytest.mark.parametrize("how", DAMAGES)
def test_a_damaged_run_is_reported_and_skipped_by_every_exporter(tmp_path: Path, how: str) -> None:
    runs = tmp_path / "runs"
    good = [write_run(runs, SyntheticRun(task_id=f"good{i}", steps=2)) for i in range(2)]
    bad = write_run(runs, SyntheticRun(task_id="bad", steps=3))
    damage(bad, how)
    for fmt in sorted(EXPORTERS):
        summary = export_runs([runs], fmt, tmp_path / f"out-{fmt}", export_options())
        assert summary.runs_found == 3 and summary.runs_exported == 2, (fmt, summary)
        assert summary.skipped == {"damaged": 1}
        assert len(summary.damaged) == 1 and bad.name in summary.damaged[0], summary.damaged
    assert all(p.exists() for p in good)


def test_the_export_command_names_the_damaged_run_and_goes_on(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    write_run(runs, SyntheticRun(task_id="good"))
    bad = write_run(runs, SyntheticRun(task_id="bad"))
    damage(bad, "nan-date")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "osw_studio",
            "export",
            str(runs),
            "--format",
            "html",
            "--out",
            str(tmp_path / "o"),
        ],
        cwd=ROOT,
        env=fresh_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    assert f"skipped a damaged run: {bad}" in proc.stderr and "started_at" in proc.stderr
    assert "1 of 2 runs exported" in proc.stdout


@pytest.mark.parametrize("how", ["nan-date", "inf-date", "far-date", "huge-screen"])
def test_the_run_history_lists_a_run_with_absurd_numbers_as_unreadable(
    qtbot: QtBot, tmp_path: Path, how: str
) -> None:
    from osw_studio.ui.run_history import COLUMNS, RunHistory

    runs = tmp_path / "runs"
    good = write_run(runs, SyntheticRun(task_id="good"))
    bad = write_run(runs, SyntheticRun(task_id="bad"))
    damage(bad, how)
    view = RunHistory(runs)
    qtbot.addWidget(view)
    tree = view.tree
    rows = {
        tree.topLevelItem(i).text(0): tree.topLevelItem(i).text(COLUMNS.index("Status"))
        for i in range(tree.topLevelItemCount())
    }
    assert rows[good.name] in ("passed", "failed"), rows
    assert rows[bad.name].startswith("unreadable: unreadable run.json: "), rows


# --- settings files that are not files ---------------------------------------------------------------


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "huge"])
def test_a_settings_path_that_is_not_a_settings_file_is_one_clear_error(tmp_path: Path, kind: str) -> None:
    path = {
        "dev-zero": Path("/dev/zero"),
        "fifo": tmp_path / "fifo",
        "huge": tmp_path / "big",
    }[kind]
    if kind == "fifo":
        os.mkfifo(path)
    if kind == "huge":
        path.write_text('{"agent": {}, "x": "' + "a" * (2 * 1024 * 1024) + '"}')
    with pytest.raises(SettingsError) as caught:
        load_settings(path)
    assert str(path) in str(caught.value)
    proc = subprocess.run(
        [sys.executable, "-m", "osw_studio", "--config", str(path), "keys", "list"],
        cwd=ROOT,
        env=fresh_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=50,
        check=False,
    )
    assert proc.returncode == 2 and proc.stderr.startswith(f"error: {path}: "), proc.stderr
    assert "Traceback" not in proc.stderr


# --- env folders of killed runs ----------------------------------------------------------------------


def test_env_folders_of_dead_processes_are_swept_and_live_ones_kept(tmp_path: Path) -> None:
    from osw_studio.envs.local import ENV_PREFIX, env_owner, sweep_stale_envs

    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    namespace = env_owner().split(".", 1)[1]
    left = tmp_path / f"{ENV_PREFIX}{dead.pid}.{namespace}-abc123"
    (left / "home").mkdir(parents=True)
    (left / "home" / "secret.txt").write_text("a task's files")
    mine = tmp_path / f"{ENV_PREFIX}{env_owner()}-def456"
    mine.mkdir()
    # Another PID namespace (a container sharing /tmp): its PIDs mean nothing here, so only age counts.
    other_namespace = tmp_path / f"{ENV_PREFIX}{dead.pid}.1-ghi789"
    other_namespace.mkdir()
    old_style = tmp_path / f"{ENV_PREFIX}oldstyle"
    old_style.mkdir()
    os.utime(old_style, (time.time() - 3 * 86400,) * 2)
    recent_old_style = tmp_path / f"{ENV_PREFIX}recent"
    recent_old_style.mkdir()
    other = tmp_path / "osw-eval-x"
    other.mkdir()
    removed = sweep_stale_envs(tmp_path)
    assert sorted(p.name for p in removed) == sorted([left.name, old_style.name])
    kept = [mine.name, other_namespace.name, recent_old_style.name, other.name]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(kept)


@pytest.mark.xvfb
@pytest.mark.timeout(180)
def test_a_killed_run_leaves_no_env_folder_once_the_next_starts(tmp_path: Path) -> None:
    prefix = "osw-env-"
    tmp = Path(tempfile.mkdtemp(prefix="osw-tmpdir-", dir=tmp_path))
    env = fresh_env(tmp_path, TMPDIR=str(tmp))
    start = "import asyncio, sys\nfrom osw_studio.envs.local import LocalProvider\n"
    hold = start + "async def main():\n    await LocalProvider().create()\n    print('up', flush=True)\n"
    hold += "    await asyncio.sleep(600)\nasyncio.run(main())\n"
    child = subprocess.Popen(
        [sys.executable, "-c", hold], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "up"
        assert [p.name for p in tmp.iterdir() if p.name.startswith(prefix)]
    finally:
        child.kill()
        child.wait(10)
        if child.stdout is not None:
            child.stdout.close()
    left = [p for p in tmp.iterdir() if p.name.startswith(prefix)]
    assert left, "kill -9 leaves the folder (nothing can clean up then)"
    sweep = start + "LocalProvider()\n"
    subprocess.run([sys.executable, "-c", sweep], cwd=ROOT, env=env, check=True, timeout=60)
    assert not [p for p in tmp.iterdir() if p.name.startswith(prefix)]
