"""The settings file as models: the common OSWorld-style skeleton plus named profiles.

The file accepts, verbatim, the skeleton most OSWorld harnesses share::

    {"model_provider": {"base_url", "api_key", "model", "timeout", "max_retries"},
     "evaluation": {"benchmark", "task_suite", "max_steps", "screen_resolution", "action_space",
                    "save_screenshots", "output_dir"},
     "agent": {"observation_type", "history_window", "temperature", "max_tokens"}}

and adds ``environment`` (which provider makes the guest: ``local``, ``remote`` with its URL, or
``docker``; the screen size stays in ``evaluation.screen_resolution``), ``profiles`` (named endpoints:
base URL, model, agent kind, coordinate mode, sampling defaults) and ``active_profile``. Unknown keys
are kept, so a file written by another tool survives a save.
An ``api_key`` in the file is read (and the user told to move it into the keyring) but never written.

Sections are frozen; change one by assigning a new value (``settings.agent = settings.agent.model_copy(
update={...})``), which emits :attr:`Settings.changed` with the field name, so views stay in sync.

Examples:
    >>> s = Settings.model_validate({"model_provider": {"base_url": "http://h:8000/v1/", "model": "m"},
    ...                              "evaluation": {"screen_resolution": [1280, 720]}})
    >>> s.model_provider.base_url, s.evaluation.screen_resolution
    ('http://h:8000/v1', (1280, 720))
    >>> p = s.resolve_profile()
    >>> p.name, p.model, p.agent
    ('default', 'm', 'osworld')
    >>> seen = []
    >>> _ = s.changed.connect(seen.append)
    >>> s.set_profile("tars", Profile(model="ui-tars-1.5-7b", agent="uitars"))
    >>> seen, s.resolve_profile("tars").base_url
    (['profiles'], 'http://h:8000/v1')
    >>> s.environment.provider, Settings.model_validate({"environment": {"url": " "}}).environment.url
    ('local', None)
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, cast

from psygnal import SignalInstance
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    field_serializer,
    field_validator,
)

from osw_studio.actions.coords import CoordMode
from osw_studio.core import agent_specs
from osw_studio.core.budget import RunBudget
from osw_studio.core.errors import SettingsError
from osw_studio.core.price import Price
from osw_studio.core.task import DesktopName as DesktopName
from osw_studio.settings.url import normalize_base_url
from osw_studio.settings.vnc import format_vnc_address, parse_vnc_address

_T = TypeVar("_T")

DEFAULT_PROFILE = "default"
"""The profile made of the top-level ``model_provider`` and ``agent`` sections."""

ObservationType = Literal["screenshot", "a11y_tree", "screenshot_a11y_tree", "som"]
EvaluatorKind = Literal["osw-studio", "osworld"]
"""Who scores: our metrics, or OSWorld's own functions in the side environment (``--evaluator``)."""
ActionSpace = Literal["pyautogui", "computer_13", "uitars"]


def _known_agent(value: str) -> str:
    if value not in agent_specs.BY_ID:
        raise ValueError(f"unknown agent {value!r}: one of {', '.join(agent_specs.BY_ID)}")
    return value


AgentKind = Annotated[str, AfterValidator(_known_agent)]
"""An agent id of the spec table (:data:`osw_studio.core.agent_specs.SPECS`)."""
PromptSource = Literal["own", "reference"]
SafetyChecks = Literal["acknowledge", "fail"]
"""What an unattended run does with a computer-use model's safety check (a pending safety check of OpenAI's
computer tool): ``acknowledge`` it and go on, as OSWorld does, or ``fail`` the task. Attended runs ask."""
ParseExhausted = Literal["error", "done", "fail"]
"""What a step does when no reply of it could be parsed: a step ``error``, or end as ``done`` / ``fail``."""
"""Where prompt text comes from: ``own`` (OSW Studio's templates) or ``reference`` (read at run time from
OSWorld's installed ``desktop-env`` package, for leaderboard-faithful requests)."""
ProviderKind = Literal["local", "remote", "docker"]
NetworkMode = Literal["none", "outbound"]
"""What the local sandbox's guest may reach: nothing, or the internet (never this machine's loopback)."""
CoordinateMode = CoordMode
"""How a model writes coordinates (:mod:`osw_studio.actions.coords`): ``abs`` screen pixels, ``resized``
pixels of the resized screenshot, ``smart`` pixels of the Qwen smart-resized image (UI-TARS 1.5,
DART-GUI, OpenCUA-7B/32B), ``rel1000`` 0-1000 (UI-TARS 1.0), ``rel999`` 0-999 (OSWorld's Qwen3-VL agent),
``norm`` 0-1."""

