"""The frozen app's entry point: ``osw-studio`` as PyInstaller runs it.

A frozen bundle has no Python interpreter, yet parts of OSW Studio start Python children with
``sys.executable``: the local provider runs ``<python> -m osw_studio.guest ...`` and the guest server's
``/run_python`` runs ``<python> script.py``. In the bundle ``sys.executable`` is this program, so it
understands those two forms as well as the usual ``osw-studio`` arguments.
"""

from __future__ import annotations

import multiprocessing
import runpy
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    """Dispatch ``argv`` (without the program name) and return the exit code."""
    if argv[:2] == ["-m", "osw_studio.guest"]:
        from osw_studio.guest.__main__ import main as guest_main

        return guest_main(argv[2:])
    if argv and argv[0].endswith(".py") and Path(argv[0]).is_file():
        sys.argv = argv
        runpy.run_path(argv[0], run_name="__main__")
        return 0
    from osw_studio.cli import main as cli_main

    return cli_main(argv)


if __name__ == "__main__":
    multiprocessing.freeze_support()
    sys.exit(main(sys.argv[1:]))
