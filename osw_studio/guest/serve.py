"""Running the guest server: options, the token, the X display, uvicorn, and the ready line.

When the server accepts connections it prints one line to stdout,
``osw-studio guest ready on http://HOST:PORT token=TOKEN`` (``token=none`` with ``--no-token``), and
writes the same line to ``--ready-file`` if given (readable by its owner only), so a launcher can wait
on the file instead of polling. ``--port 0`` picks a free port; the ready line tells which. With
``--unix-socket PATH`` it listens there instead and announces ``unix:PATH``.

The token never travels on a command line (any local user reads those in ``ps``): it comes from
``$OSW_GUEST_TOKEN`` or ``--token-file``, or is generated, and the variable is removed from the
server's environment before any command runs, so guest commands do not inherit it.

Connections are bounded: request headers must arrive within :data:`HEADER_TIMEOUT_S` of a connection
opening (or of its last response), idle keep-alive connections close after :data:`KEEP_ALIVE_S`, and
at most :data:`MAX_CONCURRENCY` connections and requests are served at once (503 beyond).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import secrets
import socket
import sys
from pathlib import Path
from typing import Any

from osw_studio.core.errors import GuestError
from osw_studio.guest.guard import HostPolicy

TOKEN_ENV = "OSW_GUEST_TOKEN"

HEADER_TIMEOUT_S = 10.0
"""Seconds a connection may take to send a request's headers (slowloris)."""

KEEP_ALIVE_S = 5
"""Seconds an idle keep-alive connection stays open (OSWorld's client expects 5; ours closes at 2)."""

MAX_CONCURRENCY = 200
"""Connections and requests served at once; more get 503."""

MAX_HALF_OPEN = 64
"""Connections that may wait for their request's headers at once: a new one closes the oldest.

Reconnecting slow half-requests (slowloris) then only push each other out, and never fill the
:data:`MAX_CONCURRENCY` slots that real requests, whose headers come at once, need."""

HALF_OPEN_GRACE_S = 0.5
"""Seconds a new connection that sent nothing yet is safe from being pushed out."""


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
    # A listening socket the launcher made and passed (the local sandbox: its path is out of the
    # sandbox's view, so nothing inside can replace it).
    parser.add_argument("--listen-fd", type=int, help=argparse.SUPPRESS)
    auth = parser.add_mutually_exclusive_group()
    auth.add_argument(
        "--token-file",
        type=Path,
        help=f"read the token every request must carry from this file (default: ${TOKEN_ENV}, "
        "else generated)",
    )
    auth.add_argument("--token", help=argparse.SUPPRESS)  # refused: see serve()
    parser.add_argument("--token-fd", type=int, help=argparse.SUPPRESS)  # set by _scrub_environment
    auth.add_argument(
        "--no-token", action="store_true", help="no auth, for OSWorld host code that sends no token"
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests that name this host (IP addresses and localhost always work)",
    )
    parser.add_argument("--ready-file", type=Path, help="write the ready line to this file too (mode 0600)")
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
        # "AF_UNIX path too long" has no errno, so no strerror.
        raise GuestError(f"cannot listen on {path}: {exc.strerror or exc}", where="--unix-socket") from exc
    finally:
        os.umask(old)
    sock.set_inheritable(True)
    return sock


def _passed_socket(fd: int) -> socket.socket:
    """The listening socket the launcher passed as ``fd``."""
    try:
        sock = socket.socket(fileno=fd)
    except OSError as exc:
        raise GuestError(
            f"no listening socket on descriptor {fd}: {exc.strerror}", where="--listen-fd"
        ) from exc
    os.set_inheritable(fd, False)  # the server's children (guest commands) must not get it
    return sock


