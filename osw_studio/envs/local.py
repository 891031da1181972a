"""``LocalProvider``: the default provider, a throwaway desktop on this machine with no VM.

Per env it starts, in order: Xvfb on a free display number (``-displayfd``) with a fresh X cookie
(``-auth``; :mod:`osw_studio.envs.xauth`), then openbox and a D-Bus session bus
(``dbus-daemon --print-address``), then AT-SPI's bus launcher (for the accessibility tree) and the
guest server (``python -m osw_studio.guest --unix-socket ...``) with a random token (given through
``OSW_GUEST_TOKEN``, so it never shows in ``ps``). The env is ready when the guest server writes its
``--ready-file``.

The guest server listens on a Unix socket in the env's folder (mode 0600). The env's client talks to
that socket; a :class:`~osw_studio.envs.relay.Relay` gives the same server a URL on the host's
127.0.0.1 (on a free port of its own) for the viewer and OSWorld's host code, still behind the token.

When ``bwrap`` (bubblewrap) is installed, each process runs inside it, as
:mod:`osw_studio.envs.sandbox` describes: a user namespace with no capabilities (also when started by
root), only the system folders read-only, a private ``/tmp`` shared by the env's processes whose
``/tmp/.X11-unix`` holds only the env's own display socket, a throwaway HOME mounted at ``/home/user``
(the path OSWorld's tasks write to), and no network (no host sockets, abstract ones included, no
host loopback services). ``--unshare-pid --die-with-parent`` means everything an env starts,
including apps launched in the guest, dies with it. Without bwrap, HOME and TMPDIR still point into
the env's own folder and ``setpriv --pdeathsig`` ties each process to this one; but then processes
that those start (AT-SPI's private bus, apps launched in the guest) can outlive a parent killed with
SIGKILL, as nothing reaps them (a clean exit still stops them all), and nothing confines them.

Every process joins one process group and is tracked by PID; :meth:`LocalEnv.close` stops them all
(SIGTERM, then SIGKILL after a grace period); an ``atexit`` hook does the same if the app exits
without closing. PDEATHSIG follows the thread that started a process, so create envs on a thread
that lives as long as they do (the event loop's).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import fcntl
import json
import os
import secrets
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
import weakref
from pathlib import Path
from typing import IO, Any

import httpx

from osw_studio.core.errors import GuestError
from osw_studio.envs.desktops import get_profile
from osw_studio.envs.guest_client import GuestClient, RetryPolicy
from osw_studio.envs.ready import ReadyLine, parse_ready
from osw_studio.envs.relay import Relay, forward_guest_port
from osw_studio.envs.remote import RemoteEnv
from osw_studio.envs.sandbox import GUEST_DNS, NETWORK_MODES, SANDBOX_HOME, Sandbox, root_only_paths
from osw_studio.envs.setup import SetupOptions
from osw_studio.envs.xauth import write_cookie_file

AT_SPI_LAUNCHER = "/usr/libexec/at-spi-bus-launcher"

_NS_GET_USERNS = 0xB701
"""ioctl on a namespace file: a file descriptor of the user namespace that owns it (linux/nsfs.h)."""

_LIVE: weakref.WeakSet[LocalSession] = weakref.WeakSet()


def _kill_all_at_exit() -> None:
    for session in list(_LIVE):
        session.kill()


atexit.register(_kill_all_at_exit)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def descendants(roots: set[int]) -> set[int]:
    """The live processes under ``roots`` (children, grandchildren, ...), from ``/proc``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        if fields[0] != "Z":
            children.setdefault(int(fields[1]), []).append(int(entry.name))
    found: set[int] = set()
    todo = list(roots)
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def is_alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


ENV_PREFIX = "osw-env-"
"""Env folders are ``<tmp>/osw-env-<owner>-<random>``; the owner is :func:`env_owner`."""
STALE_AFTER = 24 * 3600.0
"""Seconds after which an env folder whose owner cannot be checked from here counts as left behind."""
_swept = False


def env_owner() -> str:
    """``<pid>.<pid namespace>`` of this process: a PID means something only in its own namespace.

    Containers (and sandboxes) that share ``/tmp`` see each other's folders but not each other's
    processes, so a folder is judged by its PID only when it was made in this PID namespace.
    """
    try:
        namespace = Path("/proc/self/ns/pid").stat().st_ino
    except OSError:
        namespace = 0
    return f"{os.getpid()}.{namespace}"


