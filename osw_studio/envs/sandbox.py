"""The bubblewrap command line that confines each process of a local env.

What a process inside sees and can do:

- **No privileges, also when started by root.** A user namespace of its own (``--unshare-user``)
  with every capability dropped (``--cap-drop ALL``; bwrap keeps root's capabilities otherwise), so a
  step cannot unmount the hidden HOME or remount ``/`` read-write. The user inside is the caller's
  uid, or 1000 for root (the uid of OSWorld's ``user``; some apps, Chromium among them, refuse root).
- **Root's own files stay root's.** Started by root, the user inside is root's uid outside the
  namespace (the owner of root's files, though without capabilities), so the files and folders in
  ``/etc``, ``/var/lib`` and ``/var/cache`` that only root may read (``/etc/shadow``, SSH host keys,
  ``/etc/ssl/private``) are masked.
- **A filesystem made of a short list.** The system folders (``/usr``, ``/etc``, ``/opt``,
  ``/var/lib``, ``/var/cache``, ``/sys`` and the ``/bin``-style links) read-only, what the guest
  server needs to run (this Python and this package, wherever they live, ``/tmp`` included), a
  private ``/tmp`` shared by the env's processes, and a throwaway HOME at ``/home/user``. Nothing
  else of the host: not ``/home``, the user's HOME, ``/run`` (D-Bus, ``/run/user``, docker's socket),
  ``/var/tmp``, ``/mnt``, nor the checkout's neighbours. A Unix socket that is not in the view
  cannot be connected to.
- **Its own X socket only.** The private ``/tmp/.X11-unix`` holds the env's own display socket and no
  other; the display also wants the env's cookie (:mod:`osw_studio.envs.xauth`).
- **No network** (``--unshare-net``): a network namespace with only its own loopback. Abstract Unix
  sockets (which have no file to hide) belong to a network namespace, so the host's (a D-Bus bus,
  X servers') are out of reach too, as are services on the host's 127.0.0.1. The guest server listens
  on a Unix socket in the env's folder and the host connects to that. With ``network="outbound"``
  (tasks that browse the web), slirp4netns gives the guest server's namespace a user-mode NAT to
  the outside with ``--disable-host-loopback``: the host's 127.0.0.1 stays out of reach (its alias
  10.0.2.2 is refused), and so do the host's abstract and filesystem sockets.
- **No terminal** (``--new-session``): a process cannot reach the terminal that started the app
  (``TIOCSTI`` would let it type commands into the user's shell).
- ``--unshare-pid --die-with-parent``: everything it starts dies with it.
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

SANDBOX_HOME = "/home/user"
"""HOME inside the sandbox: OSWorld's tasks name files under ``/home/user``."""

SANDBOX_UID = 1000
"""The uid inside the sandbox when the caller is root."""

NETWORK_MODES = ("none", "outbound")
"""The guest's network: ``none`` (the default) or ``outbound`` (slirp4netns, no host loopback)."""

GUEST_DNS = "10.0.2.3"
"""slirp4netns's DNS forwarder, the guest's only name server with ``outbound``."""

SYSTEM_PATHS = (
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/var/lib",
    "/var/cache",
    "/sys",
)
"""What of the host a sandboxed process sees (read-only), where it exists."""


ROOT_ONLY_SCANNED = ("/etc", "/var/lib", "/var/cache")
"""Where :func:`root_only_paths` looks for files only root may read (``/etc/shadow``, host keys)."""


