"""Which provider makes the guests, as a person writes it: ``local``, ``remote URL...`` or ``docker ...``.

The command line (``osw-studio run --provider ...``, ``osw-studio eval run --provider ...``) and the
app's settings (``environment.provider``, ``url``, ``docker_options``) both end up here, so they accept
the same words and say the same things about mistakes:

- ``local [network=none|outbound] [desktop=studio|osworld]``: a sandboxed desktop on this machine (the
  default). Its guest reaches no network unless ``network=outbound`` (the internet, never this
  machine's loopback); ``desktop=osworld`` gives it OSWorld's applications (:mod:`~osw_studio.envs.desktops`).
- ``remote URL [URL...]``: running guest servers, one env per URL. Their token is not written here (it
  would show in ``ps`` and the shell history): it is looked up per URL, in the keyring
  (``osw-studio keys set --guest URL``), else ``$OSW_GUEST_TOKEN``.
- ``docker [studio|osworld] [KEY=VALUE...]``: one container per env. ``studio`` (the default) runs the
  image of ``packaging/guest-image/build.sh`` (``desktop=osworld``: its OSWorld desktop variant, built
  with ``build.sh --desktop osworld``); ``osworld`` boots OSWorld's VM and needs ``qcow2=PATH``.
  Keys: see :data:`DOCKER_OPTIONS`.

Examples:
    >>> parse_provider(["docker", "osworld", "qcow2=~/vm/Ubuntu.qcow2", "ram=8G"]).options
    {'mode': 'osworld', 'qcow2': '~/vm/Ubuntu.qcow2', 'vm_environment': {'RAM_SIZE': '8G'}}
    >>> parse_provider(["remote", "http://10.0.0.5:5000/"]).urls
    ('http://10.0.0.5:5000',)
    >>> str(parse_provider(["docker", "image=osw-studio-guest:dev", "screen=1280x800"]))
    'docker studio image=osw-studio-guest:dev screen=1280x800'
    >>> parse_provider(["docker", "desktop=osworld"]).options
    {'mode': 'studio', 'desktop': 'osworld'}
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from osw_studio.core.errors import GuestError
from osw_studio.envs.docker_spec import OSWORLD_PORTS

DOCKER_MODES = ("studio", "osworld")

SYNTAX = (
    "local [network=none|outbound] [desktop=studio|osworld] | remote URL [URL...] "
    "| docker [studio|osworld] [KEY=VALUE...]"
)
"""What ``--provider`` takes, for help texts and error hints."""

_BOTH, _STUDIO, _OSWORLD = DOCKER_MODES, ("studio",), ("osworld",)

DOCKER_OPTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "image": (_BOTH, "the image (default: osw-studio-guest:latest, or happysixd/osworld-docker)"),
    "docker_host": (_BOTH, "the Docker endpoint, e.g. ssh://me@gpu-box (default: $DOCKER_HOST)"),
    "publish_address": (_BOTH, "where ports are published or the guest binds (default 127.0.0.1)"),
    "connect_host": (_BOTH, "where this machine reaches them (forwarded ports)"),
    "ready_timeout": (_BOTH, "seconds to wait for the guest (default 60 studio, 300 osworld)"),
    "screen": (_STUDIO, "the display size, WIDTHxHEIGHT (default: the settings' screen_resolution)"),
    "port": (_STUDIO, "the guest server's port (default: a free one)"),
    "desktop": (_STUDIO, "the applications: studio or osworld (OSWorld's: build.sh --desktop osworld)"),
    "network": (
        _STUDIO,
        "host (this machine's) or none (one of its own, reached through a socket; osworld's default)",
    ),
    "qcow2": (_OSWORLD, "path of OSWorld's Ubuntu.qcow2 on the Docker host (required)"),
    "ports": (_OSWORLD, "fixed host ports by role, e.g. server:5100,vnc:8100"),
    "kvm": (_OSWORLD, "yes, no or auto (default auto: use /dev/kvm when present)"),
    "ram": (_OSWORLD, "the VM's memory (default 4G)"),
    "cpus": (_OSWORLD, "the VM's cores (default 4)"),
    "disk": (_OSWORLD, "the VM's disk size (default 32G)"),
}
"""``docker`` option -> (the modes it applies to, what it means)."""

_VM_ENVIRONMENT = {"ram": "RAM_SIZE", "cpus": "CPU_CORES", "disk": "DISK_SIZE"}
_FIXED_PORTS = ("port", "ports")
"""Options that pin a host port, so two envs cannot share them."""

TokenLookup = Callable[[str], str | None]
"""The token of the guest server at a URL, or None."""


@dataclass(frozen=True)
class EnvChoice:
    """A provider and what it was given.

    Attributes:
        provider: The provider id (``local``, ``remote``, ``docker``, or another registered one).
        urls: ``remote``: the guest servers, one env each.
        options: Options for the provider's ``create`` (``docker``: ``mode`` and typed values).
    """

    provider: str
    urls: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        """The choice as words that :func:`parse_provider` reads back."""
        words = [self.provider, *self.urls]
        for key, value in self.options.items():
            if key == "mode":
                words.append(str(value))
            elif key == "vm_environment":
                names = {v: k for k, v in _VM_ENVIRONMENT.items()}
                words += [f"{names.get(k, k)}={v}" for k, v in value.items()]
            else:
                words.append(f"{key}={_unparse(value)}")
        return " ".join(shlex.quote(w) for w in words)

    @property
    def label(self) -> str:
        """A short name for logs and run stores: ``local``, ``remote``, ``docker:osworld``."""
        return f"docker:{self.options.get('mode', 'studio')}" if self.provider == "docker" else self.provider

    @property
    def network(self) -> str | None:
        """What a ``local`` guest may reach (``none`` or ``outbound``), for people to see; else ``None``.

        >>> parse_provider(["local"]).network, parse_provider(["local", "network=outbound"]).network
        ('none', 'outbound')
        """
        return str(self.options.get("network", "none")) if self.provider == "local" else None

    def env_count(self, envs: int | None = None) -> int:
        """How many envs to start: ``envs``, else one per URL (``remote``), else one.

        >>> parse_provider(["remote", "http://a:5000", "http://b:5000"]).env_count()
        2

        Raises:
            GuestError: If ``envs`` is below 1, or does not match the number of URLs.
        """
        if envs is not None and envs < 1:
            raise GuestError(f"--envs {envs}: give 1 or more envs")
        if self.provider == "remote":
            if envs is not None and envs != len(self.urls):
                raise GuestError(
                    f"--envs {envs} but {len(self.urls)} guest URLs",
                    hint="give one URL per env, or leave out --envs",
                )
            return len(self.urls)
        return envs or 1

    def env_options(
        self,
        envs: int | None = None,
        *,
        screen: tuple[int, int] | None = None,
        token: TokenLookup | None = None,
    ) -> list[dict[str, Any]]:
        """One option set per env, for the provider's ``create``.

        Args:
            envs: How many envs (see :meth:`env_count`).
            screen: The screen size of guests this machine starts (``local``, ``docker studio``),
                unless the choice names one.
            token: Looks up a guest server's token (``remote``).

        >>> parse_provider(["remote", "http://a:5000"]).env_options(token=lambda url: "t0k")
        [{'url': 'http://a:5000', 'token': 't0k'}]
        >>> parse_provider(["docker"]).env_options(2, screen=(1280, 800))
        [{'mode': 'studio', 'screen': (1280, 800)}, {'mode': 'studio', 'screen': (1280, 800)}]

        Raises:
            GuestError: If the count is wrong, or the options pin a port that several envs would share.
        """
        count = self.env_count(envs)
        if self.provider == "remote":
            return [{"url": url, "token": token(url) if token else None} for url in self.urls]
        pinned = [k for k in _FIXED_PORTS if self.options.get(k)]
        if count > 1 and pinned:
            raise GuestError(
                f"{count} docker envs cannot share the fixed {pinned[0]}={_unparse(self.options[pinned[0]])}",
                hint=f"leave out {pinned[0]}= (each env then picks free ports), or use --envs 1",
            )
        base = dict(self.options)
        sized = self.provider == "local" or (self.provider == "docker" and base.get("mode") == "studio")
        if screen is not None and sized:
            base.setdefault("screen", screen)
        return [dict(base) for _ in range(count)]


def parse_provider(words: Sequence[str]) -> EnvChoice:
    """Read ``--provider`` words (see the module docstring) into an :class:`EnvChoice`.

    >>> parse_provider(["local"])
    EnvChoice(provider='local', urls=(), options={})
    >>> str(parse_provider(["local", "network=outbound"]))
    'local network=outbound'
    >>> parse_provider(["docker", "osworld", "qcow2=/vm/U.qcow2", "ports=server:5100", "kvm=no"]).options
    {'mode': 'osworld', 'qcow2': '/vm/U.qcow2', 'ports': {'server': 5100}, 'kvm': False}
    >>> parse_provider(["docker", "qcow2=/vm/U.qcow2"])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    osw_studio.core.errors.GuestError: qcow2= is an option of docker osworld, not of docker studio ...

    Raises:
        GuestError: Saying which word is wrong and what the syntax is.
    """
    from osw_studio.envs.registry import PROVIDERS

    if not words:
        raise GuestError("no provider given", hint=f"use --provider {SYNTAX}")
    kind, *rest = words
    kind = kind.strip().lower()
    if kind == "local":
        return EnvChoice("local", options=_local_options(words, rest))
    if kind == "remote":
        if not rest:
            raise _bad(words, "remote needs the URL of a running guest server, e.g. http://10.0.0.5:5000")
        return EnvChoice("remote", urls=tuple(_url(w) for w in rest))
    if kind == "docker":
        return EnvChoice("docker", options=_docker_options(words, rest))
    if kind in PROVIDERS:  # a provider registered by a plugin: its options stay strings
        return EnvChoice(kind, options=dict(_pair(words, w) for w in rest))
    raise GuestError(
        f"unknown provider {kind!r} in --provider {' '.join(words)}",
        hint=f"use --provider {SYNTAX}",
    )


def choice_from_settings(
    provider: str,
    url: str | None = None,
    docker_options: str | None = None,
    network: str = "none",
    desktop: str = "studio",
) -> EnvChoice:
    """The choice the app's settings make (``environment.provider``, ``url``, ``docker_options``, ...).

    ``network`` is the local sandbox's (``environment.network``); ``desktop`` (``environment.desktop``)
    is the local sandbox's applications, or the studio image's variant with the docker provider.

    ``docker_options`` are the words after ``docker`` on the command line, in one string.

    >>> choice_from_settings("docker", docker_options="osworld qcow2='/vm/my disk.qcow2'").options["qcow2"]
    '/vm/my disk.qcow2'
    >>> choice_from_settings("remote", "http://h:5000").urls
    ('http://h:5000',)
    >>> choice_from_settings("local", network="outbound").options
    {'network': 'outbound'}
    >>> str(choice_from_settings("docker", desktop="osworld"))
    'docker studio desktop=osworld'

    Raises:
        GuestError: If the settings are incomplete or their docker options are wrong.
    """
    if provider == "remote":
        if not (url or "").strip():
            raise GuestError(
                "the remote provider needs a guest server URL", hint="set it in Settings > Environment"
            )
        return parse_provider(["remote", url or ""])
    if provider == "docker":
        try:
            words = shlex.split(docker_options or "")
        except ValueError as exc:
            raise GuestError(
                f"cannot read the docker options {docker_options!r}: {exc}",
                where="Settings > Environment > Docker options",
                hint="close the quote",
            ) from None
        return parse_provider(with_desktop(["docker", *words], desktop))
    if provider == "local":
        words = [f"network={network}"] if network != "none" else []
        words += [f"desktop={desktop}"] if desktop != "studio" else []
        return parse_provider(["local", *words])
    return parse_provider([provider])


def _local_options(words: Sequence[str], rest: Sequence[str]) -> dict[str, Any]:
    """``local``'s options: ``network=none|outbound`` and ``desktop=studio|osworld`` (defaults left out)."""
    from osw_studio.envs.desktops import DESKTOPS
    from osw_studio.envs.sandbox import NETWORK_MODES

    options: dict[str, Any] = {}
    for word in rest:
        key, value = _pair(words, word)
        if key == "desktop":
            if value not in DESKTOPS:
                raise _bad(words, f"desktop={value}: use desktop={' or desktop='.join(DESKTOPS)}")
            if value != "studio":
                options["desktop"] = value
            continue
        if key != "network":
            raise _bad(
                words, f"local takes only network=none|outbound and desktop=studio|osworld, not {key}="
            )
        if value not in NETWORK_MODES:
            raise _bad(words, f"network={value}: use network=none (the default) or network=outbound")
        if value != "none":
            options["network"] = value
    return options


