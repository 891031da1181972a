"""``osw-studio tasks``: validate, list and check task files."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from osw_studio.core.exit_codes import ExitCode
from osw_studio.core.terminal import visible


def register(subparsers: Any) -> None:
    """Add ``tasks validate``, ``tasks list`` and ``tasks check``."""
    tasks = subparsers.add_parser("tasks", help="validate, list and check task files")
    sub = tasks.add_subparsers(dest="tasks_command", metavar="ACTION", required=True)

    validate = sub.add_parser(
        "validate",
        help="check task files; one line per invalid file",
        description="Check task files, folders or index files. Prints one line per invalid file "
        "(`path: $.json.path: message`), then `N valid, M invalid`. Exit 1 if any is invalid.",
    )
    validate.add_argument("paths", nargs="+", metavar="PATH")
    validate.set_defaults(handler=_validate)

    listing = sub.add_parser("list", help="list tasks by domain")
    listing.add_argument("paths", nargs="+", metavar="PATH")
    listing.add_argument("--domain", help="only this domain")
    listing.add_argument("--json", action="store_true", help="print JSON lines instead of a table")
    listing.set_defaults(handler=_list)

    check = sub.add_parser(
        "check",
        help="run each task's reference solution (must score 1.0) and nothing (must score 0.0)",
        description="Check tasks on fresh guests (local sandboxes, or containers with --provider docker): "
        "set up, replay the reference solution and evaluate "
        "(must score 1.0); set up, do nothing and evaluate (must score 0.0). A task without a solution "
        "gets only the second check. Prints one line per task (`PASS <id> solution=1.0 empty=0.0 "
        "(12.3s)`, `FAIL <id>: why`, or `SKIP <id>: why` for a file missing from the asset cache or an "
        "application this machine lacks), then `N passed, M failed, K skipped`. Exit 1 if any failed. "
        'A task that names its desktop (`"desktop": "osworld"`) runs on it; the others run on --desktop.',
    )
    check.add_argument("paths", nargs="+", metavar="PATH", help="task files, folders or index files")
    check.add_argument("--envs", type=int, default=1, metavar="N", help="sandboxes side by side (default 1)")
    check.add_argument("-k", "--filter", metavar="TEXT", help="only tasks whose id contains TEXT")
    check.add_argument(
        "--desktop",
        choices=["studio", "osworld"],
        help="the guests' applications for tasks that name none (a task's own `desktop` key wins; "
        "default: the settings' environment.desktop)",
    )
    check.add_argument(
        "--provider",
        nargs="+",
        metavar="WORD",
        default=["local"],
        help="where the fresh guests come from: `local` (sandboxes on this machine, the default) or "
        "`docker [KEY=VALUE...]` (a container of the guest image per run; with --desktop osworld the "
        "image of packaging/guest-image/build.sh --desktop osworld)",
    )
    check.add_argument(
        "--require-solution", action="store_true", help="a task without a reference solution fails"
    )
    check.add_argument(
        "--task-timeout",
        type=float,
        metavar="S",
        help="seconds one task's check may take, its guests' start included; then it fails saying so "
        "(default: no limit but each phase's own)",
    )
    check.set_defaults(handler=_check)


def _validate(args: argparse.Namespace) -> int:
    from osw_studio.tasks.load import load_tasks

    report = load_tasks(args.paths)
    for error in report.errors:
        print(visible(error))
    print(f"{len(report.entries)} valid, {len(report.errors)} invalid")
    return ExitCode.for_outcome(failed=bool(report.errors))


def _list(args: argparse.Namespace) -> int:
    from osw_studio.tasks.library import TaskLibrary

    library = TaskLibrary.from_paths(args.paths)
    entries = library.search(domain=args.domain)
    for entry in entries:
        task = entry.task
        if args.json:
            row = {
                "id": task.id,
                "domain": entry.domain,
                "instruction": task.instruction,
                "related_apps": task.related_apps,
                "path": str(entry.path),
                "has_solution": bool(task.solution),
            }
            print(json.dumps(row, ensure_ascii=False))
        else:
            print(f"{visible(entry.domain):<20} {visible(task.id):<38} {visible(task.instruction[:70])}")
    for error in library.errors:
        print(f"invalid: {visible(error)}", file=sys.stderr)
    return ExitCode.for_outcome(failed=bool(library.errors))


def _check(args: argparse.Namespace) -> int:
    import asyncio
    import time
    import warnings

    from osw_studio.core.errors import GuestError, TaskError
    from osw_studio.envs.choice import EnvChoice, parse_provider, with_desktop
    from osw_studio.envs.desktops import get_profile
    from osw_studio.envs.setup import setup_options
    from osw_studio.runner.check import CheckResult, check_tasks
    from osw_studio.settings import load_settings
    from osw_studio.tasks.load import TaskEntry, load_tasks

    if args.envs < 1:
        raise TaskError(f"--envs must be at least 1, not {args.envs}")
    report = load_tasks(args.paths)
    for error in report.errors:
        print(f"FAIL {visible(error)}", flush=True)
    seen: set[str] = set()
    entries = []
    for entry in report.entries:  # a folder and its index list the same files
        if entry.task.id not in seen and (not args.filter or args.filter in entry.task.id):
            seen.add(entry.task.id)
            entries.append(entry)
    if not entries and not report.errors:
        raise TaskError("no task to check", where=" ".join(args.paths), hint="check the paths and -k filter")

    # openpyxl complains about every workbook Gnumeric writes (no default style); it changes no score.
    warnings.filterwarnings("ignore", message="Workbook contains no default style", category=UserWarning)

    def show(result: CheckResult) -> None:
        print(visible(result.line()), flush=True)

    settings = load_settings(args.config)
    default = args.desktop or settings.environment.desktop

    def choose(desktop: str) -> EnvChoice:
        return parse_provider(with_desktop(args.provider, desktop))

    if choose(default).provider == "remote":
        raise GuestError(
            "tasks check needs a fresh guest for every run, which running guest servers are not",
            hint="use --provider local or --provider docker",
        )
    if args.desktop and choose(default).provider == "local":
        get_profile(args.desktop).check()  # a desktop asked for by name must be there
    setup = setup_options(settings)
    results: list[CheckResult] = []
    # A task that names its desktop ("desktop": "osworld") runs there; the others on the default.
    groups: dict[str, list[TaskEntry]] = {}
    for entry in entries:
        groups.setdefault(entry.task.desktop or default, []).append(entry)
    for wanted, group in groups.items():
        choice = choose(wanted)
        (options,) = choice.env_options(args.envs)[:1]
        desktop = str(options.get("desktop", "studio"))
        profile = get_profile(desktop)
        started = time.perf_counter()
        if choice.provider == "local":
            missing = profile.missing()
            if missing:
                why = (
                    f"needs the {desktop} desktop, whose programs this machine lacks ({', '.join(missing)}: "
                )
                for e in group:
                    results.append(CheckResult(e.task.id, path=e.path, skipped=why + "make setup-osworld)"))
                    show(results[-1])
                continue
        elif choice.provider == "docker" and options.get("mode") == "studio":
            profile = profile.in_image()  # the image build checked its programs
        results += asyncio.run(
            check_tasks(
                group,
                envs=args.envs,
                on_result=show,
                require_solution=args.require_solution,
                assets=setup.assets,
                apps=profile,
                provider=choice.provider,
                setup=setup,
                task_timeout=args.task_timeout,
                **options,
            )
        )
        elapsed = time.perf_counter() - started
        print(
            f"checked {len(group)} tasks on the {desktop} desktop ({choice.label}) in {elapsed:.1f}s",
            flush=True,
        )
    passed = sum(r.status == "PASS" for r in results)
    skipped = sum(r.status == "SKIP" for r in results)
    failed = len(results) - passed - skipped + len(report.errors)
    print(f"{passed} passed, {failed} failed, {skipped} skipped")
    return ExitCode.for_outcome(failed=bool(failed))