_MODE_ALIASES = {
    "absolute": "abs",
    "pixels": "abs",
    "smart_resize": "smart",
    "relative_1000": "rel1000",
    "relative": "norm",
    "normalized": "norm",
}

_PROFILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)


class ModelProvider(_Section):
    """The ``model_provider`` section: the default endpoint."""

    base_url: str = "https://api.openai.com/v1"
    api_key: SecretStr | None = Field(default=None, exclude=True, repr=False)
    model: str = "gpt-4o"
    timeout: float = Field(default=120.0, gt=0)
    max_retries: int = Field(default=3, ge=0, le=20)

    @field_validator("base_url")
    @classmethod
    def _normalize(cls, value: str) -> str:
        return _base_url(value)


def _base_url(value: str) -> str:
    """Normalize a base URL in a validator.

    The error becomes a ValueError, so pydantic reports it with the JSON path of the value.
    """
    try:
        return normalize_base_url(value)
    except SettingsError as exc:
        raise ValueError(f"{exc.message} ({exc.hint})") from None


def _parse_resolution(value: Any) -> Any:
    if isinstance(value, str):
        match = re.fullmatch(r"\s*(\d+)\s*[xX×,]\s*(\d+)\s*", value)
        if not match:
            raise ValueError("write the resolution as WIDTHxHEIGHT, e.g. 1920x1080")
        return (int(match.group(1)), int(match.group(2)))
    if isinstance(value, dict):
        return (value.get("width"), value.get("height"))
    return value


class Evaluation(_Section):
    """The ``evaluation`` section: what to run and where results go."""

    benchmark: str = "osworld"
    task_suite: str | None = None
    max_steps: int = Field(default=15, ge=1, le=1000)
    screen_resolution: tuple[int, int] = (1920, 1080)
    action_space: ActionSpace = "pyautogui"
    save_screenshots: bool = True
    """Read by nothing: every run keeps its screenshots (the key is accepted so older files still load)."""
    output_dir: str | None = None
    evaluator: EvaluatorKind = Field(
        default="osw-studio",
        description="who scores: our metrics, or OSWorld's own functions in the side environment",
    )
    reference_python: str | None = Field(
        default=None, description="the side environment's python for evaluator osworld (default .venv-ref)"
    )
    reference_osworld: str | None = Field(
        default=None,
        description="an OSWorld checkout (a folder holding desktop_env/ and mm_agents/) whose evaluator code "
        "evaluator osworld runs and whose agents' prompts presets send (default: the desktop-env package "
        "make setup installed in .venv-ref; agents newer than desktop-env 1.0.2, as DART-GUI's, need one)",
    )

    @field_validator("screen_resolution", mode="before")
    @classmethod
    def _resolution(cls, value: Any) -> Any:
        return _parse_resolution(value)

    @field_validator("screen_resolution")
    @classmethod
    def _positive(cls, value: tuple[int, int]) -> tuple[int, int]:
        if min(value) <= 0:
            raise ValueError("width and height must be positive")
        return value

    @field_serializer("screen_resolution")
    def _dump_resolution(self, value: tuple[int, int]) -> str:
        return f"{value[0]}x{value[1]}"


class EnvironmentSettings(_Section):
    """The ``environment`` section: where the app's guest comes from.

    Attributes:
        provider: ``local`` (an Xvfb sandbox on this machine), ``remote`` (a running guest server at
            ``url``) or ``docker`` (a container started on this machine).
        url: The guest server of the ``remote`` provider, e.g. ``http://10.0.0.5:5000``. Its token is
            not kept here but in the keyring (``osw-studio keys set --guest URL``).
        docker_options: The ``docker`` provider's words as after ``--provider docker`` on the command
            line, e.g. ``osworld qcow2=~/vm/Ubuntu.qcow2`` (empty: the studio image, its defaults).
        vnc: The guest's VNC server, ``HOST:PORT`` or ``PORT`` (on the guest's host), for a viewer of
            guests without a live stream (OSWorld's). Its password is kept in the keyring
            (``osw-studio keys set --vnc HOST:PORT``).
        network: The ``local`` sandbox's network: ``none`` (the default; the guest reaches nothing,
            not even this machine) or ``outbound`` (the internet, for tasks that browse; still not
            this machine's loopback services nor its sockets).
        keep_desktop: Start each run in the app on the desktop the last one left (chained manual work)
            instead of a fresh one (unset, the default: a new local sandbox, a recreated container).
        desktop: The guest's applications: ``studio`` (the bundled tasks') or ``osworld`` (OSWorld's:
            LibreOffice, GIMP, VLC, Thunderbird, Chromium; make setup-osworld for the ``local`` sandbox,
            ``packaging/guest-image/build.sh --desktop osworld`` for the ``docker`` provider's image).
    """

    provider: ProviderKind = "local"
    url: str | None = None
    docker_options: str | None = None
    vnc: str | None = None
    network: NetworkMode = "none"
    keep_desktop: bool | None = None
    desktop: DesktopName = "studio"

    @field_validator("network", mode="before")
    @classmethod
    def _default_network(cls, value: Any) -> Any:
        return value or "none"

    @field_validator("provider", mode="before")
    @classmethod
    def _default_provider(cls, value: Any) -> Any:
        return value or "local"  # files written before the field was typed may hold null

    @field_validator("url")
    @classmethod
    def _strip_url(cls, value: str | None) -> str | None:
        value = (value or "").strip().rstrip("/")
        return value or None

    @field_validator("docker_options")
    @classmethod
    def _strip_options(cls, value: str | None) -> str | None:
        return (value or "").strip() or None

    @field_validator("vnc", mode="before")
    @classmethod
    def _check_vnc(cls, value: Any) -> Any:
        if not isinstance(value, int | str):
            return value  # None, or a wrong type that the str check names
        text = str(value).strip()
        return format_vnc_address(*parse_vnc_address(text)) if text else None  # ValueError: the mistake


