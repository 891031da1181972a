"""``osw-studio review``: label runs and steps, and see what an export with given filters would hold."""

from __future__ import annotations

import argparse
import json
from collections import Counter
from typing import Any

from osw_studio.core.errors import StoreError
from osw_studio.core.exit_codes import ExitCode
from osw_studio.core.terminal import visible


def add_curation_arguments(parser: argparse.ArgumentParser) -> None:
    """The review and DART-style selection options, shared by ``review stats`` and ``export``."""
    group = parser.add_argument_group("review and selection (see osw_studio.trajectory.curation)")
    group.add_argument(
        "--review",
        choices=["any", "accepted", "rejected", "unreviewed", "not-rejected"],
        default="any",
        help="only runs with this review verdict (default any)",
    )
    group.add_argument("--min-rating", type=int, choices=range(1, 6), metavar="R", help="only runs rated ≥ R")
    group.add_argument(
        "--drop-label",
        action="append",
        choices=["wrong", "redundant"],
        default=[],
        help="drop steps a reviewer labelled so (repeatable)",
    )
    group.add_argument(
        "--replay-below",
        type=float,
        metavar="P",
        help="repeat the successful runs of tasks whose success rate is below P",
    )
    group.add_argument("--replay-copies", type=int, default=1, metavar="K", help="extra copies (default 1)")
    group.add_argument(
        "--entropy-top",
        type=float,
        metavar="F",
        help="keep the fraction F of agent steps with the highest token entropy",
    )
    group.add_argument(
        "--entropy-strict", action="store_true", help="with --entropy-top, drop steps without an entropy"
    )


def curation_from_args(args: argparse.Namespace) -> Any:
    """The :class:`~osw_studio.trajectory.curation.Curation` the options ask for.

    Raises:
        StoreError: If a value is out of range (said with the option's name).
    """
    from osw_studio.trajectory.curation import Curation

    try:
        return Curation(
            review=args.review,
            min_rating=args.min_rating,
            drop_labels=frozenset(args.drop_label),
            replay_below=args.replay_below,
            replay_copies=args.replay_copies,
            entropy_top=args.entropy_top,
            entropy_strict=args.entropy_strict,
        )
    except ValueError as exc:
        option = str(exc).split()[0].replace("_", "-")
        raise StoreError(str(exc), where=f"--{option}") from None


def register(subparsers: Any) -> None:
    """Add ``review set``, ``review show`` and ``review stats``."""
    review = subparsers.add_parser("review", help="label runs and steps; what an export would keep")
    sub = review.add_subparsers(dest="review_command", metavar="ACTION", required=True)

    setting = sub.add_parser(
        "set",
        help="label a step, or accept/reject/rate a run",
        description="Append a judgement to the run's review.jsonl (the recorded steps never change).",
    )
    setting.add_argument("run", metavar="RUN", help="a run folder")
    setting.add_argument("--reviewer", help="who (default: $OSW_REVIEWER, else the login name)")
    setting.add_argument("--step", type=int, metavar="N", help="the step's index")
    setting.add_argument("--label", choices=["correct", "wrong", "redundant"])
    setting.add_argument("--correction", metavar="JSON", help="with --label wrong: the right actions")
    verdict = setting.add_mutually_exclusive_group()
    verdict.add_argument("--accept", action="store_true")
    verdict.add_argument("--reject", action="store_true")
    setting.add_argument("--rating", type=int, choices=range(1, 6), metavar="1-5")
    setting.add_argument("--note")
    setting.add_argument("--clear", action="store_true", help="take back the step's label or the verdict")
    setting.set_defaults(handler=_set)

    show = sub.add_parser("show", help="a run's reviews")
    show.add_argument("run", metavar="RUN")
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=_show)

    stats = sub.add_parser(
        "stats",
        help="counts by label, reviewer agreement, and what an export with these filters would hold",
    )
    stats.add_argument("runs", nargs="+", metavar="RUNS")
    stats.add_argument("--json", action="store_true")
    add_curation_arguments(stats)
    stats.set_defaults(handler=_stats)


