"""``DockerProvider``: guests in Docker containers, OSWorld's VM image or our own studio image.

``make_env("docker", mode="studio")`` starts the image built by ``packaging/guest-image/build.sh``
(Xvfb, openbox, AT-SPI, the sandbox apps and our guest server) on the host network; with
``desktop="osworld"`` its OSWorld desktop variant (``build.sh --desktop osworld``), in a network of its
own reached through a Unix socket (:mod:`~osw_studio.envs.docker_spec`); ``make_env("docker",
mode="osworld", qcow2="~/vm/Ubuntu.qcow2")`` boots OSWorld's Ubuntu VM in ``happysixd/osworld-docker``,
waiting (up to 300 s) until its ``/screenshot`` answers. Either way the env is a :class:`RemoteEnv` over
the container's guest server, and resetting it for a new task recreates the container, so every task
starts from a clean guest.

Docker is reached through the Docker SDK (``pip install 'osw-studio[docker]'``), at ``docker_host`` or
``DOCKER_HOST`` (TLS settings too), so a remote daemon works: publish on an address this machine can
reach (``publish_address``), or forward the ports and say where (``connect_host``). Every container the
provider starts is labelled ``org.osw-studio.env`` and removed on close, and at exit if the app forgets.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import logging
import os
import secrets
import shutil
import tempfile
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from osw_studio.core.actions import Action
from osw_studio.core.errors import GuestError
from osw_studio.core.observation import Observation
from osw_studio.core.task import Task
from osw_studio.envs import docker_spec as spec
from osw_studio.envs.base import Env
from osw_studio.envs.docker_daemon import connect_docker, port_is_bound
from osw_studio.envs.docker_spec import DockerGuestConfig
from osw_studio.envs.guest_client import Capabilities, GuestClient, RetryPolicy
from osw_studio.envs.ready import ReadyLine, parse_ready
from osw_studio.envs.relay import Relay, forward_guest_port
from osw_studio.envs.remote import RemoteEnv
from osw_studio.envs.setup import SetupOptions
from osw_studio.tasks.assets import AssetStore

log = logging.getLogger(__name__)

_LIVE: dict[str, Any] = {}
"""Container id -> container, for removal at exit."""
_FOLDERS: set[Path] = set()
"""The socket folders of ``network=none`` containers, for removal at exit."""


@atexit.register
def _remove_all_at_exit() -> None:
    for container in list(_LIVE.values()):
        with contextlib.suppress(Exception):
            container.remove(force=True)
    _LIVE.clear()
    for folder in list(_FOLDERS):
        shutil.rmtree(folder, ignore_errors=True)
    _FOLDERS.clear()


class DockerEnv(Env):
    """An env over the guest server in one container, which it owns: closing it removes the container.

    Attributes:
        config: What the container is made of.
        docker_url: The Docker endpoint.
        container: The running container (docker SDK object), or ``None`` when closed.
        url: The guest server's base URL.
        ports: ``osworld``: the host port of each role (``server``, ``vnc``, ``devtools``, ``vlc``).
        warnings: What the user should know (e.g. no KVM: the VM is emulated and slow).
    """

    def __init__(
        self,
        client: Any,
        docker_url: str,
        config: DockerGuestConfig,
        *,
        setup: SetupOptions | None = None,
        retry: RetryPolicy | None = None,
        client_options: dict[str, Any] | None = None,
    ) -> None:
        self.client = client
        self.docker_url = docker_url
        self.config = config
        self.setup_options = setup
        self.retry = retry
        self.client_options = client_options or {}
        self.container: Any = None
        self.url = ""
        self.ports: dict[str, int] = {}
        self.warnings: list[str] = []
        self.name = f"docker:{config.mode}"
        self._remote: RemoteEnv | None = None
        self._dirty = False
        self._closed = False
        self._local = spec.is_local_docker(docker_url)
        self._socket_dir: Path | None = None
        self._relay: Relay | None = None
        self._forwards: dict[int, Relay] = {}

    # --- the env protocol, through the container's guest server --------------------------------------

    @property
    def remote(self) -> RemoteEnv:
        """The env over the current container's guest server."""
        if self._remote is None:
            raise GuestError("the docker env is not running", where=self.name, hint="create a new env")
        return self._remote

    @property
    def guest(self) -> GuestClient:
        """The client of the container's guest server."""
        return self.remote.guest

    @property
    def capabilities(self) -> Capabilities | None:
        """The guest server's capabilities; ``None`` for OSWorld's."""
        return self.remote.capabilities

    @property
    def task_dir(self) -> Path | None:
        """The folder of the task last reset."""
        return self.remote.task_dir

    @property
    def asset_cache(self) -> Path | None:
        """The asset cache folder of the setup options."""
        return self.remote.asset_cache

    @property
    def asset_store(self) -> AssetStore | None:
        """The asset cache of the setup options."""
        return self.remote.asset_store

    @property
    def screen_size(self) -> tuple[int, int]:
        """``(width, height)`` of the guest screen."""
        return self.remote.screen_size

    async def guest_port_url(self, port: int) -> str:
        """A host URL for the guest's TCP ``port``.

        A container with a network of its own (``network=none``) is reached through a Unix socket that
        ``socat`` in the container opens in the mounted folder, relayed to a free port of the host's
        127.0.0.1; otherwise the port is the guest's host's.

        Raises:
            GuestError: If the forwarder cannot start (the image has no ``socat``).
        """
        if self._socket_dir is None:
            return await self.remote.guest_port_url(port)
        relay = self._forwards.get(port)
        if relay is None:
            name = f"port-{port}.sock"
            relay = self._forwards[port] = await forward_guest_port(
                self.guest,
                port,
                inside=f"{spec.GUEST_SOCKET_DIR}/{name}",
                outside=self._socket_dir / name,
                where=self.name,
            )
        return relay.url

    async def reset(self, task: Task | None = None, *, task_dir: Path | None = None) -> Observation:
        """Recreate the container if the guest was used since it started, then run the task's setup.

        Raises:
            GuestError: If the new container does not become ready, or a setup step fails.
        """
        if self._dirty:
            await self.recreate()
        self._dirty = task is not None
        return await self.remote.reset(task, task_dir=task_dir)

    async def observe(self, *, accessibility_tree: bool = False) -> Observation:
        """Grab the screen (and the accessibility tree when asked)."""
        return await self.remote.observe(accessibility_tree=accessibility_tree)

    async def execute(self, actions: Sequence[Action]) -> None:
        """Perform actions on the guest."""
        self._dirty = True
        await self.remote.execute(actions)

    async def close(self) -> None:
        """Close the connection and remove the container. Safe to call twice."""
        if self._closed:
            return
        self._closed = True
        await self._stop()
        await asyncio.to_thread(self.client.close)

    # --- the container ----------------------------------------------------------------------------

    async def recreate(self) -> None:
        """Replace the container with a fresh one from the same image (OSWorld's reset)."""
        await self._stop()
        await self.start()

    async def _stop(self) -> None:
        if self._remote is not None:
            await self._remote.close()
            self._remote = None
        for relay in [*self._forwards.values(), *([self._relay] if self._relay else [])]:
            relay.close()
        self._forwards.clear()
        self._relay = None
        container, self.container = self.container, None
        if container is not None:
            _LIVE.pop(container.id, None)
            with contextlib.suppress(Exception):
                await asyncio.to_thread(container.remove, force=True)
        folder, self._socket_dir = self._socket_dir, None
        if folder is not None:
            _FOLDERS.discard(folder)
            await asyncio.to_thread(shutil.rmtree, folder, True)

    async def start(self) -> None:
        """Start a container and connect to its guest server once it is ready.

        Raises:
            GuestError: If the image or qcow2 is missing, a port is taken, Docker refuses, or the guest
                is not ready in time (quoting the container's last log lines).
        """
        await asyncio.to_thread(self._check_image)
        token = secrets.token_urlsafe(24) if self.config.mode == "studio" else None
        host = spec.connect_host(self.docker_url, self.config.publish_address, self.config.connect_host)
        if host is None:
            raise GuestError(
                f"the Docker daemon at {self.docker_url} is remote, and ports published on "
                f"{self.config.publish_address} there cannot be reached from here",
                where=self.name,
                hint="pass publish_address=<an address of that host this machine reaches>, or forward "
                "the ports (ssh -L) and pass connect_host=127.0.0.1",
            )
        client_options = dict(self.client_options)
        options = self.setup_options
        try:
            if self.config.mode == "studio" and self.config.network_mode == "none":
                self._socket_dir = await asyncio.to_thread(self._socket_folder)
                _FOLDERS.add(self._socket_dir)
                options = replace(options or SetupOptions(), port_url=self.guest_port_url)
            kwargs = await asyncio.to_thread(self._run_kwargs, token)
            self.container = await asyncio.to_thread(self._run, kwargs)
            _LIVE[self.container.id] = self.container
            if self.config.mode == "osworld":
                port = self.ports["server"]
                await self._wait_screenshot(f"http://{_url_host(host)}:{port}")
                self.url = f"http://{_url_host(host)}:{port}"
            else:
                ready = await self._wait_ready_line(token)
                if ready.unix_socket and self._socket_dir is not None:
                    import httpx

                    socket_path = self._socket_dir / "guest.sock"
                    self._relay = Relay(socket_path)
                    self.url = self._relay.url
                    client_options.setdefault("transport", httpx.AsyncHTTPTransport(uds=str(socket_path)))
                else:
                    self.url = f"http://{_url_host(host)}:{ready.port}"
            remote = RemoteEnv(
                GuestClient(self.url, token, retry=self.retry, **client_options), setup=options
            )
            remote.name = f"docker:{self.config.mode}:{self.container.name}"
            self._remote = remote
            await remote.connect()
        except BaseException:
            await self._stop()
            raise
        self.name = self._remote.name

    def _socket_folder(self) -> Path:
        """A host folder for a ``network=none`` container's sockets, writable by the image's user only."""
        if not self._local:
            raise GuestError(
                f"a docker guest with network=none is reached through a folder on the Docker host, "
                f"and the daemon at {self.docker_url} is on another machine",
                where=self.name,
                hint="use network=host there",
            )
        base = tempfile.gettempdir()
        folder = Path(tempfile.mkdtemp(prefix="osw-docker-", dir=base if len(base) < 60 else "/tmp"))
        if os.getuid() == 0:
            os.chown(folder, spec.GUEST_UID, spec.GUEST_UID)
        elif os.getuid() != spec.GUEST_UID:
            folder.rmdir()
            raise GuestError(
                f"a docker guest with network=none talks through a folder that its user (uid "
                f"{spec.GUEST_UID}) and this one (uid {os.getuid()}) must both own",
                where=self.name,
                hint="run as root or as uid 1000, or use network=host",
            )
        return folder

    def _check_image(self) -> None:
        import docker

        image = self.config.image_name
        try:
            self.client.images.get(image)
        except docker.errors.ImageNotFound:
            raise self._image_missing(image) from None

    def _image_missing(self, image: str) -> GuestError:
        if self.config.mode == "osworld":
            command = f"docker pull {image}"
        elif image == spec.STUDIO_IMAGE:
            command = spec.BUILD_COMMAND
        elif image == spec.OSWORLD_DESKTOP_IMAGE:
            command = f"{spec.BUILD_COMMAND} --desktop osworld"
        else:
            command = f"{spec.BUILD_COMMAND} --tag {image.rsplit(':', 1)[0]}"
        return GuestError(
            f"the image {image} is not on the Docker host",
            where=self.docker_url,
            hint=f"get it with `{command}`"
            + (" (from an OSW Studio source checkout)" if "build" in command else ""),
        )

    def _taken(self, others: set[int]) -> Any:
        def taken(port: int) -> bool:
            if port in others:
                return True
            return self._local and port_is_bound(port, self.config.publish_address)

        return taken

    def _run_kwargs(self, token: str | None) -> dict[str, Any]:
        config = self.config
        name = f"osw-{config.mode}-{secrets.token_hex(4)}"
        if config.mode == "studio":
            if config.port and self._local and port_is_bound(config.port, config.publish_address):
                raise _port_taken(config.port, "guest server")
            return spec.studio_run_kwargs(
                image=config.image_name,
                name=name,
                screen=config.screen,
                token=token or "",
                port=config.port,
                bind_address=config.publish_address,
                socket_dir=str(self._socket_dir) if self._socket_dir else None,
            )
        qcow2 = self._qcow2()
        running = self.client.containers.list()
        taken = self._taken(spec.published_ports(c.attrs for c in running))
        for role, port in config.ports.items():
            if role not in spec.OSWORLD_PORTS:
                raise GuestError(f"unknown port role {role!r}", hint=f"use: {', '.join(spec.OSWORLD_PORTS)}")
            if taken(port):
                raise _port_taken(port, role)
        defaults = {role: port for role, port in spec.OSWORLD_PORTS.items() if role not in config.ports}
        self.ports = {
            **config.ports,
            **spec.pick_ports(defaults, lambda p: taken(p) or p in config.ports.values()),
        }
        kvm = config.kvm if config.kvm is not None else (Path("/dev/kvm").exists() or not self._local)
        if not kvm:
            message = "no /dev/kvm: the OSWorld VM runs emulated (KVM=N), many times slower"
            self.warnings.append(message)
            log.warning(message)
        return spec.osworld_run_kwargs(
            image=config.image_name,
            qcow2=qcow2,
            ports=self.ports,
            kvm=kvm,
            name=name,
            publish_address=config.publish_address,
            environment=config.vm_environment,
        )

    def _qcow2(self) -> str:
        if not self.config.qcow2:
            raise GuestError(
                "mode osworld needs the VM disk: pass qcow2=PATH of Ubuntu.qcow2",
                where=self.name,
                hint="OSWorld's Ubuntu.qcow2 is at huggingface.co/datasets/xlangai/ubuntu_osworld",
            )
        path = Path(self.config.qcow2).expanduser()
        if self._local:
            path = path.resolve()
            if not path.is_file():
                raise GuestError(
                    f"no VM disk at {path}",
                    hint="download and unzip Ubuntu.qcow2 (huggingface.co/datasets/xlangai/ubuntu_osworld)",
                )
        return str(path)

    def _run(self, kwargs: dict[str, Any]) -> Any:
        import docker

        try:
            return self.client.containers.run(**kwargs)
        except docker.errors.ImageNotFound:
            raise self._image_missing(kwargs["image"]) from None
        except docker.errors.APIError as exc:
            text = str(exc.explanation or exc)
            with contextlib.suppress(Exception):
                self.client.containers.get(kwargs["name"]).remove(force=True)
            if "port is already allocated" in text or "address already in use" in text:
                raise GuestError(
                    f"a port of the container is taken: {text}",
                    where=self.docker_url,
                    hint="free the port, or pass other ports (ports={'server': 5100, ...})",
                ) from None
            raise GuestError(
                f"Docker refused to start {kwargs['image']}: {text}", where=self.docker_url
            ) from None

    def _logs(self) -> str:
        try:
            data: bytes = self.container.logs(stdout=True, stderr=True, tail=200)
        except Exception:
            return ""
        return data.decode(errors="replace")

    def _not_ready(self, what: str, token: str | None) -> GuestError:
        tail = spec.log_tail(self._logs(), secret=token)
        return GuestError(
            f"{what}; the container's last log lines: {tail or '(none)'}",
            where=f"container {self.container.name} ({self.config.image_name})",
            hint="raise ready_timeout if the machine is just slow",
        )

    async def _exited(self) -> bool:
        await asyncio.to_thread(self.container.reload)
        return self.container.status in {"exited", "dead"}

    async def _wait_ready_line(self, token: str | None) -> ReadyLine:
        deadline = time.monotonic() + self.config.timeout
        while True:
            ready = parse_ready(await asyncio.to_thread(self._logs))
            if ready:
                return ready
            if await self._exited():
                raise self._not_ready("the guest container exited at start", token)
            if time.monotonic() > deadline:
                raise self._not_ready(
                    f"the guest server was not ready within {self.config.timeout:g} s", token
                )
            await asyncio.sleep(0.2)

    async def _wait_screenshot(self, url: str) -> None:
        """Poll ``/screenshot`` until it answers 200, as OSWorld's docker provider does."""
        import httpx

        deadline = time.monotonic() + self.config.timeout
        async with httpx.AsyncClient(timeout=10.0) as http:
            while True:
                with contextlib.suppress(httpx.HTTPError):
                    if (await http.get(f"{url}/screenshot")).status_code == 200:
                        return
                if await self._exited():
                    raise self._not_ready("the OSWorld container exited while the VM booted", None)
                if time.monotonic() > deadline:
                    raise self._not_ready(f"the VM was not ready within {self.config.timeout:g} s", None)
                await asyncio.sleep(1.0)


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _port_taken(port: int, role: str) -> GuestError:
    return GuestError(
        f"port {port} ({role}) is taken on the Docker host",
        hint="stop what uses it, or choose another port (0 or leaving it out picks a free one)",
    )


