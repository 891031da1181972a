"""``osw-studio tasks``: validate and list task files."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(subparsers: Any) -> None:
    """Add ``tasks validate`` and ``tasks list``."""
    tasks = subparsers.add_parser("tasks", help="validate and list task files")
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


def _validate(args: argparse.Namespace) -> int:
    from osw_studio.tasks.load import load_tasks

    report = load_tasks(args.paths)
    for error in report.errors:
        print(error)
    print(f"{len(report.entries)} valid, {len(report.errors)} invalid")
    return 1 if report.errors else 0


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
            print(f"{entry.domain:<20} {task.id:<38} {task.instruction[:70]}")
    for error in library.errors:
        print(f"invalid: {error}", file=sys.stderr)
    return 1 if library.errors else 0
