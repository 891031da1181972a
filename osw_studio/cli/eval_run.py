"""``osw-studio eval run`` (a suite over a pool of envs) and ``osw-studio eval stats`` (its results).

``eval run`` exits 0 when every task ran to a score (whatever the score), 1 when some ended in error or
the batch was stopped, 2 on a user error (a bad suite, provider or profile).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from osw_studio.core.agent_specs import SUITE_AGENTS
from osw_studio.core.exit_codes import ExitCode
from osw_studio.core.terminal import VisibleStream, visible

if TYPE_CHECKING:
    from osw_studio.core.budget import RunBudget
    from osw_studio.runner.batch import Batch, BatchProgress
    from osw_studio.runner.suite import SuitePlan
    from osw_studio.runner.summary import TaskOutcome

EVALUATORS = ("osw-studio", "osworld")  # as evaluation.osworld.EVALUATORS, which --help need not import
EVALUATOR_HELP = (
    "who scores the end state: osw-studio (our metrics, the default) or osworld (OSWorld's own metric "
    "functions in the side environment, .venv-ref unless settings or OSW_REFERENCE_PYTHON say otherwise, "
    "over the files our getters fetched); default: the evaluation.evaluator setting"
)
AGENTS = SUITE_AGENTS  # as runner.suite.AGENTS, which --help need not import


def register_run(sub: Any) -> None:
    """Add ``eval run``."""
    parser = sub.add_parser(
        "run",
        help="run a task suite on a pool of envs and score it",
        description="Run every task of SUITE (an OSWorld index JSON or a folder of task files) on a pool "
        "of envs: each env takes the next task the moment its episode ends. Writes run stores under "
        "OUT/runs, OSWorld's results layout under OUT/results and OUT/summary.json. A task that crashes "
        "or times out is recorded as an error and its env replaced. Exit 0 when every task was scored, "
        "1 when some ended in error, 2 on a user error.",
    )
    parser.add_argument(
        "suite", metavar="SUITE", help="an index JSON (e.g. tasks/test_small.json) or a folder"
    )
    parser.add_argument("--profile", metavar="P", help="settings profile (default: the active one)")
    parser.add_argument(
        "--agent", choices=AGENTS, help="who acts (replay plays each task's reference solution; needs no key)"
    )
    parser.add_argument(
        "--envs", type=int, metavar="N", help="envs in the pool (default 1; remote: one per URL)"
    )
    parser.add_argument(
        "--provider",
        nargs="+",
        metavar="WORD",
        default=["local"],
        help="`local` (sandboxed desktops on this machine, the default), `remote URL...` (running guest "
        "servers, one env per URL; tokens from the keyring, `osw-studio keys set --guest URL`, else "
        "$OSW_GUEST_TOKEN) or `docker [studio|osworld] [KEY=VALUE...]` (one container per env; "
        "osworld needs qcow2=PATH)",
    )
    parser.add_argument(
        "--desktop",
        choices=["studio", "osworld"],
        help="the guests' applications (local sandboxes or docker containers): studio or osworld "
        "(OSWorld's; make setup-osworld, or build.sh --desktop osworld). Default: the settings' "
        "environment.desktop",
    )
    parser.add_argument(
        "--out", metavar="DIR", help="output folder (default: settings output_dir, else ./results)"
    )
    parser.add_argument(
        "--max-steps", type=int, metavar="N", help="most agent steps per task (default: settings)"
    )
    parser.add_argument("--domain", action="append", metavar="D", help="only this domain (repeat for more)")
    parser.add_argument("--resume", action="store_true", help="skip tasks that already have a score in --out")
    parser.add_argument(
        "--task-timeout", type=float, default=1800.0, metavar="S", help="seconds per task (default 1800)"
    )
    parser.add_argument(
        "--recycle",
        choices=("task", "error"),
        help="start a fresh env for every task (local default) or only after an error (remote and "
        "docker default; a docker env recreates its container for each task anyway)",
    )
    parser.add_argument(
        "--backend",
        choices=("local", "ray"),
        default="local",
        help="run envs in this process or as Ray actors",
    )
    parser.add_argument(
        "--address",
        metavar="ADDR",
        help="Ray cluster address (default: start a Ray instance on this machine)",
    )
    parser.add_argument("--evaluator", choices=EVALUATORS, help=EVALUATOR_HELP)
    parser.add_argument(
        "--retry-errors",
        type=int,
        default=0,
        metavar="N",
        help="run a task that ended in an environment or model error again, up to N more times "
        "(every attempt stays in OUT/runs; the latest counts)",
    )
    add_budget_arguments(parser)
    parser.add_argument(
        "--repeats",
        type=int,
        default=1,
        metavar="K",
        help="run the suite K times, each task on a fresh desktop, into OUT/repeat-1 ... OUT/repeat-K; "
        "`eval stats OUT` then reports the mean with its interval, pass@k and pass^k",
    )
    parser.add_argument(
        "--suite-budget-cost",
        type=float,
        metavar="C",
        help="the most this session's runs may cost together: then no task starts and the runs in flight "
        "end as budget (scored); --resume goes on",
    )
    parser.add_argument(
        "--rerun-budget", action="store_true", help="with --resume, also rerun the tasks a budget ended"
    )
    parser.set_defaults(handler=_run)


def add_budget_arguments(parser: argparse.ArgumentParser) -> None:
    """``--budget-tokens``, ``--budget-cost`` and ``--budget-time``: each run's budget."""
    parser.add_argument(
        "--budget-tokens", type=int, metavar="N", help="end a run as budget once it used N tokens (scored)"
    )
    parser.add_argument(
        "--budget-cost", type=float, metavar="C", help="end a run as budget once it cost C (needs a price)"
    )
    parser.add_argument(
        "--budget-time", type=float, metavar="S", help="end a run as budget after S seconds (scored)"
    )