def sweep_stale_envs(folder: Path | None = None) -> list[Path]:
    """Delete env folders whose process is gone (a killed app, a ``kill -9`` run); return them.

    Only this user's folders are touched. One made by a process of this PID namespace is deleted when
    that process is gone; any other (another namespace's, or an older version's without an owner) only
    once it is :data:`STALE_AFTER` old.
    """
    me = env_owner()
    here = me.split(".", 1)[1]
    base = folder or Path(tempfile.gettempdir())
    removed: list[Path] = []
    try:
        entries = [e for e in os.scandir(base) if e.name.startswith(ENV_PREFIX)]
    except OSError:
        return removed
    for entry in entries:
        try:
            info = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
            continue
        pid, _, namespace = entry.name[len(ENV_PREFIX) :].split("-", 1)[0].partition(".")
        if pid.isdigit() and namespace == here:
            stale = int(pid) != os.getpid() and not is_alive(int(pid))
        else:
            stale = time.time() - info.st_mtime > STALE_AFTER
        if stale:
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


def _needed_paths(python: str) -> tuple[Path, ...]:
    """What a sandboxed guest server needs from the host, shown read-only wherever it lives.

    This Python's prefixes, the one ``python`` names (a venv's ``python`` links into its base), this
    package, and the package folders on ``sys.path`` (a ``.pth`` file may add them); never the
    current folder or other entries of ``PYTHONPATH``, which may be the user's HOME.
    """
    import osw_studio

    package = Path(osw_studio.__file__).resolve().parent.parent
    venv = Path(python).absolute().parent.parent
    paths = [Path(sys.prefix), Path(sys.base_prefix), venv, Path(python).resolve().parent.parent, package]
    paths += [Path(p) for p in sys.path if Path(p).name in ("site-packages", "dist-packages")]
    return tuple(p for p in dict.fromkeys(paths) if p.is_absolute() and p.exists())


def _ensure_x11_dir() -> None:
    x11 = Path("/tmp/.X11-unix")
    if not x11.exists():
        x11.mkdir(mode=0o1777)
        x11.chmod(0o1777)


def _read_ready(path: Path) -> ReadyLine | None:
    """The guest server's ready line from its ready file, once it has written all of it."""
    try:
        return parse_ready(path.read_text(errors="replace"))
    except OSError:
        return None