def _bad(words: Sequence[str], why: str) -> GuestError:
    return GuestError(f"cannot use --provider {' '.join(words)}: {why}", hint=f"use --provider {SYNTAX}")


def _url(word: str) -> str:
    url = word.strip().rstrip("/")
    if not re.fullmatch(r"https?://[^/\s]+(/\S*)?", url):
        raise GuestError(
            f"{word!r} is not a guest server URL",
            hint="write it as http://HOST:PORT, e.g. http://10.0.0.5:5000",
        )
    return url


def _pair(words: Sequence[str], word: str) -> tuple[str, str]:
    key, eq, value = word.partition("=")
    if not eq or not key:
        raise _bad(words, f"{word!r} is not KEY=VALUE")
    return key.strip().lower(), value


def _docker_options(words: Sequence[str], rest: Sequence[str]) -> dict[str, Any]:
    mode = "studio"
    if rest and rest[0].lower() in DOCKER_MODES:
        mode, rest = rest[0].lower(), rest[1:]
    pairs = [_pair(words, w) for w in rest]
    for key, value in pairs:
        if key == "mode":
            if value.lower() not in DOCKER_MODES:
                raise _bad(words, f"mode={value} is not one of {', '.join(DOCKER_MODES)}")
            mode = value.lower()
    options: dict[str, Any] = {"mode": mode}
    for key, value in pairs:
        if key == "mode":
            continue
        if key not in DOCKER_OPTIONS:
            raise _bad(words, f"unknown docker option {key}= (known: {', '.join(DOCKER_OPTIONS)})")
        modes, _ = DOCKER_OPTIONS[key]
        if mode not in modes:
            raise GuestError(
                f"{key}= is an option of docker {modes[0]}, not of docker {mode}",
                hint=f"write --provider docker {modes[0]} ... {key}=...",
            )
        if key in _VM_ENVIRONMENT:
            options.setdefault("vm_environment", {})[_VM_ENVIRONMENT[key]] = _text(key, value)
        else:
            options[key] = _CONVERT.get(key, _text)(key, value)
    if mode == "osworld" and not options.get("qcow2"):
        raise GuestError(
            "docker osworld needs the VM disk: qcow2=PATH of OSWorld's Ubuntu.qcow2",
            hint="e.g. docker osworld qcow2=~/vm/Ubuntu.qcow2; get Ubuntu.qcow2 from "
            "huggingface.co/datasets/xlangai/ubuntu_osworld",
        )
    return options


