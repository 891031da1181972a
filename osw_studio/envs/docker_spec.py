"""What the docker provider asks Docker for: images, ports and ``containers.run`` arguments (pure logic).

Two kinds of container:

- ``osworld``: OSWorld's own image, ``happysixd/osworld-docker``, which boots the user's ``Ubuntu.qcow2``
  (mounted read-only at ``/System.qcow2``) in QEMU, with ``/dev/kvm`` when the host has it. Its guest server
  (5000), web VNC (8006), Chrome DevTools (9222) and VLC (8080) are published on 127.0.0.1, each on the
  first free host port from its default, as OSWorld's own docker provider picks them.
- ``studio``: the image built from ``packaging/guest-image/`` (Xvfb, openbox, AT-SPI, the sandbox apps
  and our guest server), or its OSWorld desktop variant (``desktop=osworld``: OSWorld's applications,
  built with ``build.sh --desktop osworld``). With ``network=host`` it shares the host's network and its
  guest server binds 127.0.0.1 on a free port that its ready line names, so nothing is published at all.
  With ``network=none`` (the OSWorld desktop's default: its tasks listen on fixed ports, 9222, 1337,
  8080, which containers sharing the host's network would fight over) it has a network of its own with
  only a loopback, and its guest server listens on a Unix socket in a folder mounted from the host.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

OSWORLD_IMAGE = "happysixd/osworld-docker"
STUDIO_IMAGE = "osw-studio-guest:latest"
OSWORLD_DESKTOP_IMAGE = "osw-studio-guest-osworld:latest"
"""The studio image with the OSWorld desktop (``build.sh --desktop osworld``)."""
BUILD_COMMAND = "packaging/guest-image/build.sh"
"""Builds :data:`STUDIO_IMAGE`, run from an OSW Studio source checkout (it honours ``DOCKER_HOST``)."""

NETWORKS = ("host", "none")
"""A studio container's network: the host's, or one of its own with only a loopback."""
GUEST_SOCKET_DIR = "/run/osw-studio"
"""Where a ``network=none`` container sees the host folder holding its guest server's socket."""
GUEST_UID = 1000
"""The uid of the image's user ``user``, who must be able to write that folder."""

OSWORLD_PORTS: dict[str, int] = {"server": 5000, "vnc": 8006, "devtools": 9222, "vlc": 8080}
"""Role -> the port inside OSWorld's container, which is also the first host port tried."""

OSWORLD_ENVIRONMENT: dict[str, str] = {"DISK_SIZE": "32G", "RAM_SIZE": "4G", "CPU_CORES": "4"}
"""The VM's resources, as OSWorld's docker provider sets them."""

QCOW2_MOUNT = "/System.qcow2"
LABEL = "org.osw-studio.env"
"""Every container the provider starts carries this label (value: the mode)."""

MAX_PORT = 65535


def first_free_port(start: int, taken: Callable[[int], bool]) -> int:
    """The first port from ``start`` upward for which ``taken(port)`` is false.

    >>> first_free_port(5000, lambda port: port in {5000, 5001})
    5002

    Raises:
        ValueError: If every port from ``start`` is taken.
    """
    for port in range(start, MAX_PORT + 1):
        if not taken(port):
            return port
    raise ValueError(f"no free port from {start} to {MAX_PORT}")


def pick_ports(defaults: Mapping[str, int], taken: Callable[[int], bool]) -> dict[str, int]:
    """A distinct host port for each role: the first free one from its default.

    >>> pick_ports({"server": 5000, "vnc": 8006}, lambda port: port in {5000, 8006, 8007})
    {'server': 5001, 'vnc': 8008}
    >>> pick_ports({"a": 5000, "b": 5000}, lambda port: False)
    {'a': 5000, 'b': 5001}
    """
    chosen: dict[str, int] = {}
    for role, default in defaults.items():
        chosen[role] = first_free_port(default, lambda p: p in chosen.values() or taken(p))
    return chosen


def published_ports(containers: Iterable[Mapping[str, Any]]) -> set[int]:
    """The host ports that containers publish, from their ``docker inspect`` attributes.

    >>> attrs = {"HostConfig": {"PortBindings": {"5000/tcp": [{"HostIp": "127.0.0.1", "HostPort": "5001"}]}}}
    >>> published_ports([attrs, {"HostConfig": {"PortBindings": None}}])
    {5001}
    """
    ports: set[int] = set()
    for attrs in containers:
        bindings = (attrs.get("HostConfig") or {}).get("PortBindings") or {}
        for entries in bindings.values():
            for entry in entries or []:
                if str(entry.get("HostPort") or "").isdigit():
                    ports.add(int(entry["HostPort"]))
    return ports


