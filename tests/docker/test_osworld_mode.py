"""Mode ``osworld`` without OSWorld's image (not on this machine): container spec, ports, KVM, errors."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import docker
import pytest

from osw_studio.core.errors import GuestError
from osw_studio.envs.docker import DockerEnv
from osw_studio.envs.docker_daemon import connect_docker, port_is_bound
from osw_studio.envs.docker_spec import DockerGuestConfig, osworld_run_kwargs
from osw_studio.envs.registry import make_env


def test_the_container_spec_is_osworlds_with_ports_on_loopback_and_the_disk_read_only() -> None:
    kwargs = osworld_run_kwargs(
        image="happysixd/osworld-docker",
        qcow2="/vm/Ubuntu.qcow2",
        ports={"server": 5001, "vnc": 8006, "devtools": 9222, "vlc": 8080},
        kvm=True,
        name="osw-osworld-1",
    )
    assert kwargs == {
        "image": "happysixd/osworld-docker",
        "name": "osw-osworld-1",
        "detach": True,
        "environment": {"DISK_SIZE": "32G", "RAM_SIZE": "4G", "CPU_CORES": "4"},
        "cap_add": ["NET_ADMIN"],
        "devices": ["/dev/kvm:/dev/kvm:rwm"],
        "volumes": {"/vm/Ubuntu.qcow2": {"bind": "/System.qcow2", "mode": "ro"}},
        "ports": {
            "9222/tcp": ("127.0.0.1", 9222),
            "5000/tcp": ("127.0.0.1", 5001),
            "8080/tcp": ("127.0.0.1", 8080),
            "8006/tcp": ("127.0.0.1", 8006),
        },
        "labels": {"org.osw-studio.env": "osworld"},
    }
    slow = osworld_run_kwargs(image="i", qcow2="/q", ports={}, kvm=False, name="n")
    assert slow["devices"] == [] and slow["environment"]["KVM"] == "N"


def test_no_docker_socket_says_how_to_start_docker(tmp_path: Path) -> None:
    with pytest.raises(GuestError, match=r"no Docker socket at unix://.*missing\.sock") as caught:
        connect_docker(f"unix://{tmp_path}/missing.sock")
    assert "start Docker" in str(caught.value)


@pytest.fixture
def held_5000() -> Iterator[None]:
    """Port 5000 on 127.0.0.1 taken (by us, unless something else already has it)."""
    sock = socket.socket()
    try:
        try:
            sock.bind(("127.0.0.1", 5000))
            sock.listen()
        except OSError:
            pass
        yield
    finally:
        sock.close()


def osworld_env(url: str, **config: object) -> DockerEnv:
    return DockerEnv(docker.DockerClient(base_url=url), url, DockerGuestConfig(mode="osworld", **config))  # type: ignore[arg-type]


def test_ports_are_the_first_free_from_each_default(docker_url: str, tmp_path: Path, held_5000: None) -> None:
    qcow2 = tmp_path / "Ubuntu.qcow2"
    qcow2.write_bytes(b"QFI\xfb")
    env = osworld_env(docker_url, qcow2=str(qcow2), kvm=False)
    try:
        kwargs = env._run_kwargs(None)
    finally:
        env.client.close()
    ports = env.ports
    assert ports["server"] > 5000 and not port_is_bound(ports["server"])
    assert all(
        ports[role] >= default for role, default in {"vnc": 8006, "devtools": 9222, "vlc": 8080}.items()
    )
    assert len(set(ports.values())) == 4
    assert {address for address, _ in kwargs["ports"].values()} == {"127.0.0.1"}
    assert kwargs["volumes"] == {str(qcow2): {"bind": "/System.qcow2", "mode": "ro"}}
    assert env.warnings == ["no /dev/kvm: the OSWorld VM runs emulated (KVM=N), many times slower"]


def test_a_taken_port_and_a_missing_disk_are_clear_errors(
    docker_url: str, tmp_path: Path, held_5000: None
) -> None:
    qcow2 = tmp_path / "Ubuntu.qcow2"
    qcow2.write_bytes(b"QFI\xfb")
    env = osworld_env(docker_url, qcow2=str(qcow2), ports={"server": 5000})
    with pytest.raises(GuestError, match=r"port 5000 \(server\) is taken on the Docker host"):
        env._run_kwargs(None)
    env.client.close()
    env = osworld_env(docker_url, qcow2=str(tmp_path / "nowhere.qcow2"))
    with pytest.raises(GuestError, match=r"no VM disk at .*nowhere\.qcow2"):
        env._run_kwargs(None)
    env.client.close()


async def test_without_the_image_the_error_names_the_pull_command(docker_url: str, tmp_path: Path) -> None:
    qcow2 = tmp_path / "Ubuntu.qcow2"
    qcow2.write_bytes(b"QFI\xfb")
    with pytest.raises(GuestError, match=r"happysixd/osworld-docker is not on the Docker host") as caught:
        await make_env("docker", mode="osworld", docker_host=docker_url, qcow2=str(qcow2))
    assert "docker pull happysixd/osworld-docker" in str(caught.value)


def test_a_user_without_access_to_the_socket_is_told_to_join_the_docker_group(docker_url: str) -> None:
    import shutil
    import subprocess
    import sys

    if shutil.which("setpriv") is None:
        pytest.skip("needs setpriv to run as another user")
    code = (
        "from osw_studio.envs.docker_daemon import connect_docker\n"
        f"try: connect_docker({docker_url!r})\n"
        "except Exception as exc: print(exc)\n"
    )
    argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c", code]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, cwd=Path(__file__).parents[2])
    assert f"permission denied on the Docker socket {docker_url}" in done.stdout, done.stderr
    assert "sudo usermod -aG docker $USER" in done.stdout