class AssetSettings(_Section):
    """The ``assets`` section: the cache of files that tasks download (``osw-studio assets``).

    Attributes:
        cache_dir: The asset cache folder (default: ``assets`` in the user cache dir, or
            ``OSW_ASSET_CACHE``).
        mirror: A URL prefix to fetch from instead of the files' own hosts: ``https://host/path`` is
            fetched as ``<mirror>/host/path``.
        fetch_missing: Whether a run downloads a file missing from the cache (default: no; the setup
            fails with the command that fetches it, so runs never depend on the network for files).
        allowed_hosts: Host names the host fetches task files from even when they resolve to this
            machine, its network or a link-local address (a mirror of your own); every other host
            must resolve to public addresses only (the mirror's own host is allowed too).
        max_download_mb: The largest file a task may make the host download, in MiB.
    """

    cache_dir: str | None = None
    mirror: str | None = None
    fetch_missing: bool = False
    allowed_hosts: list[str] = Field(default_factory=list)
    max_download_mb: int = Field(default=2048, ge=1, le=1 << 20)

    @field_validator("mirror")
    @classmethod
    def _check_mirror(cls, value: str | None) -> str | None:
        value = (value or "").strip()
        if value and not value.startswith(("http://", "https://")):
            raise ValueError("the mirror must be an http:// or https:// URL prefix")
        return value or None


class AgentSettings(_Section):
    """The ``agent`` section: defaults of the prompt agents."""

    observation_type: ObservationType = "screenshot"
    history_window: int = Field(default=3, ge=0, le=50)
    temperature: float = Field(default=0.5, ge=0, le=2)
    max_tokens: int = Field(default=1500, ge=1)
    top_p: float | None = Field(default=0.9, gt=0, le=1)


class Grounder(_Section):
    """A profile's second endpoint, for agents where one model plans and another locates the target.

    Attributes:
        base_url: The grounding model's endpoint (default: the profile's).
        model: The model id there (default: the preset's, ``jedi-7b`` for the ``jedi-7b`` preset).
        api_key_env: The name of an environment variable holding its key (none: it is sent no key).
    """

    base_url: str | None = None
    model: str | None = None
    api_key_env: str | None = None

    @field_validator("base_url")
    @classmethod
    def _normalize(cls, value: str | None) -> str | None:
        return None if value is None else _base_url(value)


