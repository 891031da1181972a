"""Running the guest server: options, the token, the X display, uvicorn, and the ready line.

When the server accepts connections it prints one line to stdout,
``osw-studio guest ready on http://HOST:PORT token=TOKEN`` (``token=none`` with ``--no-token``), and
writes the same line to ``--ready-file`` if given, so a launcher can wait on the file instead of
polling. ``--port 0`` picks a free port; the ready line tells which. With ``--unix-socket PATH`` it
listens there instead and announces ``unix:PATH``.
"""

from __future__ import annotations

import argparse
import os
import secrets
import socket
import sys
from pathlib import Path
from typing import Any

from osw_studio.core.errors import GuestError

TOKEN_ENV = "OSW_GUEST_TOKEN"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the guest server's options to ``parser``."""
    parser.add_argument("--display", help="X display to serve, e.g. :1 (default: $DISPLAY)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=5000, help="port (default: 5000; 0 picks a free one)")
    parser.add_argument(
        "--unix-socket",
        type=Path,
        metavar="PATH",
        help="listen on this Unix socket (mode 0600) instead of --host/--port (the local sandbox does)",
    )
    auth = parser.add_mutually_exclusive_group()
    auth.add_argument(
        "--token", help=f"token every request must carry (default: ${TOKEN_ENV}, else generated)"
    )
    auth.add_argument(
        "--no-token", action="store_true", help="no auth, for OSWorld host code that sends no token"
    )
    parser.add_argument("--ready-file", type=Path, help="write the ready line to this file too")
    parser.add_argument(
        "--log-level", default="warning", choices=["critical", "error", "warning", "info", "debug"]
    )


def ready_line(host: str, port: int, token: str | None) -> str:
    """The line announcing that the server accepts connections.

    Examples:
        >>> ready_line("127.0.0.1", 5000, None)
        'osw-studio guest ready on http://127.0.0.1:5000 token=none'
    """
    return f"osw-studio guest ready on http://{host}:{port} token={token or 'none'}"


def _bind_unix(path: Path) -> socket.socket:
    """A listening Unix socket at ``path`` that only this uid can connect to."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)  # created 0600: no window in which another user could connect
    try:
        path.unlink(missing_ok=True)
        sock.bind(str(path))
    except OSError as exc:
        sock.close()
        raise GuestError(f"cannot listen on {path}: {exc.strerror}", where="--unix-socket") from exc
    finally:
        os.umask(old)
    sock.set_inheritable(True)
    return sock


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY on accepted sockets only when the listening
    # socket says TCP; without it Nagle's algorithm adds ~40 ms to every response.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise GuestError(
            f"cannot listen on {host}:{port}: {exc.strerror}",
            hint="pick another --port, or --port 0 for a free one",
        ) from exc
    sock.set_inheritable(True)
    return sock


def serve(args: argparse.Namespace) -> int:
    """Run the guest server until interrupted; returns the exit code.

    Raises:
        GuestError: If the display cannot be opened or the port cannot be bound.
    """
    import uvicorn

    from osw_studio.guest.app import create_app
    from osw_studio.guest.context import GuestContext

    display = args.display or os.environ.get("DISPLAY")
    if not display:
        raise GuestError("no X display given", hint="pass --display :N or set DISPLAY")
    os.environ["DISPLAY"] = display  # children (apps, pyautogui code) use this display
    token: str | None = None
    if args.no_token:
        print("warning: --no-token: anyone who can reach this port controls the desktop", file=sys.stderr)
    else:
        token = args.token or os.environ.get(TOKEN_ENV) or secrets.token_urlsafe(24)
    try:
        context = GuestContext.open(display)
    except Exception as exc:
        raise GuestError(
            f"cannot open the X display {display}: {exc}",
            hint="start the display first (e.g. Xvfb) and check --display",
        ) from exc
    if args.unix_socket is not None:
        sock = _bind_unix(args.unix_socket)
        line = f"osw-studio guest ready on unix:{args.unix_socket} token={token or 'none'}"
    else:
        sock = _bind(args.host, args.port)
        line = ready_line(args.host, sock.getsockname()[1], token)
    config = uvicorn.Config(
        create_app(context, token),
        log_level=args.log_level,
        access_log=False,
        timeout_graceful_shutdown=2,
    )
    server = _AnnouncingServer(config, line, args.ready_file)
    server.run(sockets=[sock])
    return 0


class _AnnouncingServer:
    """A uvicorn server that prints the ready line once it accepts connections."""

    def __new__(cls, config: Any, line: str, ready_file: Path | None) -> Any:
        import uvicorn

        class Server(uvicorn.Server):
            async def startup(self, sockets: list[socket.socket] | None = None) -> None:
                await super().startup(sockets=sockets)
                if self.should_exit:
                    return
                print(line, flush=True)
                if ready_file is not None:
                    partial = ready_file.with_name(ready_file.name + ".partial")
                    partial.write_text(line + "\n")
                    partial.replace(ready_file)

        return Server(config)