def is_local_docker(base_url: str) -> bool:
    """Whether a Docker endpoint (a ``DOCKER_HOST`` value) runs on this machine.

    >>> [is_local_docker(u) for u in ("unix:///run/docker.sock", "tcp://127.0.0.1:2375", "ssh://me@gpu-box")]
    [True, True, False]
    """
    parts = urlsplit(base_url)
    if parts.scheme in {"unix", "npipe", "http+unix", ""}:
        return True
    return (parts.hostname or "") in {"localhost", "127.0.0.1", "::1"}


def connect_host(base_url: str, publish_address: str, override: str | None = None) -> str | None:
    """The address this machine reaches the guest's ports at; ``None`` when it cannot.

    A local daemon's ports are reached where they are published (``0.0.0.0`` means loopback). A remote
    daemon's ports published on 127.0.0.1 are out of reach (unless forwarded: pass ``override``); published
    on another address, they are reached there, or at the daemon's host name for ``0.0.0.0``.

    >>> connect_host("unix:///var/run/docker.sock", "127.0.0.1")
    '127.0.0.1'
    >>> connect_host("ssh://me@gpu-box", "127.0.0.1") is None
    True
    >>> connect_host("tcp://gpu-box:2376", "0.0.0.0")
    'gpu-box'
    >>> connect_host("ssh://me@gpu-box", "127.0.0.1", override="127.0.0.1")
    '127.0.0.1'
    """
    if override:
        return override
    wildcard = publish_address in {"0.0.0.0", "::", ""}
    if is_local_docker(base_url):
        return "127.0.0.1" if wildcard else publish_address
    if publish_address.startswith("127.") or publish_address == "::1":
        return None
    return urlsplit(base_url).hostname if wildcard else publish_address