class Profile(_Section):
    """A named endpoint and how to use it. Unset fields fall back to the top-level sections.

    Attributes:
        base_url: The endpoint (default: ``model_provider.base_url``).
        model: The model id at that endpoint.
        agent: Which agent drives it: an id of the spec table (:data:`osw_studio.core.agent_specs.SPECS`:
            ``osworld``, ``uitars``, ``qwen3vl``, ``opencua``, ``replay``, ``human``, ...).
        coordinate_mode: How the model writes coordinates (UI-TARS and DART-GUI differ).
        api_key_env: The name of an environment variable holding this profile's key.
        api_key: A key written in the file (read, never written back; move it with ``keys import``).
        screenshot_size: Resize screenshots to this ``(width, height)`` before sending (none: as is).
        image_format: ``png`` or ``jpeg`` for screenshots sent to the model.
        logprobs: Ask the endpoint for per-token logprobs (and compute a step entropy).
        preset: A built-in model setup (:data:`PRESETS`) whose values fill the fields left unset. A
            profile naming neither ``preset`` nor ``agent`` whose model is a known one (:data:`MODEL_PRESETS`:
            ``dart-gui-7b``, ``ui-tars-1.5-7b``, ``opencua-7b``, ``qwen3-vl-...``) gets that model's preset.
        frequency_penalty: Sent with each request when set (OSWorld's UI-TARS agent sends 1).
        prompts: ``own`` prompts, or ``reference``: OSWorld's own, read from its installed package.
        call_user_tries: In unattended runs, how many ``call_user`` hand-backs count as a wait before the
            episode fails (UI-TARS: 3; 0 fails at the first); attended runs ask the person instead.
        parse_tries: How many times one step asks the model while its replies cannot be parsed (1: never
            asks again; OSWorld's UI-TARS agent: 3).
        reask_temperature: The temperature of the calls after an unparsable reply (default: unchanged;
            OSWorld's UI-TARS agent samples at 1).
        reask_min_temperature: A floor for those calls: they sample at ``max(floor, temperature)``, the
            temperature being ``reask_temperature`` or else the profile's (OSWorld's OpenCUA agent: 0.2,
            so a user's 0.7 stays 0.7 and the default 0 becomes 0.2; with no temperature set, the floor).
        parse_exhausted: What the step does when no reply could be parsed: ``error`` (a step error, the
            next step goes on), ``done`` (OSWorld's UI-TARS agent ends the episode as done) or ``fail``.
        history_texts: How many past replies the request keeps (none: every one; agents that keep a
            separate count of replies and screenshots, as DART-GUI's: 35 replies, ``history_window``
            screenshots).
        reasoning_effort: The computer-use agents' reasoning effort (GPT-5.4: ``xhigh`` as OSWorld runs it).
        safety_checks: What an unattended run does with a safety check: ``acknowledge`` or ``fail``.
        settle_seconds: A fixed wait after each action before the next screenshot, as OSWorld's run
            scripts sleep (``run_multienv_dart_gui.py``: 5 s); none: wait until the screen is stable.
        grounder: The grounding model of a planner-plus-grounder agent (``jedi``): :class:`Grounder`.
    """

    base_url: str | None = None
    model: str | None = None
    agent: AgentKind = "osworld"
    coordinate_mode: CoordinateMode | None = None
    action_space: ActionSpace | None = None
    observation_type: ObservationType | None = None
    history_window: int | None = Field(default=None, ge=0, le=50)
    temperature: float | None = Field(default=None, ge=0, le=2)
    top_p: float | None = Field(default=None, gt=0, le=1)
    max_tokens: int | None = Field(default=None, ge=1)
    timeout: float | None = Field(default=None, gt=0)
    max_retries: int | None = Field(default=None, ge=0, le=20)
    api_key_env: str | None = None
    api_key: SecretStr | None = Field(default=None, exclude=True, repr=False)
    screenshot_size: tuple[int, int] | None = None
    image_format: Literal["png", "jpeg"] | None = None
    logprobs: bool = False
    preset: str | None = None
    frequency_penalty: float | None = Field(default=None, ge=-2, le=2)
    prompts: PromptSource | None = None
    call_user_tries: int | None = Field(default=None, ge=0, le=100)
    parse_tries: int | None = Field(default=None, ge=1, le=20)  # 20: GUI-Owl-1.5, as OSWorld
    reask_temperature: float | None = Field(default=None, ge=0, le=2)
    reask_min_temperature: float | None = Field(default=None, ge=0, le=2)
    parse_exhausted: ParseExhausted | None = None
    history_texts: int | None = Field(default=None, ge=0, le=1000)
    price: Price | None = None
    """Overrides the settings' ``prices`` entry for this profile's model (per million tokens)."""
    budget: RunBudget | None = None
    """The most one run may spend (``tokens``, ``cost``, ``seconds``); past it the run ends ``budget``."""
    loop_repeats: int | None = Field(default=None, ge=0, le=1000)
    """The loop guard: the same actions on an unchanged screen this many times ends the run ``stuck``
    (attended: holds it for the person); 0 switches it off; default 5."""
    loop_still_steps: int | None = Field(default=None, ge=0, le=1000)
    """The loop guard: this many steps in a row with no change on the screen is stuck; 0: off; default 10."""
    reasoning_effort: Literal["none", "minimal", "low", "medium", "high", "xhigh"] | None = None
    safety_checks: SafetyChecks | None = None
    settle_seconds: float | None = Field(default=None, ge=0, le=120)
    grounder: Grounder | None = None

    @field_validator("base_url")
    @classmethod
    def _normalize(cls, value: str | None) -> str | None:
        return None if value is None else _base_url(value)

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, value: str | None) -> str | None:
        if value is not None and value not in PRESETS:
            raise ValueError(f"unknown preset {value!r}; one of {', '.join(PRESETS)}")
        return value

    @field_validator("coordinate_mode", mode="before")
    @classmethod
    def _mode(cls, value: Any) -> Any:
        return _MODE_ALIASES.get(value, value) if isinstance(value, str) else value

    @field_validator("screenshot_size", mode="before")
    @classmethod
    def _size(cls, value: Any) -> Any:
        return None if value is None else _parse_resolution(value)

    @field_serializer("screenshot_size")
    def _dump_size(self, value: tuple[int, int] | None) -> str | None:
        return None if value is None else f"{value[0]}x{value[1]}"


