"""``--evaluator osworld``: OSWorld's own metric functions score the files our getters fetched.

The worker runs in the side environment (.venv-ref); its scores must be exactly what the reference
worker of the differential tests gives, and where OSWorld's function raises, no score is invented.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from osw_studio.core.errors import EvaluationError
from osw_studio.core.task import Evaluator
from osw_studio.envs.guest_client import GuestClient
from osw_studio.evaluation.evaluate import score_evaluator
from osw_studio.evaluation.osworld import OSWorldMetrics, reference_python
from osw_studio.evaluation.registry import GetterContext
from osw_studio.trajectory.store import RunStore
from tests.fakes.machine import fresh_env
from tests.parity.reference import UPSTREAM, Reference
from tests.parity.workbooks import write_workbook

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def osworld() -> Iterator[OSWorldMetrics]:
    python = reference_python()
    if not python.is_file():
        pytest.skip(f"no side environment at {python}")
    metrics = OSWorldMetrics(python)
    yield metrics
    metrics.close()


def _ctx(guest: GuestClient, folder: Path) -> GetterContext:
    return GetterContext(guest=guest, cache_dir=folder, task_dir=folder)


TABLE_RULES = [
    {"type": "sheet_data", "sheet_idx0": 0, "sheet_idx1": "EI0"},
    {"type": "freeze", "sheet_idx0": 0, "sheet_idx1": "EI0"},
]


def _real(path: str | os.PathLike[str]) -> str:
    """A path with its links resolved (the worker names the checkout as it was bound, links and all)."""
    return os.path.realpath(path)


async def test_osworld_scores_the_fetched_files_as_its_own_code_does(
    osworld: OSWorldMetrics, metric_reference: Reference, tmp_path: Path
) -> None:
    for variant in ("base", "value", "freeze"):
        write_workbook(tmp_path / f"{variant}.xlsx", variant)
    async with GuestClient("http://127.0.0.1:9") as guest:  # never contacted: cache and rule getters
        for variant in ("base", "value", "freeze"):
            evaluator = Evaluator.model_validate(
                {
                    "func": ["compare_table", "check_include_exclude"],
                    "result": [
                        {"type": "cache_file", "path": f"{variant}.xlsx"},
                        {"type": "rule", "rules": "a b"},
                    ],
                    "expected": [
                        {"type": "cache_file", "path": "base.xlsx"},
                        {"type": "rule", "rules": {"include": ["a"], "exclude": ["c"]}},
                    ],
                    "options": [{"rules": TABLE_RULES}, {}],
                }
            )
            theirs = await score_evaluator(_ctx(guest, tmp_path), "t1", evaluator, metrics=osworld)
            ours = await score_evaluator(_ctx(guest, tmp_path), "t1", evaluator)
            direct = metric_reference.call(
                "desktop_env.evaluators.metrics.table",
                "compare_table",
                str(tmp_path / f"{variant}.xlsx"),
                str(tmp_path / "base.xlsx"),
                rules=TABLE_RULES,
            )
            assert theirs.score == ours.score == (1.0 if variant == "base" else 0.0)
            assert theirs.metrics[0].score == direct
            assert "OSWorld's compare_table" in theirs.metrics[0].reason


async def test_a_metric_osworld_crashes_on_has_no_score(osworld: OSWorldMetrics, tmp_path: Path) -> None:
    evaluator = Evaluator.model_validate(
        {
            "func": "check_direct_json_object",
            "result": {"type": "rule", "rules": "not json {"},
            "expected": {"type": "rule", "rules": {"expected": {"a": 1}}},
        }
    )
    async with GuestClient("http://127.0.0.1:9") as guest:
        with pytest.raises(
            EvaluationError, match="OSWorld's metric 'check_direct_json_object' raised: JSONDecodeError"
        ):
            await score_evaluator(_ctx(guest, tmp_path), "t1", evaluator, metrics=osworld)
        # Ours explains the case with a score.
        ours = await score_evaluator(_ctx(guest, tmp_path), "t1", evaluator)
    assert ours.score == 0.0 and "not JSON" in ours.reason


async def test_a_metric_only_osworld_has_is_scored_by_it(osworld: OSWorldMetrics, tmp_path: Path) -> None:
    # compare_answer is OSWorld's, not ours: with --evaluator osworld the task can still be scored.
    evaluator = Evaluator.model_validate(
        {
            "func": "compare_answer",
            "result": {"type": "rule", "rules": "42"},
            "expected": {"type": "rule", "rules": {"expected": "42"}},
        }
    )
    async with GuestClient("http://127.0.0.1:9") as guest:
        result = await score_evaluator(_ctx(guest, tmp_path), "t1", evaluator, metrics=osworld)
    assert result.score == 1.0


async def test_a_named_osworld_checkout_scores_with_its_own_code(
    osworld: OSWorldMetrics, tmp_path: Path
) -> None:
    # compare_config changed meaning after desktop-env 1.0.2: the code at the tasks' commit checks that
    # the expected JSON is contained in the file's; 1.0.2 compares the whole text.
    if not (UPSTREAM / "desktop_env").is_dir():
        pytest.skip(f"no OSWorld checkout at {UPSTREAM}")
    (tmp_path / "settings.json").write_text('{"editor.fontSize": 14, "files.autoSave": "off"}\n')
    evaluator = Evaluator.model_validate(
        {
            "func": "compare_config",
            "result": {"type": "cache_file", "path": "settings.json"},
            "expected": {"type": "rule", "rules": {"expected": '{"editor.fontSize": 14}'}},
        }
    )
    upstream = OSWorldMetrics(osworld.python, UPSTREAM)
    try:
        async with GuestClient("http://127.0.0.1:9") as guest:
            package_result = await score_evaluator(_ctx(guest, tmp_path), "t1", evaluator, metrics=osworld)
            upstream_result = await score_evaluator(_ctx(guest, tmp_path), "t1", evaluator, metrics=upstream)
        assert (package_result.score, upstream_result.score) == (0.0, 1.0)
        named = await upstream.reference()
        assert named["evaluator"] == "osworld" and named["reference"] == "checkout"
        assert _real(named["path"]) == _real(UPSTREAM / "desktop_env") and len(named["digest"]) == 16
        installed = await osworld.reference()
        assert installed["reference"] == "package" and installed["version"] == "1.0.2"
        assert installed["digest"] != named["digest"]
    finally:
        upstream.close()


def test_a_folder_without_osworld_is_a_clear_error(osworld: OSWorldMetrics, tmp_path: Path) -> None:
    with pytest.raises(EvaluationError, match="no OSWorld checkout at") as info:
        OSWorldMetrics(osworld.python, tmp_path)
    assert info.value.where == "evaluation.reference_osworld"


def test_a_missing_side_environment_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(EvaluationError, match="side environment is missing") as info:
        OSWorldMetrics(tmp_path / "no-python")
    assert "setup-reference.sh" in str(info.value)


@pytest.mark.xvfb
@pytest.mark.timeout(180)
def test_run_with_the_osworld_evaluator(tmp_path: Path, osworld: OSWorldMetrics) -> None:
    task = ROOT / "tasks" / "os" / "write-hello-file.json"
    out = tmp_path / "runs"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "osw_studio",
            "run",
            str(task),
            "--agent",
            "replay",
            "--evaluator",
            "osworld",
            "--out",
            str(out),
        ],
        cwd=ROOT,
        env=fresh_env(tmp_path, OSW_REFERENCE_PYTHON=str(osworld.python)),
        capture_output=True,
        text=True,
        timeout=150,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines()[-1].startswith("score 1.00 (finished)")
    (run_dir,) = [p for p in out.iterdir() if p.is_dir()]
    run = RunStore(run_dir)
    assert run.result is not None and run.result.score == 1.0
    evaluation: dict[str, Any] = json.loads((run_dir / "result.json").read_text())
    assert "OSWorld's exact_match" in json.dumps(evaluation)
    scored_by = evaluation["evaluation"]["scored_by"]
    assert scored_by["evaluator"] == "osworld" and scored_by["reference"] == "package"
    assert scored_by["version"] == "1.0.2"


def test_run_refuses_an_unknown_evaluator(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "osw_studio", "run", "x.json", "--evaluator", "nope"],
        cwd=ROOT,
        env=fresh_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 2 and "invalid choice: 'nope'" in proc.stderr