def budget_from(args: argparse.Namespace) -> RunBudget | None:
    """The run budget the arguments ask for (None: the profile's)."""
    from osw_studio.core.budget import RunBudget
    from osw_studio.core.errors import SettingsError

    values = {"tokens": args.budget_tokens, "cost": args.budget_cost, "seconds": args.budget_time}
    given = {k: v for k, v in values.items() if v is not None}
    try:
        return RunBudget(**given) if given else None
    except ValueError as exc:
        raise SettingsError(
            "a budget must be a positive number", where="--budget-*", hint="give tokens, cost or seconds > 0"
        ) from exc


def register_stats(sub: Any) -> None:
    """Add ``eval stats``."""
    parser = sub.add_parser(
        "stats",
        help="per-domain success rates of a results folder, OSWorld style",
        description="Per domain: tasks, successes and the success rate (sum of scores over tasks, as "
        "OSWorld's show_result.py), then OSWorld's Office, Daily and Professional groups and the total. "
        "DIR is the --out folder of `eval run`, a runs folder, or an OSWorld results folder.",
    )
    parser.add_argument("dir", metavar="DIR", help="results folder")
    parser.add_argument("--compare", metavar="DIR2", help="a second results folder, shown side by side")
    parser.add_argument("--json", action="store_true", help="print the statistics as JSON")
    parser.set_defaults(handler=_stats)


# --- eval stats ------------------------------------------------------------------------------------


def _stats(args: argparse.Namespace) -> int:
    from osw_studio.runner.accounting import compare, comparison_json, format_accounting, format_comparison
    from osw_studio.runner.repeats import repeat_folders
    from osw_studio.runner.summary import compute_stats, format_stats, load_outcomes

    if not args.compare and repeat_folders(Path(args.dir)):
        return _repeat_stats(args, repeat_folders(Path(args.dir)))
    folders = [args.dir, *([args.compare] if args.compare else [])]
    loaded = [load_outcomes(folder) for folder in folders]
    stats = [compute_stats(outcomes, label) for label, outcomes in loaded]
    if len(stats) == 2 and stats[0].label == stats[1].label:
        for s, folder in zip(stats, folders, strict=True):
            s.label = Path(folder).name or s.label
    paired = compare(loaded[0][1], loaded[1][1]) if len(loaded) == 2 else None
    if args.json:
        data: Any = stats[0].to_json()
        if paired is not None:
            data = {"folders": [s.to_json() for s in stats], "comparison": comparison_json(paired)}
        print(json.dumps(data, indent=2))
        return ExitCode.OK
    print(format_stats(stats))
    for s in stats:
        print(f"\n{visible(s.label)}: OSWorld rate (every started task, errors as 0) and valid-run rate")
        print(visible(format_accounting(s), keep="\n"))
    if paired is not None:
        print()
        print(visible(format_comparison(paired, stats[0].label, stats[1].label), keep="\n"))
    return ExitCode.OK