class ResolvedProfile(BaseModel):
    """A profile with every default filled in: what an agent and the model client need."""

    model_config = ConfigDict(frozen=True)

    name: str
    base_url: str
    model: str
    agent: AgentKind
    coordinate_mode: CoordinateMode
    action_space: ActionSpace
    observation_type: ObservationType
    history_window: int
    temperature: float
    top_p: float | None
    max_tokens: int
    timeout: float
    max_retries: int
    api_key_env: str | None = None
    file_api_key: SecretStr | None = Field(default=None, repr=False)
    screenshot_size: tuple[int, int] | None = None
    image_format: Literal["png", "jpeg"] = "png"
    logprobs: bool = False
    preset: str | None = None
    frequency_penalty: float | None = None
    prompts: PromptSource = "own"
    call_user_tries: int = 0
    parse_tries: int = 1
    reask_temperature: float | None = None
    reask_min_temperature: float | None = None
    parse_exhausted: ParseExhausted = "error"
    history_texts: int | None = None
    reference_osworld: str | None = None
    settle_seconds: float | None = None
    grounder: Grounder | None = None
    """The grounding endpoint, its ``base_url`` and ``model`` filled in (None: the agent has none)."""
    preset_inferred: bool = False
    """Whether ``preset`` was chosen from the model's name (:data:`MODEL_PRESETS`), not written."""
    price: Price | None = None
    """The model's price: the profile's own, else the settings' ``prices`` entry; None when unknown."""
    budget: RunBudget | None = None
    loop_repeats: int = 5
    loop_still_steps: int = 10
    reasoning_effort: str | None = None
    safety_checks: SafetyChecks = "acknowledge"


_UITARS_REASK: dict[str, Any] = {"parse_tries": 3, "reask_temperature": 1.0, "parse_exhausted": "done"}
"""OSWorld's UI-TARS agent asks up to three times while a reply cannot be parsed, the later calls at
temperature 1, and then ends the episode as done (``uitars15_v1.py``). PromptAgent never asks again."""