def _text(key: str, value: str) -> str:
    if not value.strip():
        raise GuestError(f"{key}= has no value", hint=f"write {key}=VALUE")
    return value.strip()


def _int(key: str, value: str, low: int = 0, high: int = 65535) -> int:
    try:
        number = int(value)
    except ValueError:
        number = -1
    if not low <= number <= high:
        raise GuestError(f"{key}={value} is not a whole number from {low} to {high}")
    return number


def _screen(key: str, value: str) -> tuple[int, int]:
    match = re.fullmatch(r"\s*(\d+)\s*[xX×]\s*(\d+)\s*", value)
    if not match or min(int(match[1]), int(match[2])) <= 0:
        raise GuestError(
            f"{key}={value} is not a screen size", hint=f"write {key}=WIDTHxHEIGHT, e.g. 1280x800"
        )
    return int(match[1]), int(match[2])


def _ports(key: str, value: str) -> dict[str, int]:
    ports: dict[str, int] = {}
    for item in filter(None, (p.strip() for p in value.split(","))):
        role, colon, port = item.partition(":")
        if not colon or role not in OSWORLD_PORTS:
            raise GuestError(
                f"{key}={value}: {item!r} is not ROLE:PORT",
                hint=f"roles: {', '.join(OSWORLD_PORTS)}, e.g. ports=server:5100,vnc:8100",
            )
        ports[role] = _int(f"{key} {role}", port, 1)
    return ports