def _undumpable() -> None:
    """Keep the guest's own commands (the same user) from tracing the server or reading its memory.

    A process that is not dumpable cannot be ``ptrace``d, nor its memory, descriptors (``pidfd_getfd``)
    or environment read, by processes of the same user without ``CAP_SYS_PTRACE``, which nothing
    inside the sandbox has: the token and the listening socket stay the server's.
    """
    if not sys.platform.startswith("linux"):
        return
    import ctypes

    pr_set_dumpable = 4
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(pr_set_dumpable, 0, 0, 0, 0)


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
    display = args.display or os.environ.get("DISPLAY")
    if not display:
        raise GuestError("no X display given", hint="pass --display :N or set DISPLAY")
    os.environ["DISPLAY"] = display  # children (apps, pyautogui code) use this display
    _scrub_environment(args)
    # Imported after the re-exec of _scrub_environment, not before: the web framework and the desktop
    # modules take most of the server's start (seconds on a busy machine), and were imported twice.
    import uvicorn

    from osw_studio.guest.app import create_app
    from osw_studio.guest.context import GuestContext

    token = _token(args)
    try:
        context = GuestContext.open(display)
    except Exception as exc:
        raise GuestError(
            f"cannot open the X display {display}: {exc}",
            hint="start the display first (e.g. Xvfb) and check --display",
        ) from exc
    _undumpable()
    if args.listen_fd is not None:
        sock = _passed_socket(args.listen_fd)
        line = f"osw-studio guest ready on unix:/dev/fd/{args.listen_fd} token={token or 'none'}"
    elif args.unix_socket is not None:
        sock = _bind_unix(args.unix_socket)
        line = f"osw-studio guest ready on unix:{args.unix_socket} token={token or 'none'}"
    else:
        sock = _bind(args.host, args.port)
        line = ready_line(args.host, sock.getsockname()[1], token)
    config = uvicorn.Config(
        create_app(context, token, hosts=HostPolicy(args.host, args.allow_host)),
        http=_bounded_protocol(),
        log_level=args.log_level,
        access_log=False,
        timeout_graceful_shutdown=2,
        timeout_keep_alive=KEEP_ALIVE_S,
        limit_concurrency=MAX_CONCURRENCY,
    )
    server = _AnnouncingServer(config, line, args.ready_file)
    server.run(sockets=[sock])
    return 0


def _scrub_environment(args: argparse.Namespace) -> None:
    """Start again without ``$OSW_GUEST_TOKEN`` in the process's initial environment.

    Removing the variable from ``os.environ`` hides it from children, but ``/proc/PID/environ`` keeps
    the environment the process started with, and guest commands run as the same user can read it.
    So the server hands the token to a fresh image of itself through an anonymous in-memory file and
    ``exec``s without the variable. (A frozen app, whose command line cannot be replayed, keeps it.)
    """
    token = os.environ.get(TOKEN_ENV)
    chosen = args.no_token or args.token is not None or args.token_file is not None
    if token is None or chosen or args.token_fd is not None or getattr(sys, "frozen", False):
        return
    fd = os.memfd_create("osw-guest-token", 0)  # not close-on-exec: the new image reads it
    os.write(fd, token.encode())
    os.lseek(fd, 0, os.SEEK_SET)
    env = {name: value for name, value in os.environ.items() if name != TOKEN_ENV}
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, [sys.executable, *sys.orig_argv[1:], "--token-fd", str(fd)], env)


def _token(args: argparse.Namespace) -> str | None:
    """The token from ``--token-file`` or the environment (then removed from it), else a new one.

    Raises:
        GuestError: If ``--token`` was given, or the token file cannot be read or is empty.
    """
    inherited = os.environ.pop(TOKEN_ENV, None)  # guest commands must not inherit it
    if args.token is not None:
        raise GuestError(
            "--token would put the token on the command line, where every local user can read it",
            hint=f"set ${TOKEN_ENV} or pass --token-file FILE instead",
        )
    if args.token_fd is not None:
        with os.fdopen(args.token_fd, "rb") as handle:
            return handle.read().decode(errors="replace").strip() or secrets.token_urlsafe(24)
    if args.no_token:
        print("warning: --no-token: anyone who can reach this port controls the desktop", file=sys.stderr)
        return None
    if args.token_file is not None:
        try:
            token = str(args.token_file.read_text(errors="replace")).strip()
        except OSError as exc:
            raise GuestError(
                f"cannot read the token file: {exc.strerror}", where=str(args.token_file)
            ) from exc
        if not token:
            raise GuestError("the token file is empty", where=str(args.token_file))
        return token
    return (inherited or "").strip() or secrets.token_urlsafe(24)


