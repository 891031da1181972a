"""The Ray backend of a batch: each env worker is a Ray actor, so a suite spreads over a cluster.

An actor holds one :class:`~osw_studio.runner.slot.EnvSlot`: it starts its env on the node Ray placed
it on (the local provider needs Xvfb, openbox and bubblewrap there; ``remote`` needs the guest URL
reachable from there), runs the tasks it is handed and writes each run store into a folder of its own.
When a task ends it sends the run store back as a tar archive, which is unpacked under the batch's
``runs/``, so the cluster needs no shared file system. Scheduling stays on the driver (the batch's
queue): a worker asks for the next task the moment its actor answers.

The agent factory travels to the actors with the profile and, for model agents, the API key: use a
cluster you trust. An actor that dies (its node lost, the process killed) fails only the task it held;
the worker starts a new actor for the next task.

Ray is optional (``pip install 'osw-studio[ray]'``); without it ``--backend ray`` says how to get it.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import io
import logging
import os
import shutil
import tarfile
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from osw_studio.core.errors import OswError
from osw_studio.runner.slot import STOP_GRACE, AgentFactory, EnvFactory, EnvSlot, SlotConfig
from osw_studio.runner.summary import TaskOutcome
from osw_studio.tasks.load import TaskEntry

log = logging.getLogger(__name__)

ANSWER_MARGIN = 120.0
"""Seconds past a task's own timeout after which an actor that has not answered is given up on."""


def require_ray() -> ModuleType:
    """The ``ray`` module.

    Raises:
        OswError: If Ray is not installed, saying how to install it.
    """
    try:
        # By name, so the type is a module whether or not Ray (untyped) is installed.
        ray = importlib.import_module("ray")
    except ImportError:
        raise OswError(
            "the Ray backend needs Ray, which is not installed",
            where="--backend ray",
            hint="pip install 'osw-studio[ray]' (or `pip install ray`), or use --backend local",
        ) from None
    return ray


def connect(address: str | None = None) -> None:
    """Join the Ray cluster at ``address`` (default: start one on this machine) unless already joined.

    Raises:
        OswError: If Ray is missing or the cluster cannot be reached.
    """
    ray = require_ray()
    if ray.is_initialized():
        return
    local: dict[str, Any] = {}
    if address is None or address == "local":
        address = "local"  # a new instance here, not whatever cluster RAY_ADDRESS or `ray start` left
        # A Ray instance of our own: its workers talk over loopback and it sends no usage statistics.
        # Ray's own gRPC servers (GCS, raylet) still listen on every interface whatever the node
        # address (a Ray limitation); say so, so that people on shared networks use a firewall.
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        local["_node_ip_address"] = "127.0.0.1"
        log.warning(
            "starting a local Ray instance: Ray's servers listen on every network interface of this "
            "machine, not only loopback; on a shared network, firewall them or use --backend local"
        )
    try:
        ray.init(address=address, include_dashboard=False, log_to_driver=False, **local)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        raise OswError(
            f"cannot join the Ray cluster: {exc}",
            where="a local Ray instance" if address == "local" else address,
            hint="check --address (e.g. ray://HEAD:10001 or HEAD:6379) and that `ray status` works there",
        ) from exc


