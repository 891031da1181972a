"""``osw-studio eval``: scoring tools (``coverage``; ``run`` and ``stats`` are in :mod:`.eval_run`)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from osw_studio.core.exit_codes import ExitCode
from osw_studio.core.terminal import visible


def register(subparsers: Any) -> None:
    """Add the ``eval`` group and its ``coverage``, ``run`` and ``stats`` commands."""
    from osw_studio.cli.eval_run import register_run, register_stats

    group = subparsers.add_parser("eval", help="run task suites, score episodes, report what can be scored")
    sub = group.add_subparsers(dest="eval_command", metavar="ACTION", required=True)
    _register_coverage(sub)
    register_run(sub)
    register_stats(sub)


def _register_coverage(sub: Any) -> None:
    parser = sub.add_parser(
        "coverage",
        help="which tasks the evaluator can score, per domain",
        description="For each domain: the number of tasks, the tasks whose every func, getter, option and "
        "setup step type is implemented, the percentage, and the missing names by how many tasks they "
        "block. Then, per metric and getter the tasks use: how many tasks use it, whether it is "
        "implemented, and whether it is differential-tested against OSWorld's own code. "
        "Exit 1 if a task file is invalid.",
    )
    parser.add_argument("paths", nargs="+", metavar="PATH", help="task files, folders or index files")
    parser.add_argument("--json", action="store_true", help="print the report as one JSON object")
    parser.add_argument("--top", type=int, default=5, metavar="N", help="missing names shown per domain")
    parser.add_argument(
        "--no-names", action="store_true", help="leave out the per-name table (implemented, parity-tested)"
    )
    parser.set_defaults(handler=_coverage)


def _coverage(args: argparse.Namespace) -> int:
    from osw_studio.core.errors import TaskError
    from osw_studio.evaluation.coverage import coverage
    from osw_studio.tasks.library import TaskLibrary

    library = TaskLibrary.from_paths(args.paths)
    if not len(library) and not library.errors:
        raise TaskError("no task files found", where=" ".join(args.paths), hint="give a task folder or index")
    report = coverage((entry.domain, entry.task) for entry in library)
    if args.json:
        data = report.model_dump()
        for row in [*data["domains"], data["total"]]:
            row["percent"] = round(100.0 * row["covered"] / row["tasks"], 1) if row["tasks"] else 0.0
        print(json.dumps(data, indent=2))
    else:
        print(f"{'domain':<22}{'tasks':>6}{'covered':>9}{'%':>7}  missing (tasks blocked)")
        for row in [*report.domains, report.total]:
            top = ", ".join(f"{_shown(name)} ({n})" for name, n in list(row.missing.items())[: args.top])
            print(f"{row.domain:<22}{row.tasks:>6}{row.covered:>9}{row.percent:>6.1f}%  {top}")
        if not args.no_names:
            _print_names(report.names)
    for error in library.errors:
        print(f"invalid: {visible(error)}", file=sys.stderr)
    return ExitCode.for_outcome(failed=bool(library.errors))


def _print_names(names: list[Any]) -> None:
    tested = sum(1 for n in names if n.implemented and n.differential_tested)
    implemented = sum(1 for n in names if n.implemented)
    print()
    print(f"{'name':<46}{'tasks':>6}  {'implemented':<12}differential-tested against OSWorld")
    for n in names:
        label = _shown(f"{n.kind} {n.name}")
        print(
            f"{label:<46}{n.tasks:>6}  {'yes' if n.implemented else 'no':<12}"
            f"{'yes' if n.differential_tested else 'no'}"
        )
    for n in names:
        if n.implemented and n.differs:
            print(f"  {_shown(f'{n.kind} {n.name}')} can differ from OSWorld: {n.differs}")
    print(f"{implemented} of {len(names)} names implemented, {tested} of them differential-tested")


def _shown(text: str) -> str:
    r"""``text`` as it may reach a terminal: names come from task files, which may hold control codes.

    >>> _shown("metric exact_match"), _shown("metric x\x1b[2J")
    ('metric exact_match', "'metric x\\x1b[2J'")
    """
    return text if text.isprintable() else ascii(text)
