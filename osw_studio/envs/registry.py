"""Env providers, registered by id with lazy entry points (as Gymnasium's registry does).

A provider is any class whose instances have ``async create(**options) -> Env``. Entry points are
``"module:Class"`` strings, imported only when the provider is first used, so listing providers costs
nothing.

Examples:
    >>> sorted(PROVIDERS)
    ['docker', 'local', 'remote']
    >>> load_provider("local").__name__
    'LocalProvider'
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol

from osw_studio.core.errors import GuestError
from osw_studio.envs.base import Env

DEFAULT_PROVIDER = "local"

PROVIDERS: dict[str, str] = {
    "local": "osw_studio.envs.local:LocalProvider",
    "remote": "osw_studio.envs.remote:RemoteProvider",
    "docker": "osw_studio.envs.docker:DockerProvider",
}
"""Provider id -> entry point."""

RESERVED: dict[str, str] = {}
"""Ids that are planned but not available yet, with what to use instead."""


class Provider(Protocol):
    """What creates envs."""

    async def create(self, **options: Any) -> Env:
        """Start or connect to a guest and return its env."""
        ...


def register(provider_id: str, entry_point: str) -> None:
    """Register a provider under ``provider_id`` (``"package.module:Class"``), replacing any before it.

    >>> register("example", "osw_studio.envs.remote:RemoteProvider")
    >>> load_provider("example").__name__
    'RemoteProvider'
    >>> del PROVIDERS["example"]
    """
    if ":" not in entry_point:
        raise ValueError(f"entry point {entry_point!r} must look like 'package.module:Class'")
    PROVIDERS[provider_id] = entry_point


def load_provider(provider_id: str) -> type[Any]:
    """The provider class registered under ``provider_id``.

    Raises:
        GuestError: If no provider has that id.
    """
    if provider_id in RESERVED and provider_id not in PROVIDERS:
        raise GuestError(RESERVED[provider_id], where=f"provider {provider_id!r}")
    try:
        entry_point = PROVIDERS[provider_id]
    except KeyError:
        raise GuestError(
            f"unknown env provider {provider_id!r}",
            hint=f"choose one of: {', '.join(sorted(PROVIDERS))}",
        ) from None
    module_name, _, attr = entry_point.partition(":")
    cls: type[Any] = getattr(importlib.import_module(module_name), attr)
    return cls


async def make_env(provider: str = DEFAULT_PROVIDER, **options: Any) -> Env:
    """Create an env with the provider registered as ``provider``; ``options`` go to its ``create``.

    Examples: ``await make_env()`` starts a local sandbox; ``await make_env("remote",
    url="http://10.0.0.5:5000")`` connects to a running guest server.

    Raises:
        GuestError: If the provider is unknown or the guest cannot be started or reached.
    """
    instance: Provider = load_provider(provider)()
    return await instance.create(**options)
