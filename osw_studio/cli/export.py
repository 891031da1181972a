"""``osw-studio export``: turn run stores into training and evaluation formats."""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any, TextIO

from osw_studio.cli.review import add_curation_arguments, curation_from_args
from osw_studio.core.exit_codes import ExitCode
from osw_studio.core.terminal import visible


def register(subparsers: Any) -> None:
    """Add ``export``."""
    from osw_studio.trajectory.exporters import DESCRIPTIONS

    formats = "\n".join(f"  {name:<13} {text}" for name, text in DESCRIPTIONS.items())
    parser = subparsers.add_parser(
        "export",
        help="convert runs to training or evaluation formats",
        description="Convert run stores to a training or evaluation format. RUNS are run folders, "
        "runs/ folders or any folders above them. API keys never appear in the output: known keys (from "
        "environment variables named like *API_KEY*, *TOKEN*, *SECRET*) and anything shaped like a key "
        "are replaced by [REDACTED].",
        epilog=f"formats:\n{formats}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("runs", nargs="+", metavar="RUNS")
    parser.add_argument("--format", "-f", required=True, choices=list(DESCRIPTIONS), metavar="F")
    parser.add_argument("--out", "-o", required=True, metavar="DIR", help="output folder")
    filters = parser.add_argument_group("filters")
    filters.add_argument("--success-only", action="store_true", help="only successful runs")
    filters.add_argument("--min-score", type=float, metavar="X", help="only runs scored at least X")
    filters.add_argument(
        "--source",
        action="append",
        choices=["agent", "human", "edited"],
        help="only steps of this kind (repeatable): the model's, a person's, or a person's edit",
    )
    filters.add_argument("--domain", action="append", metavar="D", help="only this domain (repeatable)")
    filters.add_argument("--since", metavar="DATE", help="only runs started on or after DATE (ISO)")
    filters.add_argument("--until", metavar="DATE", help="only runs started on or before DATE (ISO)")
    chat = parser.add_argument_group(
        "chat formats (sft-*, preference, rollouts): each sample is the request the model was sent plus "
        "its target; runs that recorded no request are rebuilt with --profile"
    )
    chat.add_argument(
        "--profile", default="osworld", help="prompt and action format for runs without recorded requests"
    )
    chat.add_argument(
        "--reprompt",
        metavar="PROFILE",
        help="re-target every sample to PROFILE's prompt and action format (not what the model saw; the "
        "dataset card says so)",
    )
    chat.add_argument(
        "--train-size",
        metavar="WxH",
        help="scale images to WxH and pixel coordinates with them (the training resolution)",
    )
    chat.add_argument(
        "--coords",
        choices=["abs", "rel1000", "rel999", "norm", "smart"],
        help="override the coordinate convention",
    )
    chat.add_argument("--per", choices=["step", "episode"], default="step", help="one sample per step or run")
    chat.add_argument(
        "--history", type=int, default=None, metavar="K", help="screenshots per rebuilt sample (--profile)"
    )
    chat.add_argument(
        "--target",
        choices=["action", "thought-action"],
        default="thought-action",
        help="what a rebuilt assistant turn holds",
    )
    chat.add_argument(
        "--images",
        choices=["copy", "embed"],
        default=None,
        help="image files or data URLs (default: embed for sft-messages, copy otherwise)",
    )
    privacy = parser.add_argument_group("privacy")
    privacy.add_argument(
        "--scrub-typed", action="append", default=[], metavar="REGEX", help="redact typed text matching REGEX"
    )
    privacy.add_argument(
        "--secret-env", action="append", default=[], metavar="VAR", help="also redact the value of VAR"
    )
    add_curation_arguments(parser)
    parser.add_argument(
        "--apply-corrections",
        action="store_true",
        help="export reviewers' corrections (steps labelled wrong, with the right action) as edits: "
        "SFT targets and the chosen side of preference pairs",
    )
    parser.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    parser.set_defaults(handler=_export)


class ProgressBar:
    """A one-line progress bar on a terminal; occasional plain lines otherwise (logs, CI).

    Args:
        stream: Where to draw (stderr).
        width: Bar width in characters.
    """

    def __init__(self, stream: TextIO, width: int = 30) -> None:
        self.stream = stream
        self.width = width
        self.tty = stream.isatty()
        self._last = 0.0

    def __call__(self, done: int, total: int, summary: Any) -> None:
        """Draw the state after ``done`` of ``total`` runs."""
        now = time.monotonic()
        if done < total and now - self._last < (0.1 if self.tty else 5.0):
            return
        self._last = now
        filled = self.width * done // max(total, 1)
        line = f"[{'#' * filled}{'.' * (self.width - filled)}] {done}/{total} runs, {summary.samples} samples"
        if self.tty:
            self.stream.write("\r" + line + ("\n" if done == total else ""))
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def _curating(args: argparse.Namespace) -> bool:
    """Whether any review or selection option was given."""
    return bool(
        args.review != "any"
        or args.min_rating is not None
        or args.drop_label
        or args.replay_below is not None
        or args.entropy_top is not None
    )


def _export(args: argparse.Namespace) -> int:
    from osw_studio.trajectory.export import export_options, export_runs, run_filter

    options = export_options(
        run_filter(
            success_only=args.success_only,
            min_score=args.min_score,
            sources=args.source or (),
            domains=args.domain or (),
            since=args.since,
            until=args.until,
        ),
        scrub_typed=args.scrub_typed,
        secret_env=args.secret_env,
        profile=args.profile,
        coords=args.coords,
        per=args.per,
        history=args.history,
        target=args.target,
        images=args.images,
        reprompt=args.reprompt,
        train_size=args.train_size,
        curation=curation_from_args(args) if _curating(args) else None,
        apply_corrections=args.apply_corrections,
    )
    progress = None if args.quiet else ProgressBar(sys.stderr)
    summary = export_runs(args.runs, args.format, args.out, options, progress)
    for problem in summary.damaged:
        print(f"skipped a damaged run: {visible(problem)}", file=sys.stderr)
    skipped = ", ".join(f"{n} {why}" for why, n in summary.skipped.items()) or "none"
    print(
        f"{summary.runs_exported} of {summary.runs_found} runs exported as {summary.format} to {summary.out} "
        f"({summary.samples} samples; skipped: {skipped})"
    )
    return ExitCode.OK