def pack_folder(folder: Path) -> bytes:
    """A folder as an uncompressed tar archive (screenshots are compressed already)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        tar.add(folder, arcname=folder.name)
    return buffer.getvalue()


def unpack_folder(data: bytes, into: Path) -> None:
    """Unpack an archive made by :func:`pack_folder` under ``into`` (no links, no paths outside it).

    Only plain files and folders with relative paths that stay inside are taken (Pythons without
    tarfile's extraction filters included), each with mode 0644 or 0755 at most.
    """
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r") as tar:
        members = []
        for member in tar.getmembers():
            name = Path(member.name)
            if name.is_absolute() or ".." in name.parts or not (member.isfile() or member.isdir()):
                raise ValueError(f"refusing archive member {member.name!r}: not a plain file inside")
            member.mode = 0o755 if member.isdir() else 0o644
            members.append(member)
        tar.extractall(into, members=members)


class EnvActor:
    """What each Ray actor runs: one env slot, its run stores written to a temporary folder.

    Args:
        name: The slot's name.
        envs: Starts the env (on the actor's node).
        agents: Makes each task's agent.
        config: The slot's timeouts and recycle policy.
    """

    def __init__(self, name: str, envs: EnvFactory, agents: AgentFactory, config: SlotConfig) -> None:
        self.tmp = Path(tempfile.mkdtemp(prefix="osw-studio-ray-"))
        self.slot = EnvSlot(name, envs, agents, self.tmp, config)

    async def run(self, entry: TaskEntry) -> tuple[TaskOutcome, bytes | None]:
        """Run one task; return its outcome and its run store as an archive."""
        outcome = await self.slot.run(entry)
        data = None
        if outcome.run_id is not None:
            folder = self.tmp / outcome.run_id
            if folder.is_dir():
                data = await asyncio.to_thread(pack_folder, folder)
                shutil.rmtree(folder, ignore_errors=True)
        return outcome, data

    async def stop(self) -> None:
        """Stop the task in flight."""
        self.slot.stop()

    async def end_for_budget(self, reason: str) -> None:
        """The suite's budget ran out: the task in flight ends ``budget`` at its next step."""
        self.slot.end_for_budget(reason)

    async def close(self) -> None:
        """Close the env and remove the temporary folder."""
        await self.slot.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


class RayWorker:
    """A batch worker whose env lives in a Ray actor.

    Args:
        name: The worker's name in results.
        envs: Starts the env inside the actor.
        agents: Makes each task's agent inside the actor.
        config: The slot's timeouts and recycle policy.
        runs_dir: The batch's ``runs/`` folder, where run stores are unpacked.
        actor_options: Passed to ``ray.remote`` (default: one CPU per actor).
    """

    def __init__(
        self,
        name: str,
        envs: EnvFactory,
        agents: AgentFactory,
        config: SlotConfig,
        runs_dir: Path,
        actor_options: dict[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.envs = envs
        self.agents = agents
        self.config = config
        self.runs_dir = runs_dir
        self.actor_options = actor_options or {"num_cpus": 1}
        self.actor: Any = None
        self.actors_started = 0

    def _spawn(self) -> Any:
        ray = require_ray()
        cls = ray.remote(**self.actor_options)(EnvActor)
        self.actor = cls.remote(self.name, self.envs, self.agents, self.config)
        self.actors_started += 1
        return self.actor

    async def run(self, entry: TaskEntry) -> TaskOutcome:
        """Run one task in the actor (a fresh one when the last died) and unpack its run store."""
        ray = require_ray()
        actor = self.actor or self._spawn()
        started = time.time()
        limit = self.config.task_timeout + STOP_GRACE + ANSWER_MARGIN
        try:
            outcome, data = await asyncio.wait_for(_answer(actor.run.remote(entry)), limit)
        except (TimeoutError, ray.exceptions.RayError) as exc:
            self._kill()
            why = "did not answer" if isinstance(exc, TimeoutError) else f"died ({type(exc).__name__})"
            return TaskOutcome(
                task_id=entry.task.id,
                domain=entry.domain,
                status="error",
                error=f"the Ray worker {why}; a new one takes the next task",
                env=self.name,
                time=time.time() - started,
                finished_at=time.time(),
            )
        if data is not None:
            await asyncio.to_thread(unpack_folder, data, self.runs_dir)
        return outcome  # type: ignore[no-any-return]

    def stop(self) -> None:
        """Ask the actor to stop its task in flight."""
        if self.actor is not None:
            self.actor.stop.remote()

    def end_for_budget(self, reason: str) -> None:
        """Ask the actor to end its task in flight as over budget (it is then scored)."""
        if self.actor is not None:
            self.actor.end_for_budget.remote(reason)

    def _kill(self) -> None:
        actor, self.actor = self.actor, None
        if actor is not None:
            with contextlib.suppress(Exception):
                require_ray().kill(actor)

    async def close(self) -> None:
        """Close the actor's env and end the actor."""
        if self.actor is None:
            return
        ray = require_ray()
        with contextlib.suppress(TimeoutError, ray.exceptions.RayError):
            await asyncio.wait_for(_answer(self.actor.close.remote()), 60.0)
        self._kill()


async def _answer(ref: Any) -> Any:
    return await ref


def ray_workers(
    envs: Sequence[EnvFactory],
    agents: AgentFactory,
    config: SlotConfig,
    runs_dir: Path,
    actor_options: dict[str, Any] | None = None,
) -> Iterator[RayWorker]:
    """One :class:`RayWorker` per env factory, named ``ray-1``, ``ray-2``, ..."""
    for i, maker in enumerate(envs, 1):
        yield RayWorker(f"ray-{i}", maker, agents, config, runs_dir, actor_options)