def _repeat_stats(args: argparse.Namespace, folders: list[Path]) -> int:
    from osw_studio.runner.repeats import compute_repeats, format_repeats, repeats_json
    from osw_studio.runner.summary import compute_stats, load_outcomes

    loaded = [load_outcomes(folder) for folder in folders]
    rows = compute_repeats([outcomes for _, outcomes in loaded])
    if args.json:
        runs = [compute_stats(o, f.name).to_json() for f, (_, o) in zip(folders, loaded, strict=True)]
        print(json.dumps({"repeats": repeats_json(rows), "runs": runs}, indent=2))
    else:
        print(visible(format_repeats(rows), keep="\n"))
    return ExitCode.OK


# --- eval run --------------------------------------------------------------------------------------


def _run(args: argparse.Namespace) -> int:
    from osw_studio.envs.choice import with_desktop
    from osw_studio.runner.out_lock import OutLock
    from osw_studio.runner.suite import SuiteRequest, plan_suite
    from osw_studio.settings import load_settings

    settings = load_settings(args.config)
    for notice in settings.notices:
        print(notice, file=sys.stderr)
    request = SuiteRequest(
        suite=args.suite,
        profile=args.profile,
        agent=args.agent,
        provider=with_desktop(args.provider, args.desktop or settings.environment.desktop),
        envs=args.envs,
        out=args.out,
        max_steps=args.max_steps,
        domains=args.domain,
        resume=args.resume,
        task_timeout=args.task_timeout,
        recycle=args.recycle,
        backend=args.backend,
        address=args.address,
        evaluator=args.evaluator,
        retry_errors=args.retry_errors,
        budget=budget_from(args),
        cost_budget=args.suite_budget_cost,
        rerun_budget=args.rerun_budget,
    )
    if args.repeats > 1:
        return _repeated(settings, request, args.repeats)
    plan = plan_suite(settings, request, report=lambda text: print(text, file=sys.stderr))
    with OutLock(plan.out):  # two runs on one --out would interleave their results
        return asyncio.run(_session(plan))


def _repeated(settings: Any, request: Any, repeats: int) -> int:
    """``--repeats K``: the suite K times, into ``OUT/repeat-i``, each task on a fresh desktop."""
    import dataclasses

    from osw_studio.runner.repeats import compute_repeats, format_repeats, repeat_dir
    from osw_studio.runner.suite import DEFAULT_OUT, plan_suite
    from osw_studio.runner.summary import load_outcomes

    base = Path(request.out or settings.evaluation.output_dir or DEFAULT_OUT)
    codes = []
    for index in range(1, repeats + 1):
        print(f"repeat {index} of {repeats}", flush=True)
        one = dataclasses.replace(request, out=repeat_dir(base, index), recycle="task")
        plan = plan_suite(settings, one, report=lambda text: print(text, file=sys.stderr))
        codes.append(asyncio.run(_session(plan)))
    rows = compute_repeats([load_outcomes(repeat_dir(base, i))[1] for i in range(1, repeats + 1)])
    print(visible(format_repeats(rows), keep="\n"))
    return max(codes)