PRESETS: dict[str, Profile] = {
    # OSWorld's PromptAgent (mm_agents/agent.py) with its class defaults: GPT-4o and other API models.
    "osworld": Profile(
        agent="osworld", coordinate_mode="abs", history_window=3, temperature=0.5, top_p=0.9,
        max_tokens=1500, prompts="reference",
    ),
    # UI-TARS-1.5 through OSWorld's mm_agents/uitars15_v1.py (model_type qwen25vl, infer_mode
    # qwen25vl_normal) with its run script's defaults.
    "uitars-1.5": Profile(
        agent="uitars", coordinate_mode="smart", history_window=5, temperature=1.0, top_p=0.9,
        max_tokens=500, frequency_penalty=1.0, prompts="reference", call_user_tries=3,
        **_UITARS_REASK,
    ),
    # DART-GUI-7B through OSWorld's own mm_agents/dart_gui_agent.py in its dart_mode, with the defaults
    # of scripts/python/run_multienv_dart_gui.py: temperature 0, top_p 1.0, 500 tokens, frequency
    # penalty 1, five screenshots and 35 replies of history, pixels of the smart-resized screenshot
    # (model_type qwen25vl), 5 s after each action. It never asks again: a reply it cannot read ends
    # the task as done, and a call_user fails it. (Its 15 steps are evaluation.max_steps' default.)
    "dart-gui-7b": Profile(
        agent="dart", coordinate_mode="smart", history_window=5, history_texts=35, temperature=0.0,
        top_p=1.0, max_tokens=500, frequency_penalty=1.0, prompts="reference", call_user_tries=0,
        parse_tries=1, parse_exhausted="done", settle_seconds=5.0,
    ),
    # UI-TARS-1.5 through OSWorld's mm_agents/uitars15_v2.py with run_multienv_uitars15_v2.py's defaults
    # (model_type doubao: thousandths of the screen; temperature 0, no top_p: the agent sends none;
    # 3000 tokens, no thinking, language Chinese; five screenshots). A reply it cannot read is asked
    # again with the same request, three calls in all, then the task fails.
    "uitars-1.5-v2": Profile(
        agent="uitars15v2", coordinate_mode="rel1000", history_window=5, temperature=0.0,
        max_tokens=3000, prompts="reference", call_user_tries=0, parse_tries=3, parse_exhausted="fail",
    ),
    # UI-TARS 1.0 and Qwen2-VL models write 0-1000 on both axes (model_type qwen2vl).
    "uitars-1.0": Profile(
        agent="uitars", coordinate_mode="rel1000", history_window=5, temperature=1.0, top_p=0.9,
        max_tokens=500, frequency_penalty=1.0, prompts="reference", call_user_tries=3,
        **_UITARS_REASK,
    ),
    # Qwen3-VL through OSWorld's mm_agents/qwen3vl_agent.py with its class defaults (coordinate_type
    # relative: the model is told 1000x1000, its numbers are read as 999ths; four past replies with
    # their screenshots; max_tokens 32768; temperature and top_p are left to the server).
    "qwen3-vl": Profile(
        agent="qwen3vl", coordinate_mode="rel999", action_space="pyautogui", history_window=4,
        max_tokens=32768, prompts="reference",
    ),
    # Qwen2.5-VL through OSWorld's mm_agents/qwen25vl_agent.py with run_multienv_qwen25vl.py's defaults
    # (temperature 1.0, top_p 0.9, 1500 tokens) and the agent's four steps of history; the model points
    # in pixels of the Qwen2.5-VL smart-resized screenshot.
    "qwen2.5-vl": Profile(
        agent="qwen25vl", coordinate_mode="abs", action_space="pyautogui", history_window=4,
        temperature=1.0, top_p=0.9, max_tokens=1500, prompts="reference",
    ),
    # EvoCUA through OSWorld's mm_agents/evocua with run_multienv_evocua.py's defaults (prompt_style
    # S2, coordinate_type relative: told 1000x1000, read as 999ths; temperature 0, top_p 0.9, 32768
    # tokens; three steps of history; screenshots smart-resized by 32). It never asks again.
    "evocua-s2": Profile(
        agent="evocua", coordinate_mode="rel999", action_space="pyautogui", history_window=3,
        temperature=0.0, top_p=0.9, max_tokens=32768, prompts="reference",
    ),
    # GUI-Owl-1.5 through OSWorld's mm_agents/owl15_agent.py (its openai engine) with
    # run_multienv_gui_owl15.py's defaults: temperature 0, top_p 0.9, 4096 tokens, five screenshots and
    # four replies, thousandths of the screen, 5 s after each action; a reply it cannot read is asked
    # again, twenty calls in all, then the task ends as done.
    "gui-owl-1.5": Profile(
        agent="owl15", coordinate_mode="rel1000", action_space="pyautogui", history_window=5,
        temperature=0.0, top_p=0.9, max_tokens=4096, prompts="reference", parse_tries=20,
        parse_exhausted="done", settle_seconds=5.0,
    ),
    # Jedi-7B as OSWorld's mm_agents/jedi_7b_agent.py runs it, with its class defaults (OSWorld has no
    # run script for it): a planner (gpt-4o) writes pyautogui code with a comment before each pointer
    # call, and the jedi-7b grounder, asked with that comment, places it in pixels of its smart-resized
    # screenshot; both sample at temperature 0.5, top_p 0.9, 1500 tokens; five screenshots of history;
    # a reply with no code is asked again with a reminder, six calls in all.
    "jedi-7b": Profile(
        agent="jedi", coordinate_mode="abs", action_space="pyautogui",
        history_window=5, temperature=0.5, top_p=0.9, max_tokens=1500, prompts="reference",
        parse_tries=6, grounder=Grounder(model="jedi-7b"),
    ),
    # OpenCUA-7B / 32B through OSWorld's mm_agents/opencua as OpenCUA's README runs them
    # (--coordinate_type qwen25: pixels of the Qwen2.5-VL smart-resized screenshot), with the agent's
    # defaults: cot_level l2, action history, three screenshots, temperature 0, top_p 0.9, 1500 tokens.
    "opencua-7b": Profile(
        agent="opencua", coordinate_mode="smart", action_space="pyautogui", history_window=3,
        temperature=0.0, top_p=0.9, max_tokens=1500, prompts="reference",
        # It asks up to five times while a reply cannot be parsed, the later calls at temperature
        # max(0.2, temperature) (0.2 at the preset's 0), then fails the task.
        parse_tries=5, reask_min_temperature=0.2, parse_exhausted="fail",
    ),
    # GPT-5.4 through OSWorld's mm_agents/gpt54_agent.py with its run script's defaults: the GA computer
    # tool, reasoning effort xhigh with a concise summary, screenshots as grabbed (detail original),
    # pending safety checks acknowledged. Temperature and top_p are not sent (the run script's are unused).
    "gpt-5.4": Profile(
        agent="gpt54", model="gpt-5.4", base_url="https://api.openai.com/v1", reasoning_effort="xhigh",
        prompts="reference", safety_checks="acknowledge",
    ),
    # computer-use-preview through OSWorld's mm_agents/openai_cua_agent.py with its run script's
    # defaults: the computer_use_preview tool at the screen's size, the whole conversation resent
    # each step, max_output_tokens 1500, safety checks acknowledged.
    "computer-use-preview": Profile(
        agent="openai_cua", model="computer-use-preview", base_url="https://api.openai.com/v1",
        max_tokens=1500, prompts="reference", safety_checks="acknowledge",
    ),
    # Claude Sonnet 4.5 through OSWorld's mm_agents/anthropic/ on Anthropic's API (so with prompt caching)
    # with its run script's defaults: the computer_20251124 tool at 1280x720, thinking (2048 tokens),
    # max_tokens 3000, no temperature or top_p sent.
    "claude-sonnet-4.5": Profile(
        agent="claude", model="claude-sonnet-4-5-20250929", base_url="https://api.anthropic.com",
        max_tokens=3000, prompts="reference", api_key_env="ANTHROPIC_API_KEY",
    ),
}  # fmt: skip
"""Built-in model setups a profile names with ``preset``; the profile's own values win."""

