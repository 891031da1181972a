"""The OSWorld desktop as a variant of the Docker guest image (``build.sh --desktop osworld``).

The image holds OSWorld's applications and the HOME the local sandbox's osworld desktop arranges (the
same code writes both). Its containers have a network of their own, so OSWorld's fixed ports (Chrome's
DevTools behind ``socat`` on 9222, VLC's 8080) do not clash between envs side by side. The image is
built only when asked (``make test-docker-osworld``); the error for a missing image is checked always.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import docker
import pytest

from osw_studio.core.errors import GuestError
from osw_studio.envs.check import check_env
from osw_studio.envs.docker import DockerEnv
from osw_studio.envs.docker_spec import LABEL
from osw_studio.envs.registry import make_env
from tests.fakes.machine import fresh_env

ROOT = Path(__file__).resolve().parents[2]
OSWORLD = ROOT.parent / "shared" / "osworld" / "evaluation_examples" / "examples"
SAMPLE = (
    "os/13584542-872b-42d8-b299-866967b5c3ef",
    "os/3ce045a0-877b-42aa-8d2c-b4a863336ab8",
    "gimp/7b7617bd-57cc-468e-9c91-40c4ec2bcb3d",
    "libreoffice_impress/2cd43775-7085-45d8-89fa-9e35c0a915cf",
    "chrome/bb5e4c0d-f964-439c-97b6-bdb9747de3f4",
    "chrome/030eeff7-b492-4218-b312-701ec99ee0cc",
    "vlc/215dfd39-f493-4bc3-a027-8a97d72c61bf",
    "multi_apps/3c8f201a-009d-4bbe-8b65-a6f8b35bb57f",
)
"""OSWorld tasks that need no downloaded file: the os, GIMP, Impress, Chrome, VLC and multi-app ones."""
VS_CODE_TASK = "vs_code/276cc624-87ea-4f08-ab93-f770e3790175"

pytestmark = [pytest.mark.slow]


def our_containers(url: str) -> list[str]:
    client = docker.DockerClient(base_url=url)
    try:
        return [c.name for c in client.containers.list(all=True, filters={"label": LABEL})]
    finally:
        client.close()


async def test_without_the_image_the_error_names_the_build_command(docker_url: str) -> None:
    with pytest.raises(
        GuestError, match=r"osw-studio-guest-osworld:latest is not on the Docker host"
    ) as caught:
        await make_env("docker", docker_host=docker_url, desktop="osworld")
    assert "packaging/guest-image/build.sh --desktop osworld" in str(caught.value)
    assert our_containers(docker_url) == []


@pytest.mark.osworld_image
@pytest.mark.timeout(3900)
async def test_a_container_of_the_osworld_desktop_is_arranged_as_the_sandbox_and_isolated(
    docker_url: str, osworld_desktop_image: str
) -> None:
    env = await make_env(
        "docker", docker_host=docker_url, desktop="osworld", screen=(1280, 800), ready_timeout=180
    )
    assert isinstance(env, DockerEnv)
    try:
        assert env.container.attrs["HostConfig"]["NetworkMode"] == "none"
        assert await check_env(env) == ["reset", "observe", "click", "typing (Unicode)"]
        probe = await env.guest.execute(
            "echo $HOME; id -un; for c in google-chrome libreoffice gimp vlc thunderbird socat; "
            "do command -v $c; done; "
            "grep -c extraintf=http ~/.config/vlc/vlcrc; python -c 'import pyautogui; print(\"ok\")'",
            shell=True,
        )
        lines = probe.output.split()
        assert lines[:2] == ["/home/user", "user"]
        assert lines[2] == "/home/user/.local/bin/google-chrome"
        assert [Path(p).name for p in lines[3:8]] == ["libreoffice", "gimp", "vlc", "thunderbird", "socat"]
        assert lines[8:] == ["1", "ok"]
    finally:
        await env.close()
    assert our_containers(docker_url) == []


@pytest.mark.osworld_image
@pytest.mark.timeout(3900)
def test_tasks_check_runs_osworld_tasks_in_containers_side_by_side(
    docker_url: str, osworld_desktop_image: str, tmp_path: Path
) -> None:
    files = [str(OSWORLD / f"{name}.json") for name in (*SAMPLE, VS_CODE_TASK)]
    options = ["--desktop", "osworld", "--provider", "docker", "ready_timeout=180", "--envs", "2"]
    done = subprocess.run(
        [sys.executable, "-m", "osw_studio", "tasks", "check", *files, *options],
        cwd=ROOT,
        env=fresh_env(tmp_path / "home", DOCKER_HOST=docker_url),
        capture_output=True,
        text=True,
        timeout=3000,
        check=False,
    )
    lines = done.stdout.strip().splitlines()
    results = [line for line in lines if line.startswith(("PASS ", "FAIL ", "SKIP "))]
    assert len(results) == len(SAMPLE) + 1, done.stdout + done.stderr[-2000:]
    skipped = [line for line in results if line.startswith("SKIP ")]
    assert skipped == [f"SKIP {Path(VS_CODE_TASK).name}: needs 'code', which is not installed here "
                       "(code (VS Code, from Microsoft's packages))"]  # fmt: skip
    assert all(line.startswith("PASS ") for line in results if line not in skipped), "\n".join(results)
    assert "on the osworld desktop (docker:studio)" in done.stdout
    assert lines[-1] == f"{len(SAMPLE)} passed, 0 failed, 1 skipped"
    assert done.returncode == 0 and "Traceback" not in done.stderr
    assert our_containers(docker_url) == []
