"""Review labels (append-only, per reviewer), reviewer agreement, and DART-style curation."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from osw_studio.cli import main
from osw_studio.core.actions import Click
from osw_studio.core.errors import StoreError
from osw_studio.core.review import ReviewEvent, agreement
from osw_studio.trajectory.curation import Curation, TaskRate, entropy_cutoff, plan, task_weights
from osw_studio.trajectory.review import REVIEW_JSONL, ReviewLog
from osw_studio.trajectory.store import RunStore, iter_runs
from tests.fakes.runs import SyntheticRun, write_run


def test_events_append_and_fold_per_reviewer_without_touching_the_steps(tmp_path: Path) -> None:
    run = write_run(tmp_path, SyntheticRun("t1", steps=4))
    before = (run / "steps.jsonl").read_bytes()
    log = ReviewLog(run)
    log.append(ReviewEvent(reviewer="ann", step=1, label="wrong", correction=[Click(x=5, y=6)]))
    log.append(ReviewEvent(reviewer="ann", step=2, label="redundant"))
    log.append(ReviewEvent(reviewer="ann", step=2, clear=True))
    log.append(ReviewEvent(reviewer="ann", verdict="accepted", rating=4, note="fine"))
    log.append(ReviewEvent(reviewer="bob", step=1, label="correct"))
    reviews = log.reviews()
    assert set(reviews) == {"ann", "bob"}
    ann = reviews["ann"]
    assert ann.steps[1].label == "wrong" and ann.steps[1].correction == [Click(x=5, y=6)]
    assert 2 not in ann.steps
    assert (ann.verdict, ann.rating, ann.note) == ("accepted", 4, "fine")
    assert len((run / REVIEW_JSONL).read_text().splitlines()) == 5  # append-only
    assert (run / "steps.jsonl").read_bytes() == before
    merged = log.consensus()
    assert merged is not None and merged.steps[1].label == "correct"  # bob spoke last


def test_a_torn_last_line_is_skipped_and_a_damaged_one_is_named(tmp_path: Path) -> None:
    run = write_run(tmp_path, SyntheticRun("t1"))
    log = ReviewLog(run)
    log.append(ReviewEvent(reviewer="ann", step=1, label="correct"))
    with open(run / REVIEW_JSONL, "a") as fh:
        fh.write('{"reviewer": "ann", "step": 2, "lab')
    assert [e.step for e in log.events()] == [1]
    with open(run / REVIEW_JSONL, "a") as fh:
        fh.write("\n" + json.dumps({"reviewer": "ann", "step": 3, "label": "correct"}) + "\n")
    with pytest.raises(StoreError, match=r"line 2 is not a review event"):
        log.events()


def test_the_log_never_follows_a_link_out_of_the_run(tmp_path: Path) -> None:
    run = write_run(tmp_path, SyntheticRun("t1"))
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    (run / REVIEW_JSONL).symlink_to(outside)
    with pytest.raises(StoreError):
        ReviewLog(run).append(ReviewEvent(reviewer="ann", verdict="rejected"))
    assert outside.read_text() == "keep"


def test_agreement_and_kappa_match_hand_computed_values() -> None:
    from osw_studio.core.review import fold

    events = [
        ReviewEvent(reviewer="a", step=1, label="correct"),
        ReviewEvent(reviewer="a", step=2, label="correct"),
        ReviewEvent(reviewer="a", step=3, label="wrong"),
        ReviewEvent(reviewer="a", step=4, label="wrong"),
        ReviewEvent(reviewer="b", step=1, label="correct"),
        ReviewEvent(reviewer="b", step=2, label="wrong"),
        ReviewEvent(reviewer="b", step=3, label="wrong"),
        ReviewEvent(reviewer="b", step=4, label="wrong"),
        ReviewEvent(reviewer="a", verdict="accepted"),
        ReviewEvent(reviewer="b", verdict="rejected"),
    ]
    single = fold([ReviewEvent(reviewer="c", step=1, label="wrong")])
    result = agreement([fold(events), single])
    assert result.runs == 1 and result.step_pairs == 4
    assert result.step_agreement == 0.75
    # p_o = 3/4; a: correct 1/2, wrong 1/2; b: correct 1/4, wrong 3/4; p_e = 1/8 + 3/8 = 1/2
    assert result.step_kappa == pytest.approx((0.75 - 0.5) / (1 - 0.5))
    assert (result.verdict_pairs, result.verdict_agreement) == (1, 0.0)


def test_task_weights_follow_the_documented_formula() -> None:
    rates = {"hard": TaskRate(0, 3), "mid": TaskRate(1, 4), "easy": TaskRate(2, 2), "new": TaskRate(0, 0)}
    weights = task_weights(rates, floor=0.1)
    raw = {"hard": 1.0, "mid": 0.75, "easy": 0.1, "new": 1.0}  # max(1 - p, floor); unscored p = 0
    total = sum(raw.values())
    assert weights == pytest.approx({k: v / total for k, v in raw.items()})
    assert math.isclose(sum(weights.values()), 1.0)


def test_entropy_cutoff_keeps_the_top_fraction() -> None:
    values = [0.2, 1.4, 0.9, 0.05, 0.6, 1.1, 0.3, 0.7, 0.8, 0.4]
    assert entropy_cutoff(values, 0.8) == 0.3  # ceil(8) highest: down to the 8th, 0.3
    assert entropy_cutoff(values, 0.05) == 1.4
    assert entropy_cutoff(values, 1.0) == 0.05


def _runs(tmp_path: Path) -> list[RunStore]:
    """Three runs of "hard" (one success) and one of "easy", in that order."""
    paths = [
        write_run(tmp_path, SyntheticRun("hard", score=1.0, steps=3, entropy={1: 0.9, 2: 0.1})),
        write_run(tmp_path, SyntheticRun("hard", score=0.0, steps=3, entropy={1: 0.5, 2: 0.2})),
        write_run(tmp_path, SyntheticRun("hard", score=0.0, steps=3)),
        write_run(tmp_path, SyntheticRun("easy", score=1.0, steps=3, entropy={1: 0.8, 2: 0.6})),
    ]
    assert {run.path for run in iter_runs([tmp_path])} == set(paths)
    return [RunStore(path) for path in paths]


def test_curation_by_review_labels_replay_and_entropy(tmp_path: Path) -> None:
    runs = _runs(tmp_path)
    hard_ok, hard_bad, hard_none, easy = runs
    ReviewLog(hard_ok.path).append(ReviewEvent(reviewer="ann", verdict="accepted", rating=5))
    ReviewLog(hard_ok.path).append(ReviewEvent(reviewer="ann", step=2, label="redundant"))
    ReviewLog(hard_bad.path).append(ReviewEvent(reviewer="ann", verdict="rejected"))

    accepted = plan(runs, Curation(review="accepted"))
    assert [(p.run.path, p.copies) for p in accepted.runs if p.copies] == [(hard_ok.path, 1)]
    assert {p.why for p in accepted.runs if not p.copies} == {"not accepted"}

    not_rejected = plan(runs, Curation(review="not-rejected", drop_labels=frozenset({"redundant"})))
    kept = {p.run.path: p.steps for p in not_rejected.runs if p.copies}
    assert kept == {hard_ok.path: [1, 3], hard_none.path: [1, 2, 3], easy.path: [1, 2, 3]}
    assert not_rejected.dropped_steps == {"labelled redundant": 1}

    # "hard": 1 success in 3 scored runs (1/3 < 0.5): its success is replayed; "easy" (1/1) is not.
    replay = plan(runs, Curation(replay_below=0.5, replay_copies=2))
    assert {p.run.path: p.copies for p in replay.runs} == {
        hard_ok.path: 3,
        hard_bad.path: 1,
        hard_none.path: 1,
        easy.path: 1,
    }
    assert replay.weights == pytest.approx({"hard": (2 / 3) / (2 / 3 + 0.05), "easy": 0.05 / (2 / 3 + 0.05)})

    # entropies of agent steps: 0.9 0.1 0.5 0.2 0.8 0.6 -> top half keeps >= 0.6
    top = plan(runs, Curation(entropy_top=0.5))
    kept = {p.run.path: p.steps for p in top.runs}
    assert kept[hard_ok.path] == [1, 3] and kept[hard_bad.path] == [3] and kept[easy.path] == [1, 2, 3]
    assert kept[hard_none.path] == [1, 2, 3]  # no entropy stored: kept unless strict
    strict = plan(runs, Curation(entropy_top=0.5, entropy_strict=True))
    assert {p.run.path: p.steps for p in strict.runs}[hard_none.path] == []


def test_review_cli_sets_shows_and_counts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = str(_runs(tmp_path)[0].path)
    assert main(["review", "set", run, "--reviewer", "ann", "--step", "1", "--label", "correct"]) == 0
    correction = json.dumps([{"kind": "click", "x": 3, "y": 4}])
    args = ["review", "set", run, "--reviewer", "bob", "--step", "1", "--label", "wrong"]
    assert main([*args, "--correction", correction]) == 0
    assert main(["review", "set", run, "--reviewer", "ann", "--accept", "--rating", "4"]) == 0
    assert main(["review", "set", run, "--step", "99", "--label", "wrong"]) == 2
    assert "no step 99" in capsys.readouterr().err
    assert main(["review", "show", run]) == 0
    out = capsys.readouterr().out
    assert "ann: accepted, rating 4" in out and "step 1: wrong → 1 corrected action(s)" in out
    assert main(["review", "stats", str(tmp_path), "--json", "--review", "accepted"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["step_labels"] == {"correct": 1, "wrong": 1}
    assert stats["agreement"]["step_pairs"] == 1 and stats["agreement"]["step_agreement"] == 0.0
    assert stats["export"]["runs"] == 1 and stats["export"]["step_samples"] == 3
    assert stats["export"]["runs_left_out"] == {"not accepted": 3}
    assert main(["review", "stats", str(tmp_path), "--entropy-top", "2"]) == 2
    assert "--entropy-top" in capsys.readouterr().err


def _lines(folder: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (folder / "data.jsonl").read_text().splitlines()]


def test_export_honours_review_filters_replay_entropy_and_corrections(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs_dir = tmp_path / "runs"
    hard_ok, hard_bad, _, easy = _runs(runs_dir)
    ReviewLog(hard_ok.path).append(ReviewEvent(reviewer="ann", verdict="accepted", rating=5))
    ReviewLog(hard_ok.path).append(ReviewEvent(reviewer="ann", step=2, label="redundant"))
    ReviewLog(hard_bad.path).append(ReviewEvent(reviewer="ann", verdict="rejected"))
    correction = [Click(x=11, y=12)]
    ReviewLog(easy.path).append(ReviewEvent(reviewer="bob", step=1, label="wrong", correction=correction))

    def export(name: str, *options: str, fmt: str = "sft-messages") -> Path:
        out = tmp_path / name
        assert main(["export", str(runs_dir), "-f", fmt, "-o", str(out), "-q", *options]) == 0
        return out

    steps = {(row["run_id"], row["step"]) for row in _lines(export("accepted", "--review", "accepted"))}
    assert {run for run, _ in steps} == {hard_ok.run_id}
    assert "review: accepted runs" in (tmp_path / "accepted" / "README.md").read_text()

    dropped = _lines(export("dropped", "--review", "not-rejected", "--drop-label", "redundant"))
    kept = {(row["run_id"], row["step"]) for row in dropped}
    assert (hard_ok.run_id, 2) not in kept and (hard_ok.run_id, 1) in kept
    assert not any(run == hard_bad.run_id for run, _ in kept)

    replayed = _lines(export("replay", "--replay-below", "0.5", "--replay-copies", "2"))
    per_run = {
        run.run_id: sum(1 for row in replayed if row["run_id"] == run.run_id) for run in (hard_ok, easy)
    }
    assert per_run[hard_ok.run_id] == 3 * per_run[easy.run_id]  # 1 + 2 copies of the hard task's success
    weights = json.loads((tmp_path / "replay" / "task_weights.json").read_text())["weights"]
    assert weights == pytest.approx({"hard": (2 / 3) / (2 / 3 + 0.05), "easy": 0.05 / (2 / 3 + 0.05)})

    top = {(row["run_id"], row["step"]) for row in _lines(export("entropy", "--entropy-top", "0.5"))}
    assert (hard_ok.run_id, 2) not in top and (hard_ok.run_id, 1) in top and (easy.run_id, 2) in top

    pairs = _lines(export("pairs", "--apply-corrections", fmt="preference"))
    corrected = [row for row in pairs if row["run_id"] == easy.run_id and row["step"] == 1]
    assert len(corrected) == 1
    assert "11" in json.dumps(corrected[0]["chosen"]) and "12" in json.dumps(corrected[0]["chosen"])
    assert (easy.path / "steps.jsonl").read_text().count('"verdict":"edited"') == 0  # the store is unchanged