MODEL_PRESETS: tuple[tuple[str, str], ...] = (
    (r"dart[-_ ]?gui", "dart-gui-7b"),
    (r"ui[-_ ]?tars[-_ ]?1\.5", "uitars-1.5"),
    (r"opencua", "opencua-7b"),
    (r"qwen3[-_ ]?vl", "qwen3-vl"),
    (r"qwen2\.5[-_ ]?vl", "qwen2.5-vl"),
    (r"gui[-_ ]?owl", "gui-owl-1.5"),
    (r"evocua(?![-_ ]?s1)", "evocua-s2"),  # S1, its structured-reasoning style, is not reproduced
)
"""Model names (searched in the name's last ``/`` part, any case) and the preset a profile naming neither a
``preset`` nor an ``agent`` gets for them, so a known model runs as OSWorld runs it."""


def model_preset(model: str) -> str | None:
    """The preset of a known model name, or None.

    >>> model_preset("ByteDance-Seed/UI-TARS-1.5-7B"), model_preset("dart-gui-7b"), model_preset("gpt-4o")
    ('uitars-1.5', 'dart-gui-7b', None)
    """
    name = model.rsplit("/", 1)[-1].lower()
    return next((preset for pattern, preset in MODEL_PRESETS if re.search(pattern, name)), None)