@functools.cache
def root_only_paths(tops: tuple[str, ...] = ROOT_ONLY_SCANNED) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Root-owned files others may not read, and folders others may not enter, under ``tops``.

    Started by root, the sandbox's user is root's uid outside its namespace: with no capabilities,
    but still the owner of root's files, so ``/etc/shadow`` or ``/etc/ssl/private`` would be readable
    inside. These are masked: a file by ``/dev/null`` (which cannot be opened on bwrap's ``nodev``
    mounts), a folder by an empty tmpfs. Scanned once per process.

    Returns:
        ``(files, folders)``.
    """
    files: list[str] = []
    folders: list[str] = []
    for top in tops:
        for where, subfolders, names in os.walk(top):
            entered = []
            for name in subfolders:
                path = f"{where}/{name}"
                try:
                    info = os.lstat(path)
                except OSError:
                    continue
                if stat.S_ISDIR(info.st_mode) and info.st_uid == 0 and not info.st_mode & 0o001:
                    folders.append(path)
                else:
                    entered.append(name)
            subfolders[:] = entered
            for name in names:
                path = f"{where}/{name}"
                try:
                    info = os.lstat(path)
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode) and info.st_uid == 0 and not info.st_mode & 0o004:
                    files.append(path)
    return tuple(files), tuple(folders)


def root_only_masks() -> list[str]:
    """The bwrap arguments that mask :func:`root_only_paths` (an unopenable file, an empty folder)."""
    files, folders = root_only_paths()
    masks = [arg for path in folders for arg in ("--tmpfs", path)]
    return masks + [arg for path in files for arg in ("--ro-bind", "/dev/null", path)]


def inside_ids(uid: int, gid: int) -> tuple[int, int]:
    """The uid and gid inside the sandbox: the caller's own, or 1000 for root.

    Examples:
        >>> inside_ids(0, 0)
        (1000, 1000)
        >>> inside_ids(1234, 100)
        (1234, 100)
    """
    return (SANDBOX_UID, SANDBOX_UID) if uid == 0 else (uid, gid)


def system_mounts(paths: Iterable[str] = SYSTEM_PATHS) -> list[str]:
    """The bwrap arguments that show ``paths`` read-only: links as links, folders bound, the rest skipped."""
    args: list[str] = []
    for path in map(Path, paths):
        if path.is_symlink():
            args += ["--symlink", str(path.readlink()), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    return args


def keep_mounts(keep: Iterable[Path], shown: Iterable[str] = SYSTEM_PATHS) -> list[str]:
    """Read-only binds for the ``keep`` paths that the system mounts do not already show.

    A path under ``/tmp`` is bound after the private ``/tmp`` is mounted, so a checkout or venv there
    works too; paths inside another kept path are bound once.

    Examples:
        >>> keep_mounts([Path("/usr"), Path("/tmp/co/.venv"), Path("/tmp/co"), Path("/srv/pkg")])
        ['--ro-bind', '/srv/pkg', '/srv/pkg', '--ro-bind', '/tmp/co', '/tmp/co']
    """
    roots = [Path(p) for p in shown]
    paths = sorted({Path(p) for p in keep}, key=lambda p: (len(p.parts), str(p)))
    bound: list[Path] = []
    for path in paths:
        if any(path.is_relative_to(r) for r in roots + bound):
            continue
        bound.append(path)
    return [arg for path in bound for arg in ("--ro-bind", str(path), str(path))]


@dataclass(frozen=True)
class Sandbox:
    """How one env's processes are confined.

    Attributes:
        home: The host folder mounted at ``/home/user``.
        tmp: The host folder mounted at ``/tmp``.
        keep: Host paths the processes need, shown read-only (the Python, the package).
        uid: The caller's uid (root is mapped to 1000 inside).
        gid: The caller's gid.
    """

    home: Path
    tmp: Path
    keep: tuple[Path, ...] = field(default_factory=tuple)
    uid: int = field(default_factory=os.getuid)
    gid: int = field(default_factory=os.getgid)

    def common(self, *, own_network: bool = True) -> list[str]:
        """The arguments every process gets: namespaces, no capabilities, the system folders."""
        uid, gid = inside_ids(self.uid, self.gid)
        return [
            "--unshare-user", "--uid", str(uid), "--gid", str(gid),
            "--cap-drop", "ALL",
            "--unshare-pid",
            *(["--unshare-net"] if own_network else []),
            "--new-session",
            "--die-with-parent",
            *system_mounts(),
            *(root_only_masks() if self.uid == 0 else []),
            "--dev", "/dev",
            "--proc", "/proc",
            "--tmpfs", "/dev/shm",
        ]  # fmt: skip

    def display_server(self, argv: list[str], readable: Iterable[Path]) -> list[str]:
        """The command line for Xvfb: the host's ``/tmp`` (its socket and lock file go there).

        Xvfb is ours, not the task's. It needs the host's ``/tmp/.X11-unix`` and the host's network
        namespace, where X servers also hold abstract sockets, so that its display number is unique
        on the machine (an Xvfb in a namespace of its own could take a number whose abstract socket
        another server holds, and host clients of ``:N`` would reach that one). Every client needs
        the cookie. ``readable`` are files it reads (its cookie file).
        """
        files = [arg for path in readable for arg in ("--ro-bind", str(path), str(path))]
        common = self.common(own_network=False)
        return ["bwrap", *common, "--bind", "/tmp", "/tmp", *files, "--", *argv]

    def process(
        self,
        argv: list[str],
        display_socket: Path | None,
        *,
        resolv_conf: Path | None = None,
        info_fd: int | None = None,
    ) -> list[str]:
        """The command line for every other process of the env (openbox, D-Bus, the guest server).

        Args:
            argv: The command.
            display_socket: The env's X socket on the host, shown as the only one in ``/tmp/.X11-unix``.
            resolv_conf: With ``outbound`` network, the file shown as ``/etc/resolv.conf``.
            info_fd: A pipe bwrap writes ``{"child-pid": N}`` to (where slirp4netns attaches).
        """
        extra: list[str] = []
        if resolv_conf is not None:
            extra += ["--ro-bind", str(resolv_conf), "/etc/resolv.conf"]
        if info_fd is not None:
            extra += ["--info-fd", str(info_fd)]
        x11: list[str] = []
        if display_socket is not None:
            inside = f"/tmp/.X11-unix/{display_socket.name}"
            x11 = ["--dir", "/tmp/.X11-unix", "--bind", str(display_socket), inside]
        return [
            "bwrap",
            *self.common(),
            "--bind", str(self.tmp), "/tmp",
            *x11,
            "--tmpfs", "/home",
            "--bind", str(self.home), SANDBOX_HOME,
            *keep_mounts(self.keep),
            *extra,
            "--chdir", SANDBOX_HOME,
            "--",
            *argv,
        ]  # fmt: skip