class DockerProvider:
    """The ``docker`` provider. Options given here are defaults for :meth:`create`."""

    def __init__(self, **defaults: Any) -> None:
        self.defaults = defaults

    async def create(
        self,
        *,
        docker_host: str | None = None,
        setup: SetupOptions | None = None,
        retry: RetryPolicy | None = None,
        **options: Any,
    ) -> DockerEnv:
        """Start a container and return its env once the guest is ready.

        Args:
            docker_host: The Docker endpoint (default: ``DOCKER_HOST``, else the local socket).
            setup: Where setup steps find files.
            retry: The guest client's retry policy.
            options: Fields of :class:`DockerGuestConfig` (``mode``, ``image``, ``qcow2``, ``screen``,
                ...); anything else goes to the :class:`GuestClient`.

        Raises:
            GuestError: Saying what is missing or failed and what to do.
        """
        merged = {**self.defaults, **options}
        fields = set(DockerGuestConfig.__dataclass_fields__)
        config = DockerGuestConfig(**{k: v for k, v in merged.items() if k in fields})
        if config.mode not in {"studio", "osworld"}:
            raise GuestError(
                f"unknown docker mode {config.mode!r}", hint="use mode='studio' or mode='osworld'"
            )
        if config.desktop not in {"studio", "osworld"} or config.network_mode not in spec.NETWORKS:
            raise GuestError(
                f"unknown docker desktop {config.desktop!r} or network {config.network!r}",
                hint="use desktop='studio' or 'osworld', network='host' or 'none'",
            )
        if config.screen is not None:
            config = replace(config, screen=(int(config.screen[0]), int(config.screen[1])))
        client_options = {k: v for k, v in merged.items() if k not in fields}
        client, url = await asyncio.to_thread(connect_docker, docker_host or merged.get("docker_host"))
        env = DockerEnv(client, url, config, setup=setup, retry=retry, client_options=client_options)
        try:
            await env.start()
        except BaseException:
            await env.close()
            raise
        return env
