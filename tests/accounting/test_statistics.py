"""Intervals, repeats (mean ± interval, pass@k, pass^k) and the paired comparison, against values worked
out by hand on small fixtures, through ``eval stats`` as a person runs it."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from osw_studio.cli import main
from osw_studio.core.outcome import OutcomeKind
from osw_studio.runner.accounting import compare
from osw_studio.runner.repeats import compute_repeats, repeat_dir
from osw_studio.runner.significance import mcnemar_exact, paired_bootstrap, pass_at_k, pass_hat_k, wilson
from osw_studio.runner.summary import BatchSummary, TaskOutcome, compute_stats, write_summary


def outcome(task: str, domain: str, score: float, **extra: object) -> TaskOutcome:
    status = "finished" if score >= 1 else "failed"
    return TaskOutcome(task_id=task, domain=domain, score=score, success=score >= 1, status=status, **extra)  # type: ignore[arg-type]


def error(task: str, domain: str) -> TaskOutcome:
    return TaskOutcome(task_id=task, domain=domain, status="error", kind=OutcomeKind.ENV_ERROR)


def folder(path: Path, model: str, outcomes: list[TaskOutcome]) -> Path:
    path.mkdir(parents=True)
    write_summary(path, BatchSummary(model=model, tasks=outcomes))
    return path


def test_wilson_intervals_by_hand() -> None:
    # p = 0.8, n = 10, z = 1.96: centre (0.8 + z²/20) / (1 + z²/10) = 0.71673, half-width 0.22658
    low, high = wilson(8, 10)
    assert (low, high) == pytest.approx((0.49016, 0.94331), abs=1e-5)
    # none of 5: low 0, high z² / (n + z²) = 3.8415 / 8.8415
    assert wilson(0, 5) == pytest.approx((0.0, 3.8415 / 8.8415), abs=1e-4)
    assert wilson(5, 5) == pytest.approx((5 / 8.8415, 1.0), abs=1e-4)


def test_pass_at_k_and_pass_hat_k_by_hand() -> None:
    assert pass_at_k(5, 2, 3) == pytest.approx(1 - math.comb(3, 3) / math.comb(5, 3))  # 1 - 1/10
    assert pass_hat_k(5, 2, 3) == 0.0
    assert pass_hat_k(5, 4, 3) == pytest.approx(4 / 10)  # C(4,3) / C(5,3)
    assert pass_at_k(3, 0, 3) == 0.0 and pass_at_k(3, 1, 3) == 1.0


def test_mcnemar_exact_by_hand() -> None:
    # 2 and 9 discordant pairs: 2 * P(X <= 2), X ~ Bin(11, 1/2) = 2 * (1 + 11 + 55) / 2048
    assert mcnemar_exact(2, 9) == pytest.approx(134 / 2048)
    assert mcnemar_exact(9, 2) == mcnemar_exact(2, 9)
    assert mcnemar_exact(3, 3) == 1.0


def test_paired_bootstrap_is_reproducible_and_brackets_the_mean() -> None:
    differences = [1.0] * 6 + [0.0] * 14  # B solved 6 of 20 more
    one, two = paired_bootstrap(differences), paired_bootstrap(differences)
    assert one == two and one is not None
    assert one.mean == pytest.approx(0.3) and one.low < 0.3 < one.high
    assert one.significant  # zero is far outside: at least one of 20 draws is a 1 in nearly every resample
    balanced = paired_bootstrap([1.0, -1.0, 0.0, 0.0])
    assert balanced is not None and balanced.mean == 0.0 and not balanced.significant
    assert paired_bootstrap([]) is None


def test_stats_json_carries_kinds_rates_intervals_and_cost(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [outcome(str(i), "os", 1.0 if i < 8 else 0.0) for i in range(10)]
    rows += [error("e1", "os"), error("e2", "os")]
    folder(tmp_path / "a", "m", rows)
    assert main(["eval", "stats", str(tmp_path / "a"), "--json"]) == 0
    total = json.loads(capsys.readouterr().out)["total"]
    assert (total["tasks"], total["valid"], total["kinds"]) == (
        12,
        10,
        {"solved": 8, "failed": 2, "env_error": 2},
    )
    assert total["rate"] == pytest.approx(100 * 8 / 12, abs=0.01)
    assert total["valid_rate"] == 80.0
    assert total["valid_interval"] == pytest.approx(
        [49.02, 94.33], abs=0.01
    )  # Wilson, 8 of 10, by hand above
    assert total["interval"] == pytest.approx([x * 100 for x in wilson(8, 12)], abs=0.01)


def test_compare_two_folders_per_domain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # os: A solves 2 of 11 tasks B solves, B 9 A does not (McNemar p = 134/2048); gimp: the same on both
    a = [outcome(f"t{i}", "os", 1.0 if i < 2 else 0.0) for i in range(11)]
    b = [outcome(f"t{i}", "os", 0.0 if i < 2 else 1.0) for i in range(11)]
    a += [outcome("g1", "gimp", 1.0), outcome("g2", "gimp", 0.0), outcome("only-a", "gimp", 1.0)]
    b += [outcome("g1", "gimp", 1.0), outcome("g2", "gimp", 0.0)]
    rows = {r.name: r for r in compare(a, b)}
    assert (rows["os"].shared, rows["os"].only_a, rows["os"].only_b) == (11, 2, 9)
    assert rows["os"].mcnemar_p == pytest.approx(134 / 2048, abs=1e-6)
    assert rows["gimp"].shared == 2 and rows["gimp"].mcnemar_p == 1.0 and not rows["gimp"].significant
    assert rows["total"].shared == 13 and rows["total"].diff_mean == pytest.approx(7 / 13, abs=1e-6)

    folder(tmp_path / "a", "model-a", a)
    folder(tmp_path / "b", "model-b", b)
    assert main(["eval", "stats", str(tmp_path / "a"), "--compare", str(tmp_path / "b"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [f["label"] for f in data["folders"]] == ["model-a", "model-b"]
    os_row = next(d for d in data["comparison"]["domains"] if d["name"] == "os")
    assert (os_row["only_a"], os_row["only_b"]) == (2, 9)
    assert main(["eval", "stats", str(tmp_path / "a"), "--compare", str(tmp_path / "b")]) == 0
    text = capsys.readouterr().out
    assert "paired comparison of model-a (A) and model-b (B)" in text
    comparison = text.split("paired comparison")[1].splitlines()
    assert next(line for line in comparison if line.startswith("gimp")).split()[-2] == "no"
    # scores of 0 and 1 only: McNemar decides, p = 0.065
    assert next(line for line in comparison if line.startswith("os")).split()[-2:] == ["no", "(mcnemar)"]


def three_repeats() -> list[list[TaskOutcome]]:
    # a: solved every time; b: once (repeat 2); c (gimp): 0.5, 0, 0
    return [
        [outcome("a", "os", 1.0), outcome("b", "os", 0.0), outcome("c", "gimp", 0.5)],
        [outcome("a", "os", 1.0), outcome("b", "os", 1.0), outcome("c", "gimp", 0.0)],
        [outcome("a", "os", 1.0), outcome("b", "os", 0.0), outcome("c", "gimp", 0.0)],
    ]


def test_repeats_by_hand() -> None:
    rows = {r.name: r for r in compute_repeats(three_repeats())}
    total = rows["total"]
    # the repeats' rates: 1.5/3, 2/3, 1/3 -> 50, 66.67, 33.33; mean 50, sd 16.667,
    # half-width t(2) * sd / sqrt(3) = 4.303 * 16.667 / 1.7321 = 41.41
    assert total.rates == pytest.approx([50.0, 66.67, 33.33], abs=0.01)
    assert total.mean == pytest.approx(50.0)
    assert (total.low, total.high) == pytest.approx((8.59, 91.41), abs=0.01)
    assert total.pass_at_k == pytest.approx(200 / 3, abs=1e-3)  # a and b solved at least once
    assert total.pass_hat_k == pytest.approx(100 / 3, abs=1e-3)  # only a every time
    assert (rows["gimp"].mean, rows["gimp"].pass_at_k) == (pytest.approx(50 / 3, abs=1e-3), 0.0)


def test_stats_of_a_repeated_suite(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for index, outcomes in enumerate(three_repeats(), 1):
        folder(repeat_dir(tmp_path / "out", index), "m", outcomes)
    assert main(["eval", "stats", str(tmp_path / "out"), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["repeats"]["repeats"] == 3 and data["repeats"]["total"]["pass_hat_k"] == pytest.approx(
        33.3333
    )
    assert [r["label"] for r in data["runs"]] == ["repeat-1", "repeat-2", "repeat-3"]
    assert main(["eval", "stats", str(tmp_path / "out")]) == 0
    text = capsys.readouterr().out
    total = next(line for line in text.splitlines() if line.startswith("total")).split()
    assert total[:6] == ["total", "3", "50.0%", "8.6-91.4%", "66.7%", "33.3%"]


def test_the_statistics_of_a_folder_match_compute_stats(tmp_path: Path) -> None:
    stats = compute_stats([outcome("a", "os", 1.0), error("b", "os")], "m")
    assert stats.total.kinds == {"solved": 1, "env_error": 1}


@pytest.mark.xvfb
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_eval_run_repeats_each_task_on_fresh_desktops(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.batch.suite import write_suite

    suite = write_suite(tmp_path / "suite", 1)
    out = tmp_path / "out"
    command = [sys.executable, "-m", "osw_studio", "eval", "run", str(suite), "--agent", "replay"]
    proc = subprocess.run(
        [*command, "--repeats", "2", "--out", str(out)], capture_output=True, text=True, timeout=170
    )
    assert proc.returncode == 0, proc.stderr
    runs = [json.loads((repeat_dir(out, i) / "summary.json").read_text())["tasks"] for i in (1, 2)]
    assert [[t["kind"] for t in tasks] for tasks in runs] == [["solved"], ["solved"]]
    assert runs[0][0]["run_id"] != runs[1][0]["run_id"]
    assert "2 repeats" in proc.stdout and "pass@2" in proc.stdout


def test_fractional_scores_are_compared_by_the_paired_bootstrap() -> None:
    a = [outcome(f"t{i}", "calc", 0.25) for i in range(8)]
    b = [outcome(f"t{i}", "calc", 0.75 if i < 6 else 0.25) for i in range(8)]
    calc, _ = compare(a, b)
    # no task solved by either: McNemar sees nothing; the bootstrap sees B 0.375 higher on average
    assert (calc.only_a, calc.only_b, calc.mcnemar_p) == (0, 0, 1.0)
    assert calc.decided_by == "bootstrap" and calc.significant
    assert calc.diff_mean == pytest.approx(6 * 0.5 / 8) and calc.diff_low > 0