class LocalSession:
    """The processes of one local env and the folder that holds its HOME, /tmp and logs.

    Args:
        sandbox: Run each process inside bubblewrap.
        keep: Host paths the sandboxed processes need, shown read-only (the Python that runs the guest
            server, this package); the system folders are always shown.
        network: The guest server's network, ``none`` or ``outbound`` (see :class:`LocalProvider`).
    """

    def __init__(self, *, sandbox: bool, keep: tuple[Path, ...] = (), network: str = "none") -> None:
        self.sandbox = sandbox
        self.network = network
        self.root = Path(tempfile.mkdtemp(prefix=f"{ENV_PREFIX}{env_owner()}-"))
        self.home = self.root / "home"
        self.tmp = self.root / "tmp"
        for folder in (self.home, self.tmp, self.tmp / "runtime"):
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.jail = Sandbox(self.home, self.tmp, keep)
        self.xauthority = self.tmp / ".Xauthority"
        """The env's X cookie file (host path); only the env's processes are given it."""
        self.host_only = self.root / "host"
        """A folder of the env that no process of the env sees (not mounted into the sandbox)."""
        self.host_only.mkdir(mode=0o700)
        self.guest_socket = self.host_only / "guest.sock"
        """The guest server's Unix socket (host path): made and bound by the host, handed to the server
        as a listening descriptor, out of the sandbox's view, so code inside cannot replace it."""
        # A socket's path may not exceed ~107 bytes, and TMPDIR can be deep: sockets in the env's
        # folder are also reached through its descriptor (/proc/self/fd/N/NAME), which is short.
        self._tmp_fd = os.open(self.root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        self.relay: Relay | None = None
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.pgid: int | None = None
        self.display = ""
        self._logs: list[IO[bytes]] = []
        _LIVE.add(self)

    def listen_guest_socket(self) -> socket.socket:
        """Bind and listen on :attr:`guest_socket` (mode 0600), for the guest server to serve on."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            sock.bind(str(self.socket_address(self.guest_socket)))
            sock.listen(512)
        except OSError:
            sock.close()
            raise
        finally:
            os.umask(old)
        return sock

    def socket_address(self, path: Path) -> Path:
        """A path this process can connect a Unix socket in the env's /tmp by (short, whatever TMPDIR)."""
        if len(os.fsencode(path)) < 100 or self._tmp_fd < 0:
            return path
        return Path(f"/proc/self/fd/{self._tmp_fd}") / path.relative_to(self.root)

    # --- paths as the processes see them -------------------------------------------------------------

    @property
    def home_inside(self) -> str:
        """HOME as the env's processes see it."""
        return SANDBOX_HOME if self.sandbox else str(self.home)

    @property
    def tmp_inside(self) -> str:
        """The private /tmp as the env's processes see it."""
        return "/tmp" if self.sandbox else str(self.tmp)

    def environment(self, **extra: str) -> dict[str, str]:
        """A clean environment for the env's processes (the host's secrets stay out)."""
        env = {
            # ~/.local/bin first, as on Ubuntu: the desktop profile's launchers (google-chrome) live there.
            "PATH": f"{self.home_inside}/.local/bin:"
            + os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
            "LANG": "C.UTF-8",
            "HOME": self.home_inside,
            "USER": os.environ.get("USER", "user"),
            "TMPDIR": self.tmp_inside,
            "XDG_RUNTIME_DIR": f"{self.tmp_inside}/runtime",
            "PYTHONDONTWRITEBYTECODE": "1",
            # Toolkits only expose their widgets to AT-SPI when asked.
            "QT_ACCESSIBILITY": "1",
            "ACCESSIBILITY_ENABLED": "1",
            "GTK_MODULES": "gail:atk-bridge",
            "XAUTHORITY": f"{self.tmp_inside}/.Xauthority",
        }
        if self.display:
            env["DISPLAY"] = self.display
        env.update(extra)
        return env

    def x_environment(self) -> dict[str, str]:
        """``DISPLAY`` and ``XAUTHORITY`` for a host process that should reach this env's display."""
        return {"DISPLAY": self.display, "XAUTHORITY": str(self.xauthority)}

    # --- starting ------------------------------------------------------------------------------------

    def _wrap(self, argv: list[str], *, real_tmp: bool, info_fd: int | None = None) -> list[str]:
        if self.sandbox:
            if real_tmp:
                return self.jail.display_server(argv, readable=[self.xauthority])
            socket_path = Path(f"/tmp/.X11-unix/X{self.display[1:]}") if self.display else None
            resolv = None
            if info_fd is not None:
                resolv = self.root / "resolv.conf"
                resolv.write_text(f"nameserver {GUEST_DNS}\n")
            return self.jail.process(argv, socket_path, resolv_conf=resolv, info_fd=info_fd)
        if shutil.which("setpriv"):
            return ["setpriv", "--pdeathsig", "KILL", "--", *argv]
        return argv

    def spawn(
        self,
        name: str,
        argv: list[str],
        env: dict[str, str],
        *,
        real_tmp: bool = False,
        pass_fds: tuple[int, ...] = (),
        stdout_pipe: bool = False,
        info_fd: int | None = None,
        wrap: bool = True,
    ) -> subprocess.Popen[bytes]:
        """Start one process of the env, logged to ``<root>/<name>.log``, in the env's process group.

        ``info_fd``: a pipe for bwrap's ``--info-fd`` (the sandbox's pid, for its network);
        ``wrap=False``: a helper of ours that runs on the host side (slirp4netns).
        """
        log = open(self.root / f"{name}.log", "wb")  # noqa: SIM115 - closed in stop()
        self._logs.append(log)
        if info_fd is not None:
            pass_fds = (*pass_fds, info_fd)
        command = self._wrap(argv, real_tmp=real_tmp, info_fd=info_fd) if wrap else argv
        if not wrap and shutil.which("setpriv"):
            command = ["setpriv", "--pdeathsig", "KILL", "--", *command]
        try:
            proc = subprocess.Popen(
                command,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE if stdout_pipe else log,
                stderr=log,
                pass_fds=pass_fds,
                process_group=self.pgid or 0,
                cwd=self.home,
            )
        except OSError as exc:
            raise GuestError(
                f"cannot start {name}: {exc.strerror or exc}",
                where=argv[0],
                hint="install it (make setup installs every package the sandbox needs)",
            ) from None
        if self.pgid is None:
            self.pgid = proc.pid
        self.processes[name] = proc
        return proc

    def log_tail(self, name: str, lines: int = 8) -> str:
        """The last lines a process wrote, for error messages."""
        try:
            text = (self.root / f"{name}.log").read_text(errors="replace")
        except OSError:
            return ""
        return " | ".join(text.strip().splitlines()[-lines:])

    async def read_line(self, fd: int, name: str, limit: float) -> str:
        """Wait (without blocking the loop) for one line a process writes to ``fd``."""
        loop = asyncio.get_running_loop()
        data = bytearray()
        done: asyncio.Future[None] = loop.create_future()

        def on_readable() -> None:
            try:
                chunk = os.read(fd, 4096)
            except BlockingIOError:
                return
            data.extend(chunk)
            if (not chunk or b"\n" in data) and not done.done():
                done.set_result(None)

        os.set_blocking(fd, False)
        loop.add_reader(fd, on_readable)
        try:
            await asyncio.wait_for(done, limit)
        except TimeoutError:
            raise GuestError(
                f"{name} did not start within {limit:g} s: {self.log_tail(name)}",
                where=str(self.root / f"{name}.log"),
            ) from None
        finally:
            loop.remove_reader(fd)
        line = data.decode(errors="replace").strip()
        if not line:
            raise GuestError(
                f"{name} exited at start: {self.log_tail(name)}", where=str(self.root / f"{name}.log")
            )
        return line.splitlines()[0]

    async def start_display(self, screen: tuple[int, int], limit: float) -> str:
        """Start Xvfb on a free display number; return ``:N``."""
        _ensure_x11_dir()
        write_cookie_file(self.xauthority)
        read_fd, write_fd = os.pipe()
        try:
            size = f"{screen[0]}x{screen[1]}x24"
            # -noreset: else Xvfb resets whenever its last client disconnects and drops connections
            # meanwhile; a client that opens and closes the display early (AT-SPI's launcher, the guest)
            # could then make openbox's first connection fail, leaving the desktop with no window
            # manager (seen under load as setup's activate_window finding no window).
            argv = ["Xvfb", "-displayfd", str(write_fd), "-noreset", "-screen", "0", size]
            argv += ["-nolisten", "tcp", "-auth", str(self.xauthority)]
            self.spawn("xvfb", argv, self.environment(), real_tmp=True, pass_fds=(write_fd,))
            os.close(write_fd)
            write_fd = -1
            number = await self.read_line(read_fd, "xvfb", limit)
        finally:
            os.close(read_fd)
            if write_fd >= 0:
                os.close(write_fd)
        self.display = f":{number}"
        return self.display

    async def start_bus(self, limit: float) -> str:
        """Start the session D-Bus; return its address."""
        address = f"unix:path={self.tmp_inside}/bus"
        proc = self.spawn(
            "dbus",
            [
                "dbus-daemon",
                "--session",
                "--nofork",
                "--nopidfile",
                f"--address={address}",
                "--print-address=1",
            ],
            self.environment(),
            stdout_pipe=True,
        )
        assert proc.stdout is not None
        return await self.read_line(proc.stdout.fileno(), "dbus", limit)

    async def start_outbound(self, info_read_fd: int, name: str, limit: float) -> None:
        """Give the sandbox of process ``name`` outbound access: slirp4netns, host loopback refused.

        bwrap names the sandbox's pid on ``info_read_fd`` (which this closes); slirp4netns joins that
        process's user and network namespaces, brings up ``tap0`` (10.0.2.100, DNS 10.0.2.3) and
        says when it is ready.
        """
        loop = asyncio.get_running_loop()

        def read_all() -> bytes:
            with os.fdopen(info_read_fd, "rb") as pipe:
                return pipe.read()

        where = str(self.root / f"{name}.log")
        try:
            info = json.loads(await asyncio.wait_for(loop.run_in_executor(None, read_all), limit))
            pid = int(info["child-pid"])
        except (TimeoutError, ValueError, KeyError, TypeError):
            raise GuestError(f"{name}'s sandbox did not start: {self.log_tail(name)}", where=where) from None
        try:
            # The namespace's owner, asked of the namespace itself: bwrap may move the process into a
            # nested user namespace (with the final uid map) after it names the pid, and from that
            # one the network namespace cannot be joined.
            net_fd = os.open(f"/proc/{pid}/ns/net", os.O_RDONLY | os.O_CLOEXEC)
        except OSError as exc:
            raise GuestError(f"{name}'s sandbox exited at start: {exc.strerror}", where=where) from None
        ready_read, ready_write = os.pipe()
        user_fd = -1
        try:
            user_fd = fcntl.ioctl(net_fd, _NS_GET_USERNS)
            argv = ["slirp4netns", "--configure", "--mtu=65520", "--disable-host-loopback"]
            argv += ["--enable-sandbox", "--enable-seccomp", f"--ready-fd={ready_write}"]
            argv += [f"--userns-path=/proc/self/fd/{user_fd}", "--netns-type=path", f"/proc/self/fd/{net_fd}"]
            argv += ["tap0"]
            fds = (ready_write, net_fd, user_fd)
            self.spawn("network", argv, self.environment(), pass_fds=fds, wrap=False)
            os.close(ready_write)
            ready_write = -1
            await self.read_line(ready_read, "network", limit)
        finally:
            for fd in (ready_read, ready_write, net_fd, user_fd):
                if fd >= 0:
                    os.close(fd)

    async def wait_ready_file(self, path: Path, name: str, limit: float) -> ReadyLine:
        """Wait for the guest server's ready line (polling the file it writes once)."""
        proc = self.processes[name]
        deadline = time.monotonic() + limit
        while True:
            ready = _read_ready(path)
            if ready:
                return ready
            if proc.poll() is not None:
                raise GuestError(
                    f"the guest server exited at start (code {proc.returncode}): {self.log_tail(name)}",
                    where=str(self.root / f"{name}.log"),
                )
            if time.monotonic() > deadline:
                raise GuestError(
                    f"the guest server was not ready within {limit:g} s: {self.log_tail(name)}",
                    where=str(self.root / f"{name}.log"),
                    hint="the machine may be overloaded; raise ready_timeout",
                )
            await asyncio.sleep(0.01)

    # --- stopping ------------------------------------------------------------------------------------

    def pids(self) -> set[int]:
        """Every live process of this env: the tracked ones and everything they started."""
        tracked = {p.pid for p in self.processes.values() if p.poll() is None}
        return tracked | descendants(tracked)

    def _signal(self, pids: set[int], sig: int) -> None:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
        if self.pgid is not None:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pgid, sig)

    async def stop(self, grace: float = 3.0) -> None:
        """SIGTERM everything, SIGKILL what is left after ``grace`` seconds, then delete the folder."""
        pids = self.pids()
        self._signal(pids, signal.SIGTERM)
        for _ in range(max(1, int(grace / 0.02))):
            if not any(is_alive(pid) for pid in pids):
                break
            await asyncio.sleep(0.02)
        self.kill(pids)

    def kill(self, pids: set[int] | None = None) -> None:
        """SIGKILL every process of the env now, reap them and delete the folder (atexit uses this)."""
        pids = (pids or set()) | self.pids()
        if self.relay is not None:
            self.relay.close()
            self.relay = None
        if self._tmp_fd >= 0:
            os.close(self._tmp_fd)
            self._tmp_fd = -1
        self._signal({pid for pid in pids if is_alive(pid)}, signal.SIGKILL)
        for proc in self.processes.values():
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=2)
            if proc.stdout is not None:
                proc.stdout.close()
        for log in self._logs:
            log.close()
        self._logs.clear()
        self.pgid = None
        _LIVE.discard(self)
        shutil.rmtree(self.root, ignore_errors=True)