class Settings(BaseModel):
    """Everything in ``settings.json``.

    Attributes:
        changed: Emitted with the name of the field after any top-level field is assigned.
        notices: Things the user should know about the loaded file (a key found in it, ...).
    """

    model_config = ConfigDict(extra="allow", validate_assignment=True)

    model_provider: ModelProvider = Field(default_factory=ModelProvider)
    evaluation: Evaluation = Field(default_factory=Evaluation)
    agent: AgentSettings = Field(default_factory=AgentSettings)
    environment: EnvironmentSettings = Field(default_factory=EnvironmentSettings)
    assets: AssetSettings = Field(default_factory=AssetSettings)
    profiles: dict[str, Profile] = Field(default_factory=dict)
    active_profile: str | None = None
    prices: dict[str, Price] = Field(default_factory=dict)
    """Per model id: its price per million input, cached input and output tokens (missing: unknown)."""

    _changed: SignalInstance = PrivateAttr(default_factory=lambda: SignalInstance((str,), name="changed"))
    _notices: list[str] = PrivateAttr(default_factory=list)
    _path: Path | None = PrivateAttr(default=None)

    @field_validator("profiles")
    @classmethod
    def _names(cls, value: dict[str, Profile]) -> dict[str, Profile]:
        for name in value:
            if not _PROFILE_NAME.match(name):
                raise ValueError(f"profile name {name!r} must be letters, digits, '.', '_' or '-' (max 64)")
        return value

    @property
    def changed(self) -> SignalInstance:
        """The signal views connect to; it carries the name of the changed field."""
        return self._changed

    @property
    def path(self) -> Path | None:
        """The file these settings were loaded from or last saved to."""
        return self._path

    @property
    def notices(self) -> list[str]:
        """Messages for the user about the loaded file (shown by the CLI on stderr, by the UI in a bar)."""
        return self._notices

    def __setattr__(self, name: str, value: Any) -> None:
        super().__setattr__(name, value)
        if name in type(self).model_fields:
            self._changed.emit(name)

    # --- profiles -----------------------------------------------------------------------------------

    @property
    def profile_names(self) -> list[str]:
        """Every profile name, the implicit ``default`` first unless a named one replaces it."""
        names = list(self.profiles)
        return names if DEFAULT_PROFILE in names else [DEFAULT_PROFILE, *names]

    def set_profile(self, name: str, profile: Profile) -> None:
        """Add or replace a named profile."""
        self.profiles = {**self.profiles, name: profile}

    def remove_profile(self, name: str) -> None:
        """Remove a named profile (and stop using it when it was active)."""
        self.profiles = {k: v for k, v in self.profiles.items() if k != name}
        if self.active_profile == name:
            self.active_profile = None

    def resolve_profile(self, name: str | None = None) -> ResolvedProfile:
        """The profile ``name`` (default: the active one) with every default filled in.

        Raises:
            SettingsError: If there is no profile of that name.
        """
        from osw_studio.core.errors import SettingsError

        name = name or self.active_profile or DEFAULT_PROFILE
        if name in self.profiles:
            profile = self.profiles[name]
        elif name == DEFAULT_PROFILE:
            profile = Profile()
        else:
            known = ", ".join(self.profile_names)
            raise SettingsError(f"no profile named {name!r}", hint=f"known profiles: {known}")
        inferred = None
        if profile.preset is None and "agent" not in profile.model_fields_set:
            inferred = model_preset(profile.model or self.model_provider.model)
        if profile.preset is not None or inferred is not None:
            base = PRESETS[profile.preset or inferred or ""]
            own = {name: getattr(profile, name) for name in profile.model_fields_set}
            if base.grounder is not None and profile.grounder is not None:  # the preset's, field by field
                mine = profile.grounder
                own["grounder"] = base.grounder.model_copy(
                    update={
                        k: getattr(mine, k) for k in mine.model_fields_set if getattr(mine, k) is not None
                    }
                )
            profile = base.model_copy(update={**own, "preset": profile.preset or inferred})
        mp, ag = self.model_provider, self.agent
        agent = profile.agent
        # The agent's own defaults (UI-TARS and DART-GUI were trained with five screenshots of history).
        spec = agent_specs.spec(agent)
        default_mode = cast(CoordinateMode, spec.coordinate_mode)
        default_window = ag.history_window if spec.history_window is None else spec.history_window
        default_space = cast(ActionSpace, spec.action_space or self.evaluation.action_space)
        return ResolvedProfile(
            name=name,
            base_url=profile.base_url or mp.base_url,
            model=profile.model or mp.model,
            agent=agent,
            coordinate_mode=profile.coordinate_mode or default_mode,
            action_space=profile.action_space or default_space,
            observation_type=profile.observation_type or ag.observation_type,
            history_window=_pick(profile.history_window, default_window),
            temperature=_pick(profile.temperature, ag.temperature),
            top_p=profile.top_p if profile.top_p is not None else ag.top_p,
            max_tokens=_pick(profile.max_tokens, ag.max_tokens),
            timeout=_pick(profile.timeout, mp.timeout),
            max_retries=_pick(profile.max_retries, mp.max_retries),
            api_key_env=profile.api_key_env,
            file_api_key=profile.api_key or (mp.api_key if name == DEFAULT_PROFILE else None),
            screenshot_size=profile.screenshot_size,
            image_format=profile.image_format or "png",
            logprobs=profile.logprobs,
            preset=profile.preset,
            frequency_penalty=profile.frequency_penalty,
            prompts=profile.prompts or "own",
            call_user_tries=_pick(profile.call_user_tries, 0),
            parse_tries=_pick(profile.parse_tries, 1),
            reask_temperature=profile.reask_temperature,
            reask_min_temperature=profile.reask_min_temperature,
            parse_exhausted=profile.parse_exhausted or "error",
            history_texts=profile.history_texts,
            reference_osworld=self.evaluation.reference_osworld,
            settle_seconds=profile.settle_seconds,
            preset_inferred=inferred is not None,
            price=profile.price or self.prices.get(profile.model or mp.model),
            budget=profile.budget,
            loop_repeats=_pick(profile.loop_repeats, 5),
            loop_still_steps=_pick(profile.loop_still_steps, 10),
            reasoning_effort=profile.reasoning_effort,
            safety_checks=profile.safety_checks or "acknowledge",
            grounder=None
            if profile.grounder is None
            else Grounder(
                base_url=profile.grounder.base_url or profile.base_url or mp.base_url,
                model=profile.grounder.model or profile.model or mp.model,
                api_key_env=profile.grounder.api_key_env,
            ),
        )


def _pick(value: _T | None, default: _T) -> _T:
    return default if value is None else value
