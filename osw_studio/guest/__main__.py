"""``python -m osw_studio.guest``: run the guest server (same options as ``osw-studio guest serve``)."""

from __future__ import annotations

import argparse
import sys

from osw_studio.core.errors import OswError
from osw_studio.guest.serve import add_arguments, serve


def main(argv: list[str] | None = None) -> int:
    """Parse ``argv`` and run the guest server; an OswError is one line on stderr (exit 2)."""
    parser = argparse.ArgumentParser(prog="python -m osw_studio.guest", description="OSW Studio guest server")
    add_arguments(parser)
    args = parser.parse_args(argv)
    try:
        return serve(args)
    except OswError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