class LocalEnv(RemoteEnv):
    """A :class:`RemoteEnv` over a guest server that a :class:`LocalProvider` started, which owns it.

    Attributes:
        session: The env's processes and folders.
        display: The X display (``:N``).
        url: The guest server's base URL.
        token: The guest server's token.
    """

    def __init__(self, guest: GuestClient, session: LocalSession, *, setup: SetupOptions | None = None):
        super().__init__(guest, setup=setup, name=f"local{session.display}")
        self.session = session
        self.display = session.display
        self.url = guest.base_url
        self.token = guest.token or ""
        self._forwards: dict[int, Relay] = {}

    def pids(self) -> set[int]:
        """Every live process of this env."""
        return self.session.pids()

    async def guest_port_url(self, port: int) -> str:
        """A host URL for the guest's TCP ``port``.

        A sandboxed guest has a network of its own, which the host cannot reach: the first call for a
        port starts ``socat`` inside the guest (through the guest server, so in its network), listening
        on a Unix socket in the env's folder and connecting to the port on the guest's loopback, and a
        relay on the host's 127.0.0.1 to that socket. Without the sandbox the guest shares the host's
        network and the port is the host's.

        Raises:
            GuestError: If the forwarder cannot start (``socat`` missing in the guest).
        """
        if not self.session.sandbox:
            return f"http://127.0.0.1:{port}"
        relay = self._forwards.get(port)
        if relay is None:
            if shutil.which("socat") is None:
                raise GuestError(
                    f"cannot forward the guest's port {port}: socat is not installed",
                    where=self.name,
                    hint="install socat (make setup-osworld installs it with OSWorld's applications)",
                )
            name = f"port-{port}.sock"
            outside = self.session.tmp / name
            relay = self._forwards[port] = await forward_guest_port(
                self.guest,
                port,
                inside=f"{self.session.tmp_inside}/{name}",
                outside=outside,
                connect=self.session.socket_address(outside),
                where=self.name,
            )
        return relay.url

    async def close(self) -> None:
        """Close the connection and stop every process of the env. Safe to call twice."""
        for relay in self._forwards.values():
            relay.close()
        self._forwards.clear()
        await super().close()
        if self.session.pgid is not None or self.session.processes:
            await self.session.stop()
            self.session.processes.clear()


