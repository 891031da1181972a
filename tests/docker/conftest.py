"""A private Docker engine for these tests, and the studio image built on it.

The engine is started as DEVELOPERS.md says: its own data root, exec root and socket in a temporary
folder, no default bridge and no iptables/forwarding changes (containers use the host network). It is
stopped by PID at the end of the session. The studio image is built with packaging/guest-image/build.sh
(its base rootfs tarball is cached under OSW_IMAGE_CACHE, default ~/.cache/osw-studio/guest-image).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUILD = ROOT / "packaging" / "guest-image" / "build.sh"


def _why_no_dockerd() -> str | None:
    if shutil.which("dockerd") is None:
        return "no dockerd binary (apt-get install docker.io; make setup installs it)"
    if os.geteuid() != 0:
        return "dockerd needs root and these tests are not running as root"
    return None


@pytest.fixture(scope="session")
def docker_url() -> Iterator[str]:
    """A Docker engine of our own: its socket URL (``unix://...``)."""
    reason = _why_no_dockerd()
    if reason:
        pytest.skip(reason)
    import docker

    # A short path: unix socket paths are limited to 108 bytes.
    home = Path(tempfile.mkdtemp(prefix="osw-dockerd-", dir="/tmp"))
    url = f"unix://{home}/docker.sock"
    log = open(home / "dockerd.log", "wb")  # noqa: SIM115 - closed below
    argv = [
        "dockerd",
        "--data-root", str(home / "data"),
        "--exec-root", str(home / "exec"),
        "-H", url,
        "--bridge=none",
        "--iptables=false",
        "--ip6tables=false",
        "--ip-forward=false",
        "--ip-masq=false",
        "--pidfile", str(home / "dockerd.pid"),
    ]  # fmt: skip
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    try:
        deadline = time.monotonic() + 60
        while not _accepts(home / "docker.sock"):
            if proc.poll() is not None:
                tail = (home / "dockerd.log").read_text(errors="replace")[-1500:]
                pytest.skip(f"dockerd cannot start here (exit {proc.returncode}): {tail}")
            assert time.monotonic() < deadline, "dockerd did not open its socket within 60 s"
            time.sleep(0.2)
        client = docker.DockerClient(base_url=url)
        client.ping()
        client.close()
        yield url
    finally:
        try:
            _remove_containers(url)
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
            log.close()
            _unmount_under(home)
            shutil.rmtree(home, ignore_errors=True)


def _unmount_under(home: Path) -> None:
    """Unmount what dockerd leaves mounted in its exec root (its ``netns/default``), deepest first."""
    mounts = [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()]
    for point in sorted((m for m in mounts if m.startswith(f"{home}/")), reverse=True):
        subprocess.run(["umount", point], check=False, capture_output=True)


def _accepts(path: Path) -> bool:
    with socket.socket(socket.AF_UNIX) as sock:
        try:
            sock.connect(str(path))
        except OSError:
            return False
    return True


def _remove_containers(url: str) -> None:
    """Remove what a failed test may have left, so the engine stops cleanly."""
    import docker

    try:
        client = docker.DockerClient(base_url=url)
    except docker.errors.DockerException:
        return
    try:
        for container in client.containers.list(all=True):
            container.remove(force=True)
    finally:
        client.close()


@pytest.fixture(scope="session")
def studio_image(docker_url: str) -> str:
    """The studio image, built (or found up to date) on the test engine; its tag."""
    started = time.monotonic()
    done = subprocess.run(
        [str(BUILD)],
        env={**os.environ, "DOCKER_HOST": docker_url},
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, f"build.sh failed:\n{done.stderr[-3000:]}"
    tag = done.stdout.strip().splitlines()[-1]
    print(f"\nstudio image {tag} ready in {time.monotonic() - started:.0f} s")
    return tag


OSWORLD_IMAGE_OPT_IN = "OSW_TEST_OSWORLD_IMAGE"
"""Set to 1 to run the tests marked ``osworld_image`` (``make test-docker-osworld``)."""


@pytest.fixture(scope="session")
def osworld_desktop_image(docker_url: str) -> str:
    """The guest image with the OSWorld desktop (``build.sh --desktop osworld``) on the test engine.

    Building it installs about 1.5 GB of Debian packages the first time (then cached as a tarball), so
    the tests that need it run only when asked (``make test-docker-osworld``).
    """
    if os.environ.get(OSWORLD_IMAGE_OPT_IN) != "1":
        pytest.skip(f"the OSWorld desktop image is built only when asked: make test-docker-osworld "
                    f"(or {OSWORLD_IMAGE_OPT_IN}=1)")  # fmt: skip
    started = time.monotonic()
    done = subprocess.run(
        [str(BUILD), "--desktop", "osworld"],
        env={**os.environ, "DOCKER_HOST": docker_url},
        capture_output=True,
        text=True,
        timeout=3600,
    )
    assert done.returncode == 0, f"build.sh --desktop osworld failed:\n{done.stderr[-3000:]}"
    tag = done.stdout.strip().splitlines()[-1]
    print(f"\nOSWorld desktop image {tag} ready in {time.monotonic() - started:.0f} s")
    return tag
