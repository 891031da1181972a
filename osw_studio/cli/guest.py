"""``osw-studio guest serve``: run the guest server inside a desktop (VM, container, Xvfb)."""

from __future__ import annotations

import argparse
from typing import Any


def register(subparsers: Any) -> None:
    """Add ``guest serve``."""
    from osw_studio.guest.serve import add_arguments

    guest = subparsers.add_parser("guest", help="run the guest server inside a desktop")
    sub = guest.add_subparsers(dest="guest_command", metavar="ACTION", required=True)
    serve = sub.add_parser(
        "serve",
        help="serve OSWorld's guest API (plus OSW Studio's extensions) for one X display",
        description="Serve OSWorld's guest API and OSW Studio's extensions for one X display. Prints "
        "`osw-studio guest ready on http://HOST:PORT token=TOKEN` once it accepts connections.",
    )
    add_arguments(serve)
    serve.set_defaults(handler=_serve)


def _serve(args: argparse.Namespace) -> int:
    from osw_studio.guest.serve import serve

    return serve(args)