def check_network(network: str, *, sandbox: bool) -> None:
    """Check that ``network`` is a network mode this machine can give a local env.

    Raises:
        GuestError: If ``network`` is unknown, or ``outbound`` is asked of a sandbox without
            slirp4netns.
    """
    if network not in NETWORK_MODES:
        raise GuestError(
            f"unknown network {network!r} for the local provider",
            where="network",
            hint=f"use one of: {', '.join(NETWORK_MODES)}",
        )
    if network == "outbound" and sandbox and shutil.which("slirp4netns") is None:
        raise GuestError(
            "outbound network for the local sandbox needs slirp4netns, which is not installed",
            where="network",
            hint="install slirp4netns (make setup does), or use network none",
        )


class LocalProvider:
    """The ``local`` provider: sandboxed Xvfb desktops on this machine.

    Args:
        screen: ``(width, height)`` of each desktop.
        sandbox: Use bubblewrap; ``None`` means "when ``bwrap`` is installed".
        accessibility: Start AT-SPI so the accessibility tree works.
        ready_timeout: Seconds to wait for each part to start.
        python: The Python that runs the guest server.
        network: What the guest may reach: ``none`` (the default: nothing, not even this machine's
            loopback) or ``outbound`` (the internet through slirp4netns, for tasks that browse; still
            not this machine's loopback services nor its sockets). Only the sandbox enforces it:
            without bwrap the guest shares this machine's network.
        desktop: The applications (:mod:`osw_studio.envs.desktops`): ``studio`` (the bundled
            tasks') or ``osworld`` (OSWorld's, arranged as its image arranges them).

    Raises:
        GuestError: If ``network`` is not one this machine can give (:func:`check_network`).
    """

    def __init__(
        self,
        *,
        screen: tuple[int, int] = (1920, 1080),
        sandbox: bool | None = None,
        accessibility: bool = True,
        ready_timeout: float = 20.0,
        python: str = sys.executable,
        network: str = "none",
        desktop: str = "studio",
    ) -> None:
        self.screen = screen
        self.desktop = get_profile(desktop)
        self.sandbox = shutil.which("bwrap") is not None if sandbox is None else sandbox
        check_network(network, sandbox=self.sandbox)
        self.network = network
        self.accessibility = accessibility
        self.ready_timeout = ready_timeout
        self.python = python
        self.atspi = accessibility and Path(AT_SPI_LAUNCHER).exists()
        global _swept
        if not _swept:  # once per process: folders of runs that were killed before they could clean up
            _swept = True
            sweep_stale_envs()
        self.keep = _needed_paths(python)

    async def create(
        self,
        *,
        screen: tuple[int, int] | None = None,
        setup: SetupOptions | None = None,
        retry: RetryPolicy | None = None,
        network: str | None = None,
        desktop: str | None = None,
        ready_timeout: float | None = None,
        **client_options: Any,
    ) -> LocalEnv:
        """Start a desktop and its guest server; return the env once the server is ready.

        ``network``, ``desktop`` and ``ready_timeout`` override the provider's for this env
        (``--provider local network=outbound desktop=osworld``).

        Raises:
            GuestError: If a part does not start (naming it and quoting its log), or ``network`` is
                not one this machine can give.
        """
        network = network or self.network
        check_network(network, sandbox=self.sandbox)
        if self.sandbox and os.getuid() == 0:
            await asyncio.to_thread(root_only_paths)  # scanned once, off the loop
        profile = get_profile(desktop) if desktop else self.desktop
        profile.check()
        session = LocalSession(sandbox=self.sandbox, keep=self.keep, network=network)
        try:
            profile.prepare(session.home, session.home / ".local" / "bin")
            env = await self._start(
                session,
                screen or self.screen,
                setup,
                retry,
                client_options,
                ready_timeout or self.ready_timeout,
            )
        except BaseException:
            session.kill()
            raise
        return env

    async def _start(
        self,
        session: LocalSession,
        screen: tuple[int, int],
        setup: SetupOptions | None,
        retry: RetryPolicy | None,
        client_options: dict[str, Any],
        limit: float,
    ) -> LocalEnv:
        timeout = limit
        await session.start_display(screen, timeout)
        session.spawn("openbox", ["openbox", "--sm-disable"], session.environment())
        bus = await session.start_bus(timeout)
        env_vars = session.environment(DBUS_SESSION_BUS_ADDRESS=bus)
        if self.atspi:
            session.spawn("atspi", [AT_SPI_LAUNCHER, "--launch-immediately"], env_vars)
        token = secrets.token_urlsafe(24)
        ready_file = session.tmp / "guest.ready"
        ready_inside = f"{session.tmp_inside}/guest.ready"
        # A Unix socket in the env's folder (mode 0600), not a TCP port: the sandbox has no network
        # the host could reach, and no other user can connect to it, token or not. The host binds it
        # where the env's processes cannot see (so none can unlink it and listen in its place) and
        # hands the server the listening descriptor.
        listener = session.listen_guest_socket()
        argv = [self.python, "-m", "osw_studio.guest", "--display", session.display]
        argv += ["--listen-fd", str(listener.fileno()), "--ready-file", ready_inside]
        guest_env = {**env_vars, "OSW_GUEST_TOKEN": token}
        if self.sandbox and session.network == "outbound":
            info_read, info_write = os.pipe()
            try:
                session.spawn("guest", argv, guest_env, info_fd=info_write, pass_fds=(listener.fileno(),))
            except BaseException:
                os.close(info_read)
                raise
            finally:
                os.close(info_write)
                listener.close()
            await session.start_outbound(info_read, "guest", timeout)
        else:
            try:
                session.spawn("guest", argv, guest_env, pass_fds=(listener.fileno(),))
            finally:
                listener.close()  # the server holds it now
        await session.wait_ready_file(ready_file, "guest", timeout)
        # The relay picks its own free port (a port picked here and handed over could be taken by
        # an env starting in parallel); the env's own client skips it and uses the socket.
        address = session.socket_address(session.guest_socket)
        session.relay = Relay(address)
        client_options.setdefault("transport", httpx.AsyncHTTPTransport(uds=str(address)))
        client = GuestClient(session.relay.url, token, retry=retry, **client_options)
        env = LocalEnv(client, session, setup=setup)
        try:
            await env.connect()
        except BaseException:
            await client.aclose()
            raise
        return env
