"""The docker provider against a real Docker engine with the locally built studio image."""

from __future__ import annotations

import asyncio
from pathlib import Path

import docker
import pytest

from osw_studio.agent.replay import ReplayAgent
from osw_studio.core.errors import GuestError
from osw_studio.envs.check import check_env
from osw_studio.envs.docker import DockerEnv
from osw_studio.envs.docker_spec import LABEL
from osw_studio.envs.registry import make_env
from osw_studio.runner.episode import Episode
from osw_studio.tasks.load import load_task

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

TASKS = Path(__file__).resolve().parents[2] / "tasks"
SCREEN = (1280, 800)


def our_containers(url: str) -> list[str]:
    client = docker.DockerClient(base_url=url)
    try:
        return [c.name for c in client.containers.list(all=True, filters={"label": LABEL})]
    finally:
        client.close()


async def studio(url: str, image: str, **options: object) -> DockerEnv:
    options = {"screen": SCREEN, **options}
    env = await make_env("docker", mode="studio", docker_host=url, image=image, **options)
    assert isinstance(env, DockerEnv)
    return env


async def test_check_env_passes_on_a_studio_container(docker_url: str, studio_image: str) -> None:
    env = await studio(docker_url, studio_image)
    try:
        assert env.screen_size == SCREEN
        assert env.url.startswith("http://127.0.0.1:")
        assert our_containers(docker_url) == [env.container.name]
        passed = await check_env(env)
        assert passed == ["reset", "observe", "click", "typing (Unicode)"]
    finally:
        await env.close()
    assert our_containers(docker_url) == []


async def test_a_bundled_task_runs_to_its_score_and_reset_starts_a_fresh_container(
    docker_url: str, studio_image: str
) -> None:
    entry = load_task(TASKS / "os" / "write-hello-file.json")
    env = await studio(docker_url, studio_image)
    try:
        first = env.container.name
        result = await asyncio.wait_for(
            Episode(entry.task, ReplayAgent.from_task(entry.task), env, domain=entry.domain).run(), 120
        )
        assert (result.status, result.success, result.score) == ("finished", True, 1.0)
        written = await env.guest.execute('cat "$HOME/Desktop/hello.txt"', shell=True)
        assert written.output == "hello\n"

        await env.reset(entry.task)
        assert env.container.name != first
        assert our_containers(docker_url) == [env.container.name]
        gone = await env.guest.execute('test -e "$HOME/Desktop/hello.txt"', shell=True)
        assert gone.returncode == 1
    finally:
        await env.close()
    assert our_containers(docker_url) == []


async def test_readiness_timeout_quotes_the_container_log(docker_url: str, studio_image: str) -> None:
    with pytest.raises(GuestError) as caught:
        await studio(docker_url, studio_image, screen=(0, 0))
    message = str(caught.value)
    assert "the guest container exited at start" in message
    assert "the container's last log lines:" in message
    assert our_containers(docker_url) == []

    with pytest.raises(GuestError, match=r"was not ready within 0\.01 s; the container's last log lines"):
        await studio(docker_url, studio_image, ready_timeout=0.01)
    assert our_containers(docker_url) == []


async def test_a_missing_image_names_the_command_that_makes_it(docker_url: str) -> None:
    with pytest.raises(GuestError, match=r"osw-studio-guest:nope is not on the Docker host") as caught:
        await make_env("docker", docker_host=docker_url, image="osw-studio-guest:nope")
    assert "packaging/guest-image/build.sh --tag osw-studio-guest" in str(caught.value)