def _kvm(key: str, value: str) -> bool | None:
    word = value.strip().lower()
    if word in {"yes", "true", "1", "on"}:
        return True
    if word in {"no", "false", "0", "off"}:
        return False
    if word == "auto":
        return None
    raise GuestError(f"{key}={value} is not yes, no or auto")


def _seconds(key: str, value: str) -> float:
    try:
        seconds = float(value)
    except ValueError:
        seconds = 0.0
    if not seconds > 0:
        raise GuestError(f"{key}={value} is not a number of seconds above 0")
    return seconds


def _one_of(*choices: str) -> Callable[[str, str], str]:
    def convert(key: str, value: str) -> str:
        word = value.strip().lower()
        if word not in choices:
            raise GuestError(f"{key}={value} is not one of {', '.join(choices)}")
        return word

    return convert


_CONVERT: dict[str, Callable[[str, str], Any]] = {
    "desktop": _one_of("studio", "osworld"),
    "network": _one_of("host", "none"),
    "screen": _screen,
    "port": _int,
    "ports": _ports,
    "kvm": _kvm,
    "ready_timeout": _seconds,
}


def _unparse(value: Any) -> str:
    """A typed option value as the word it was written as.

    >>> _unparse((1280, 800)), _unparse({"server": 5100, "vnc": 8100}), _unparse(None), _unparse(False)
    ('1280x800', 'server:5100,vnc:8100', 'auto', 'no')
    """
    if isinstance(value, tuple):
        return "x".join(str(v) for v in value)
    if isinstance(value, dict):
        return ",".join(f"{k}:{v}" for k, v in value.items())
    if isinstance(value, bool) or value is None:
        return {True: "yes", False: "no", None: "auto"}[value]
    return f"{value:g}" if isinstance(value, float) else str(value)


def with_desktop(words: Sequence[str], desktop: str | None) -> list[str]:
    """``--provider`` words with ``desktop=`` added (``--desktop``, or settings).

    It applies to the guests this machine makes (``local``, ``docker`` with our image); words that
    already name a desktop, and other providers, are left as they are.

    >>> with_desktop(["local"], "osworld"), with_desktop(["local", "desktop=studio"], "osworld")
    (['local', 'desktop=osworld'], ['local', 'desktop=studio'])
    >>> with_desktop(["remote", "http://h:5000"], "osworld"), with_desktop(["local"], "studio")
    (['remote', 'http://h:5000'], ['local'])
    >>> with_desktop(["docker"], "osworld"), with_desktop(["docker", "osworld", "qcow2=/q"], "osworld")
    (['docker', 'desktop=osworld'], ['docker', 'osworld', 'qcow2=/q'])
    """
    words = list(words)
    ours = words[:1] == ["local"] or (words[:1] == ["docker"] and "osworld" not in words[1:2])
    if not ours or not desktop or desktop == "studio":
        return words
    if any(word.startswith("desktop=") for word in words[1:]):
        return words
    return [*words, f"desktop={desktop}"]