def write_private(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole (a rename), readable and writable by its owner only."""
    partial = path.with_name(path.name + ".partial")
    partial.unlink(missing_ok=True)
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    partial.replace(path)


def _bounded_protocol(parser: str = "auto") -> type:
    """The HTTP protocol of uvicorn with a deadline for request headers (slowloris).

    Requests are parsed by httptools (C, llhttp) where it is installed, else by h11 (``parser`` picks
    one: ``auto``, ``httptools``, ``h11``). Their answers may be ``http.response.pathsend``: files go
    out by ``sendfile`` (:mod:`osw_studio.guest.sendfile`).
    """
    from osw_studio.guest.sendfile import count_h11, count_httptools, enable_pathsend

    base: Any = None
    if parser in ("auto", "httptools"):
        try:
            from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol
        except ImportError:
            if parser == "httptools":
                raise
        else:
            base = HttpToolsProtocol
    if base is None:
        from uvicorn.protocols.http.h11_impl import H11Protocol

        base = H11Protocol

    waiting: dict[int, Any] = {}  # connections waiting for headers, oldest first

    class BoundedProtocol(base):  # type: ignore[misc]
        _header_deadline: Any = None
        _heard = False  # part of a request came, and its headers are not whole yet
        _since = 0.0

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm_header_deadline()
            if len(waiting) > MAX_HALF_OPEN:
                # The oldest that had its chance: it sent part of a request, or nothing for a while
                # (a connection just made, whose request is on its way, is left alone).
                now = self.loop.time()
                over = len(waiting) - MAX_HALF_OPEN
                for other in [w for w in waiting.values() if w._heard or now - w._since > HALF_OPEN_GRACE_S]:
                    if over <= 0:
                        break
                    other._headers_too_slow()
                    over -= 1

        def data_received(self, data: bytes) -> None:
            if not self._in_request():
                self._arm_header_deadline()
            super().data_received(data)
            if self._in_request():
                self._disarm_header_deadline()
            else:
                self._heard = True

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self._in_request():
                self._disarm_header_deadline()  # the keep-alive timer takes over until data comes

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm_header_deadline()
            super().connection_lost(exc)

        def _in_request(self) -> bool:
            return self.cycle is not None and not self.cycle.response_complete

        def _arm_header_deadline(self) -> None:
            if self._header_deadline is None:
                self._header_deadline = self.loop.call_later(HEADER_TIMEOUT_S, self._headers_too_slow)
                self._since = self.loop.time()
                waiting[id(self)] = self

        def _disarm_header_deadline(self) -> None:
            waiting.pop(id(self), None)
            self._heard = False
            if self._header_deadline is not None:
                self._header_deadline.cancel()
                self._header_deadline = None

        def _headers_too_slow(self) -> None:
            self._disarm_header_deadline()
            if not self._in_request() and not self.transport.is_closing():
                self.transport.close()

    if base.__name__ == "HttpToolsProtocol":

        class BoundedHttpToolsProtocol(BoundedProtocol):
            def _start_asgi_task(self, cycle: Any, app: Any) -> None:
                enable_pathsend(cycle, count_httptools)
                super()._start_asgi_task(cycle, app)

        return BoundedHttpToolsProtocol

    class BoundedH11Protocol(BoundedProtocol):
        def handle_events(self) -> None:
            before = self.cycle
            super().handle_events()
            if self.cycle is not None and self.cycle is not before:
                enable_pathsend(
                    self.cycle, count_h11
                )  # before its task runs: it starts on the next loop turn

    return BoundedH11Protocol


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
                    write_private(ready_file, line + "\n")

        return Server(config)