def osworld_run_kwargs(
    *,
    image: str,
    qcow2: str,
    ports: Mapping[str, int],
    kvm: bool,
    name: str,
    publish_address: str = "127.0.0.1",
    environment: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The ``client.containers.run`` arguments of an OSWorld VM container.

    Args:
        image: OSWorld's image.
        qcow2: Absolute path of ``Ubuntu.qcow2`` on the Docker host (mounted read-only).
        ports: Role -> host port (roles of :data:`OSWORLD_PORTS`).
        kvm: Pass ``/dev/kvm`` through; without it QEMU emulates (``KVM=N``), which is much slower.
        name: The container's name.
        publish_address: The host address the ports are published on.
        environment: Overrides of :data:`OSWORLD_ENVIRONMENT` (``RAM_SIZE``, ``CPU_CORES``, ...).
    """
    env = {**OSWORLD_ENVIRONMENT, **(environment or {})}
    if not kvm:
        env["KVM"] = "N"
    return {
        "image": image,
        "name": name,
        "detach": True,
        "environment": env,
        "cap_add": ["NET_ADMIN"],
        "devices": ["/dev/kvm:/dev/kvm:rwm"] if kvm else [],
        "volumes": {qcow2: {"bind": QCOW2_MOUNT, "mode": "ro"}},
        "ports": {
            f"{OSWORLD_PORTS[role]}/tcp": (publish_address, port) for role, port in sorted(ports.items())
        },
        "labels": {LABEL: "osworld"},
    }


def studio_run_kwargs(
    *,
    image: str,
    name: str,
    screen: tuple[int, int],
    token: str,
    port: int = 0,
    bind_address: str = "127.0.0.1",
    socket_dir: str | None = None,
) -> dict[str, Any]:
    """The ``client.containers.run`` arguments of an OSW Studio guest container.

    The token goes in the environment (readable only by those who can run Docker, who own the host
    anyway), not in the command line.

    Args:
        image: The studio image.
        name: The container's name.
        screen: ``(width, height)`` of its display.
        token: The guest server's token.
        port: The guest server's port on the host network; 0 picks a free one.
        bind_address: The address the guest server binds.
        socket_dir: A host folder: the container gets a network of its own (``network=none``) and its
            guest server listens on ``guest.sock`` there (seen inside as :data:`GUEST_SOCKET_DIR`).

    >>> kwargs = studio_run_kwargs(image="i", name="n", screen=(800, 600), token="t", socket_dir="/tmp/s")
    >>> kwargs["network_mode"], kwargs["volumes"], kwargs["environment"]["OSW_GUEST_SOCKET"]
    ('none', {'/tmp/s': {'bind': '/run/osw-studio', 'mode': 'rw'}}, '/run/osw-studio/guest.sock')
    """
    environment = {"OSW_SCREEN": f"{screen[0]}x{screen[1]}", "OSW_GUEST_TOKEN": token}
    isolated: dict[str, Any] = {}
    if socket_dir is None:
        environment.update({"OSW_GUEST_HOST": bind_address, "OSW_GUEST_PORT": str(port)})
    else:
        environment["OSW_GUEST_SOCKET"] = f"{GUEST_SOCKET_DIR}/guest.sock"
        isolated["volumes"] = {socket_dir: {"bind": GUEST_SOCKET_DIR, "mode": "rw"}}
    return {
        "image": image,
        "name": name,
        "detach": True,
        "network_mode": "host" if socket_dir is None else "none",
        "init": True,
        "shm_size": "512m",
        "environment": environment,
        **isolated,
        "labels": {LABEL: "studio"},
    }


def log_tail(logs: str, secret: str | None = None, lines: int = 12) -> str:
    r"""The last lines of a container's log for an error message, with ``secret`` masked.

    >>> log_tail("a\nb\nready token=s3cret", secret="s3cret", lines=2)
    'b | ready token=***'
    """
    text = logs.replace(secret, "***") if secret else logs
    return " | ".join(text.strip().splitlines()[-lines:])


@dataclass(frozen=True)
class DockerGuestConfig:
    """What one docker env's container is made of (kept to recreate it on reset).

    Attributes:
        mode: ``studio`` (our image) or ``osworld`` (OSWorld's VM image).
        desktop: ``studio``: the image's applications, ``studio`` or ``osworld`` (OSWorld's).
        network: ``studio``: ``host`` or ``none`` (see the module docs); ``None``: ``none`` for the
            OSWorld desktop, else ``host``.
        image: The image; default by mode and desktop.
        qcow2: ``osworld``: path of ``Ubuntu.qcow2`` on the Docker host.
        screen: ``studio``: the display size.
        port: ``studio``: the guest server's port (0: a free one).
        ports: ``osworld``: fixed host ports by role (``server``, ``vnc``, ``devtools``, ``vlc``);
            roles not given get the first free port from their default.
        kvm: ``osworld``: use ``/dev/kvm``; ``None`` means "if this machine has it".
        publish_address: Where ports are published (``osworld``) or the server binds (``studio``).
        connect_host: Where this machine reaches them, when not ``publish_address`` (forwarded ports).
        ready_timeout: Seconds to wait for the guest server (default 60 for studio, 300 for osworld).
        vm_environment: ``osworld``: overrides of ``RAM_SIZE``, ``CPU_CORES``, ``DISK_SIZE``.
    """

    mode: str = "studio"
    desktop: str = "studio"
    network: str | None = None
    image: str | None = None
    qcow2: str | None = None
    screen: tuple[int, int] = (1920, 1080)
    port: int = 0
    ports: dict[str, int] = field(default_factory=dict)
    kvm: bool | None = None
    publish_address: str = "127.0.0.1"
    connect_host: str | None = None
    ready_timeout: float | None = None
    vm_environment: dict[str, str] = field(default_factory=dict)

    @property
    def image_name(self) -> str:
        """The image to run.

        >>> DockerGuestConfig(desktop="osworld").image_name, DockerGuestConfig(mode="osworld").image_name
        ('osw-studio-guest-osworld:latest', 'happysixd/osworld-docker')
        """
        if self.image:
            return self.image
        if self.mode == "osworld":
            return OSWORLD_IMAGE
        return OSWORLD_DESKTOP_IMAGE if self.desktop == "osworld" else STUDIO_IMAGE

    @property
    def network_mode(self) -> str:
        """``studio``: the container's network, ``host`` or ``none``.

        >>> DockerGuestConfig().network_mode, DockerGuestConfig(desktop="osworld").network_mode
        ('host', 'none')
        """
        return self.network or ("none" if self.desktop == "osworld" else "host")

    @property
    def timeout(self) -> float:
        """Seconds to wait for readiness."""
        return self.ready_timeout or (300.0 if self.mode == "osworld" else 60.0)
