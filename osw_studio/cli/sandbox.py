"""``osw-studio sandbox``: start a local sandbox desktop, optionally set up a task, keep it until Ctrl+C."""

from __future__ import annotations

import argparse
import re
from typing import Any

from osw_studio.core.errors import GuestError
from osw_studio.core.exit_codes import ExitCode
from osw_studio.core.terminal import visible
from osw_studio.envs.sandbox import NETWORK_MODES


def register(subparsers: Any) -> None:
    """Add ``sandbox``."""
    parser = subparsers.add_parser(
        "sandbox",
        help="start a local sandbox desktop (optionally with a task's setup) until Ctrl+C",
        description="Start a local sandbox (Xvfb, openbox, D-Bus with AT-SPI and the guest server, inside "
        "bubblewrap when installed), run a task's setup steps if given, print the display, the guest "
        "server's URL and token, and keep everything running until Ctrl+C; then stop it all.",
    )
    parser.add_argument("--task", metavar="FILE", help="a task file whose setup (config) to run")
    parser.add_argument("--cache", metavar="DIR", help="asset cache folder for the task's downloads")
    parser.add_argument(
        "--screen", default="1920x1080", metavar="WxH", help="screen size (default 1920x1080)"
    )
    parser.add_argument("--no-bwrap", action="store_true", help="do not use bubblewrap even when installed")
    parser.add_argument(
        "--network",
        choices=NETWORK_MODES,
        default="none",
        help="what the guest may reach: none (the default; nothing, not even this machine) or outbound "
        "(the internet, for tasks that browse; never this machine's loopback services or sockets)",
    )
    parser.set_defaults(handler=_sandbox)


def parse_screen(text: str) -> tuple[int, int]:
    """``"1280x720"`` -> ``(1280, 720)``.

    >>> parse_screen("1280x720")
    (1280, 720)
    """
    match = re.fullmatch(r"\s*(\d{3,5})\s*[xX]\s*(\d{3,5})\s*", text)
    if not match:
        raise GuestError(
            f"bad screen size {text!r}", where="--screen", hint="write it as WIDTHxHEIGHT, e.g. 1920x1080"
        )
    return int(match.group(1)), int(match.group(2))


def _sandbox(args: argparse.Namespace) -> int:
    import asyncio

    return asyncio.run(_run(args))


async def _run(args: argparse.Namespace) -> int:
    import asyncio
    import signal
    import sys
    from pathlib import Path

    from osw_studio.envs.local import LocalProvider
    from osw_studio.envs.setup import SetupOptions, preflight
    from osw_studio.tasks.load import load_task

    screen = parse_screen(args.screen)
    entry = load_task(args.task) if args.task else None
    options = SetupOptions(
        cache_dir=Path(args.cache) if args.cache else None,
        task_dir=entry.path.parent if entry else None,
    )
    if entry is not None:
        preflight(entry.task.config, options=options)  # fail before starting anything

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    provider = LocalProvider(screen=screen, sandbox=False if args.no_bwrap else None, network=args.network)
    env = await provider.create(setup=options)
    try:
        print(f"display: {env.display}")
        print(f"xauth:   {env.session.xauthority}  (the display's cookie: XAUTHORITY=this file)")
        print(f"url:     {env.url}")
        print(f"token:   {env.token}")
        print(f"home:    {env.session.home}  ({'bubblewrap' if provider.sandbox else 'no sandbox'})")
        confined = "" if provider.sandbox else " (not enforced without bubblewrap)"
        print(f"network: {provider.network}{confined}")
        if entry is not None:
            print(f"setting up {visible(entry.task.id)} ({len(entry.task.config)} steps)...", flush=True)
            setup = asyncio.ensure_future(env.reset(entry.task, task_dir=entry.path.parent))
            stopping = asyncio.ensure_future(stop.wait())
            await asyncio.wait({setup, stopping}, return_when=asyncio.FIRST_COMPLETED)
            if not setup.done():  # Ctrl+C during setup
                setup.cancel()
                return ExitCode.INTERRUPTED
            stopping.cancel()
            setup.result()
            print("task ready:", visible(entry.task.instruction))
        print("running; press Ctrl+C to stop", flush=True)
        await stop.wait()
    finally:
        await env.close()
        print("stopped", file=sys.stderr)
    return ExitCode.OK
