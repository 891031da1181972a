"""Reaching a Docker daemon through the Docker SDK, with errors that say what to do."""

from __future__ import annotations

import os
import socket
from typing import Any

from osw_studio.core.errors import GuestError

DEFAULT_SOCKET = "unix:///var/run/docker.sock"


def daemon_error(exc: BaseException, url: str) -> GuestError:
    """A user-facing error for a Docker daemon that cannot be reached at ``url``.

    >>> str(daemon_error(OSError("('Connection aborted.', PermissionError(13, 'Permission denied'))"), "unix:///s"))
    'permission denied on the Docker socket unix:///s (add yourself to the docker group: ...'
    """
    text = str(exc)
    if "Permission denied" in text or "PermissionError" in text:
        return GuestError(
            f"permission denied on the Docker socket {url}",
            hint="add yourself to the docker group: `sudo usermod -aG docker $USER`, then log in again "
            "(or use rootless Docker and set DOCKER_HOST)",
        )
    if "No such file" in text or "FileNotFoundError" in text:
        return GuestError(
            f"no Docker socket at {url}",
            hint="start Docker (`sudo systemctl start docker`) or point DOCKER_HOST at a running daemon",
        )
    if "Connection refused" in text or "ConnectionRefused" in text:
        return GuestError(f"Docker at {url} refuses connections", hint="is the daemon running there?")
    return GuestError(f"cannot reach Docker at {url}: {text}", hint="check DOCKER_HOST and the daemon")


def connect_docker(docker_host: str | None = None) -> tuple[Any, str]:
    """A Docker SDK client for ``docker_host`` (default: ``DOCKER_HOST``, else the local socket) and its URL.

    Raises:
        GuestError: If the SDK is missing or the daemon cannot be reached (saying why and what to do).
    """
    try:
        import docker
    except ImportError:
        raise GuestError(
            "the docker provider needs the Docker SDK for Python",
            hint="pip install 'osw-studio[docker]'",
        ) from None
    url = docker_host or os.environ.get("DOCKER_HOST") or DEFAULT_SOCKET
    if url.startswith("unix://"):
        # Try the socket first: a clear error, and no socket left open by the SDK's failed connect.
        with socket.socket(socket.AF_UNIX) as probe:
            try:
                probe.connect(url.removeprefix("unix://"))
            except OSError as exc:
                raise daemon_error(exc, url) from None
    ssh = url.startswith("ssh://")
    try:
        if docker_host:
            client = docker.DockerClient(base_url=docker_host, use_ssh_client=ssh)
        else:
            client = docker.from_env(use_ssh_client=ssh)
        client.ping()
    except docker.errors.DockerException as exc:
        raise daemon_error(exc, url) from None
    return client, url


def port_is_bound(port: int, address: str = "127.0.0.1") -> bool:
    """Whether something on this machine already listens on ``address:port``."""
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1" if address in {"0.0.0.0", ""} else address, port))
        except OSError:
            return True
    return False
