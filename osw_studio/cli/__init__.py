"""The ``osw-studio`` command: the app with no arguments, headless sub-commands otherwise.

Each sub-command group lives in its own module under ``osw_studio.cli`` and exposes
``register(subparsers)``. Modules import heavy dependencies inside their handlers so that
``osw-studio --help`` stays fast. Handlers return an exit code; an :class:`OswError` is printed as one
line on stderr (exit 2), never as a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import sys
from collections.abc import Callable, Iterator, Sequence

from osw_studio import __version__
from osw_studio.core.errors import OswError
from osw_studio.core.exit_codes import ExitCode
from osw_studio.core.terminal import VisibleFormatter, VisibleStream

COMMAND_MODULES: tuple[str, ...] = (
    "osw_studio.cli.tasks",
    "osw_studio.cli.run",
    "osw_studio.cli.actions",
    "osw_studio.cli.guest",
    "osw_studio.cli.sandbox",
    "osw_studio.cli.keys",
    "osw_studio.cli.model",
    "osw_studio.cli.eval",
    "osw_studio.cli.export",
    "osw_studio.cli.assets",
    "osw_studio.cli.review",
)
"""Modules that add sub-commands, in the order ``--help`` lists them."""

Handler = Callable[[argparse.Namespace], int]


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser with every sub-command registered."""
    parser = argparse.ArgumentParser(
        prog="osw-studio",
        description="Watch, steer, evaluate and learn from computer-use agents. "
        "With no command, opens the desktop app.",
    )
    parser.add_argument("--version", action="version", version=f"osw-studio {__version__}")
    parser.add_argument("--config", metavar="FILE", help="settings file (default: the platform config dir)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def _open_app(args: argparse.Namespace) -> int:
    try:
        app = importlib.import_module("osw_studio.app")
    except ImportError:
        build_parser().print_help()
        return ExitCode.OK
    result: int = app.main(args)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``osw-studio`` with ``argv`` (default: the process arguments) and return the exit code."""
    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Handler | None = getattr(args, "handler", None)
    if handler is None:
        return _run(_open_app, args)
    with _visible_output():
        return _run(handler, args)


def _run(handler: Handler, args: argparse.Namespace) -> int:
    try:
        return handler(args)
    except OswError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return ExitCode.ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return ExitCode.INTERRUPTED
    except BrokenPipeError:
        return ExitCode.OK


@contextlib.contextmanager
def _visible_output() -> Iterator[None]:
    """While a sub-command runs, stdout, stderr and log lines show control characters as escapes.

    Sub-commands print task ids, instructions, model thoughts and guest errors: none of them may drive
    the terminal (:mod:`osw_studio.core.terminal`).
    """
    saved = sys.stdout, sys.stderr
    sys.stdout, sys.stderr = VisibleStream(sys.stdout), VisibleStream(sys.stderr)
    handler = logging.StreamHandler()  # sys.stderr at each record: the wrapped stream
    handler.setLevel(logging.WARNING)  # what Python's last-resort handler shows
    handler.setFormatter(VisibleFormatter("%(message)s"))
    root = logging.getLogger()
    own = not root.handlers
    if own:
        root.addHandler(handler)
    try:
        yield
    finally:
        if own:
            root.removeHandler(handler)
        sys.stdout, sys.stderr = saved


if __name__ == "__main__":
    sys.exit(main())