async def _session(plan: SuitePlan) -> int:
    from osw_studio.runner.summary import compute_stats, format_stats

    batch = plan.batch()
    entries, out, workers = plan.entries, plan.out, batch.workers
    todo = batch.pending()
    if batch.skipped:
        print(f"resuming: {batch.skipped} of {len(entries)} tasks already scored, {len(todo)} to run")
    print(f"{len(todo)} tasks on {len(workers)} {plan.provider} env(s), results in {out}", flush=True)
    bar = ProgressBar(batch, sys.stderr)
    loop = asyncio.get_running_loop()
    stopped = False

    def interrupt() -> None:
        nonlocal stopped
        stopped = True
        bar.note(
            "stopping: tasks in flight end as stopped; rerun with --resume to finish (Ctrl+C again quits)"
        )
        batch.stop()
        loop.remove_signal_handler(signal.SIGINT)

    with contextlib.suppress(NotImplementedError, RuntimeError):
        loop.add_signal_handler(signal.SIGINT, interrupt)
    try:
        summary = await batch.run()
    finally:
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.remove_signal_handler(signal.SIGINT)
        bar.close()
    print(format_stats([compute_stats(summary.tasks, summary.model or "")]))
    print(
        f"wall time {summary.wall_time:.1f} s, env utilisation {100 * summary.env_utilisation:.1f}% "
        f"({len(workers)} envs); summary in {out / 'summary.json'}"
    )
    if summary.budget_note:
        print(f"{summary.budget_note}: the remaining tasks did not start (--resume runs them)")
    errors = [t for t in summary.tasks if t.status == "error"]
    for outcome in errors:
        print(
            f"error: {visible(outcome.domain)}/{visible(outcome.task_id)}: {visible(outcome.error)}",
            file=sys.stderr,
        )
    return ExitCode.for_outcome(failed=bool(errors or stopped or len(summary.tasks) < len(entries)))


def _clock(seconds: float | None) -> str:
    """``m:ss`` (or ``h:mm:ss``) for a duration; ``--:--`` when unknown.

    >>> _clock(75), _clock(3725), _clock(None)
    ('1:15', '1:02:05', '--:--')
    """
    if seconds is None:
        return "--:--"
    s = int(seconds + 0.5)
    h, m, s = s // 3600, s // 60 % 60, s % 60
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"


def render_bar(progress: BatchProgress, width: int = 24) -> str:
    """One progress line.

    >>> from osw_studio.runner.batch import BatchProgress
    >>> render_bar(BatchProgress(total=4, done=1, skipped=0, running=2, successes=1, elapsed=30, eta=90), 8)
    '[##......] 1/4  ok 1  running 2  elapsed 0:30  eta 1:30'
    """
    filled = int(width * progress.done / progress.total) if progress.total else width
    text = (
        f"[{'#' * filled}{'.' * (width - filled)}] {progress.done}/{progress.total}  ok {progress.successes}"
        f"  running {progress.running}  elapsed {_clock(progress.elapsed)}  eta {_clock(progress.eta)}"
    )
    if progress.tokens:
        cost = "cost ?" if progress.cost is None else f"${progress.cost:.4f}"
        text += f"  {progress.tokens} tokens {cost}"
    return text


class ProgressBar:
    """Draws a batch's progress on a terminal (redrawn in place), or one line per task elsewhere.

    The bar draws with escape sequences of its own, so it writes past a :class:`VisibleStream`; the task
    lines it prints are made visible here.
    """

    def __init__(self, batch: Batch, stream: TextIO) -> None:
        self.stream = stream.wrapped if isinstance(stream, VisibleStream) else stream
        self.tty = stream.isatty()
        self._last = ""
        batch.progress_changed.connect(self._on_progress_changed)
        batch.task_finished.connect(self._on_task_finished)

    def _on_progress_changed(self, progress: BatchProgress) -> None:
        self._last = render_bar(progress)
        if self.tty:
            self.stream.write("\r\x1b[2K" + self._last)
            self.stream.flush()

    def _on_task_finished(self, outcome: TaskOutcome) -> None:
        score = "-" if outcome.score is None else f"{outcome.score:.2f}"
        line = (
            f"{outcome.status:<9}{score:>5}  {outcome.domain}/{outcome.task_id}  {outcome.steps} steps  "
            f"{outcome.time:.1f}s  {outcome.env or ''}"
        )
        if outcome.error:
            line += f"  ({outcome.error[:120]})"
        self.note(line)

    def note(self, text: str) -> None:
        """Print a line above the bar."""
        text = visible(text)
        if self.tty:
            self.stream.write("\r\x1b[2K" + text + "\n" + self._last)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        """Leave the last bar on its own line."""
        if self.tty and self._last:
            self.stream.write("\n")
        elif self._last:
            self.stream.write(self._last + "\n")
        self.stream.flush()