def _set(args: argparse.Namespace) -> int:
    from pydantic import TypeAdapter, ValidationError

    from osw_studio.core.actions import Action
    from osw_studio.core.review import ReviewEvent
    from osw_studio.trajectory.review import ReviewLog, default_reviewer
    from osw_studio.trajectory.store import RunStore

    run = RunStore(args.run)
    if args.step is None and (args.label or args.correction):
        raise StoreError("--label and --correction need --step N", where="review set")
    if args.step is not None and not 0 <= args.step <= run.count_steps():
        raise StoreError(f"the run has no step {args.step}", where=str(run.path))
    correction = None
    if args.correction:
        if args.label != "wrong":
            raise StoreError("--correction goes with --label wrong", where="--correction")
        try:
            correction = TypeAdapter(list[Action]).validate_json(args.correction)
        except ValidationError as exc:
            raise StoreError(
                f"not a list of actions: {exc.errors()[0]['msg']}", where="--correction"
            ) from None
    try:
        event = ReviewEvent(
            reviewer=args.reviewer or default_reviewer(),
            step=args.step,
            label=args.label,
            correction=correction,
            verdict="accepted" if args.accept else "rejected" if args.reject else None,
            rating=args.rating,
            note=args.note,
            clear=args.clear,
        )
    except ValidationError as exc:
        raise StoreError(exc.errors()[0]["msg"], where="review set") from None
    ReviewLog(run.path).append(event)
    print(f"recorded for {visible(run.run_id)} by {visible(event.reviewer)}")
    return ExitCode.OK


def _show(args: argparse.Namespace) -> int:
    from osw_studio.trajectory.review import ReviewLog
    from osw_studio.trajectory.store import RunStore

    run = RunStore(args.run)
    reviews = ReviewLog(run.path).reviews()
    if args.json:
        print(json.dumps({name: r.model_dump(mode="json") for name, r in reviews.items()}, indent=1))
        return ExitCode.OK
    if not reviews:
        print(f"{visible(run.run_id)}: not reviewed")
    for name, review in reviews.items():
        print(
            f"{visible(name)}: {review.verdict or 'no verdict'}, rating {review.rating or '-'}"
            + (f", note: {visible(review.note)}" if review.note else "")
        )
        for index in sorted(review.steps):
            step = review.steps[index]
            extra = f" → {len(step.correction)} corrected action(s)" if step.correction else ""
            print(f"  step {index}: {step.label or '-'}{extra}")
    return ExitCode.OK


def _stats(args: argparse.Namespace) -> int:
    from osw_studio.core.review import agreement
    from osw_studio.trajectory.curation import plan
    from osw_studio.trajectory.review import ReviewLog
    from osw_studio.trajectory.store import iter_runs

    curation = curation_from_args(args)
    runs = list(iter_runs(args.runs))
    per_run = [ReviewLog(run.path).reviews() for run in runs]
    labels: Counter[str] = Counter()
    verdicts: Counter[str] = Counter()
    ratings: Counter[int] = Counter()
    for reviews in per_run:
        for review in reviews.values():
            labels.update(step.label for step in review.steps.values() if step.label)
            verdicts[review.verdict or "no verdict"] += 1
            if review.rating:
                ratings[review.rating] += 1
    agree = agreement(per_run)
    selection = plan(runs, curation)
    kept = [p for p in selection.runs if p.copies]
    left_out = Counter(p.why for p in selection.runs if not p.copies)
    samples = sum(len(p.steps) * p.copies for p in kept)
    summary = {
        "runs": len(runs),
        "reviewed_runs": sum(1 for r in per_run if r),
        "step_labels": dict(labels),
        "verdicts": dict(verdicts),
        "ratings": {str(k): v for k, v in sorted(ratings.items())},
        "agreement": agree.model_dump(),
        "export": {
            "runs": len(kept),
            "replayed_runs": sum(1 for p in kept if p.copies > 1),
            "step_samples": samples,
            "runs_left_out": dict(left_out),
            "steps_dropped": selection.dropped_steps,
            "task_weights": {k: round(v, 6) for k, v in selection.weights.items()},
        },
    }
    if args.json:
        print(json.dumps(summary, indent=1))
        return ExitCode.OK
    print(f"{len(runs)} runs, {summary['reviewed_runs']} reviewed")
    print("step labels: " + (", ".join(f"{k} {v}" for k, v in sorted(labels.items())) or "none"))
    print("run verdicts: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())) if verdicts else "")
    if agree.runs:
        kappa = f"{agree.step_kappa:.3f}" if agree.step_kappa is not None else "-"
        share = f"{agree.step_agreement:.1%}" if agree.step_agreement is not None else "-"
        print(f"agreement over {agree.runs} runs: steps {share} (kappa {kappa}, {agree.step_pairs} pairs)")
    print(f"an export would hold {len(kept)} runs, {samples} step samples")
    for why, n in sorted(left_out.items()):
        print(f"  left out: {n} runs {why}")
    for why, n in sorted(selection.dropped_steps.items()):
        print(f"  dropped: {n} steps {why}")
    return ExitCode.OK
