"""One spec per agent: every list of agents in the project is derived from :data:`SPECS`.

The registry (``agent.registry.AGENTS``), the settings' agent kinds, the CLI's ``--agent`` choices, the
suite's and the planner's lists, and the exporters' model agents and action languages all read this
table, so an agent is added in one place. The table holds only strings: it is imported by the CLI's
``--help`` and by the settings, which must not import the agents themselves.

To add an agent:

1. write its class (a :class:`~osw_studio.agent.model_agent.ModelAgent` for a model) in its own module;
2. add one :class:`AgentSpec` to :data:`SPECS` below, after the others of its family;
3. if it has presets, add them to ``settings.model.PRESETS`` and name them in ``presets``;
4. if it reproduces an OSWorld agent, add its differential test in ``tests/parity``.

``tests/agent/test_specs.py`` fails when a list of agent ids is written by hand anywhere else.

Examples:
    >>> [s.id for s in SPECS][:3]
    ['osworld', 'uitars', 'uitars15v2']
    >>> spec("uitars").entry, spec("uitars").language, spec("human").needs_model
    ('osw_studio.agent.uitars:UITarsAgent', 'uitars', False)
    >>> "human" in UNATTENDED_AGENTS, "replay" in MODEL_AGENTS
    (False, False)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AgentSpec:
    """What the project needs to know about one agent, without importing it.

    Attributes:
        id: The agent kind a profile names (``"agent": "uitars"``).
        entry: Its class as ``module:Class``, imported on first use.
        needs_model: Whether it asks a model (and so needs an endpoint and usually a key).
        unattended: Whether it can run with no person there (suites, ``--auto``); ``human`` cannot.
        language: The action language its model writes (``uitars``, ``qwen3vl``, ``opencua``); None:
            the profile's action space decides (pyautogui or computer_13 code), or there is no model.
        coordinate_mode: The frame of its model's numbers when the profile does not say.
        action_space: The action space it implies (None: the settings' ``evaluation.action_space``).
        history_window: Its default history window (None: the settings' ``agent.history_window``).
        reference: The OSWorld module it reproduces (under OSWorld's ``mm_agents/``), if any.
        presets: The built-in presets (``settings.model.PRESETS``) that run it.
        summary: One line for menus and ``--help``.
        api: The model API it speaks: ``chat`` (chat completions), ``responses`` (OpenAI's Responses
            API) or ``messages`` (Anthropic's Messages API); ``check-model`` and the exporters follow it.
        tool: The vendor's computer-use tool it declares (``computer``, ``computer_use_preview``,
            ``computer_20251124``), which ``check-model``'s probe sends; None for chat agents.
        chained: Whether its requests are chained to the previous response (``previous_response_id``)
            instead of resending the conversation.
    """

    id: str
    entry: str
    needs_model: bool
    unattended: bool = True
    language: str | None = None
    coordinate_mode: str = "abs"
    action_space: str | None = None
    history_window: int | None = None
    reference: str | None = None
    presets: tuple[str, ...] = ()
    summary: str = ""
    api: str = "chat"
    tool: str | None = None
    chained: bool = False


SPECS: tuple[AgentSpec, ...] = (
    AgentSpec(
        id="osworld",
        entry="osw_studio.agent.osworld:OSWorldAgent",
        needs_model=True,
        reference="mm_agents/agent.py",
        presets=("osworld",),
        summary="OSWorld's PromptAgent: pyautogui or computer_13 code (GPT-4o and other API models)",
    ),
    AgentSpec(
        id="uitars",
        entry="osw_studio.agent.uitars:UITarsAgent",
        needs_model=True,
        language="uitars",
        coordinate_mode="smart",
        action_space="uitars",
        history_window=5,
        reference="mm_agents/uitars15_v1.py",
        presets=("uitars-1.5", "uitars-1.0"),
        summary="UI-TARS: Thought/Action replies",
    ),
    AgentSpec(
        id="uitars15v2",
        entry="osw_studio.agent.uitars15v2:UITars15V2Agent",
        needs_model=True,
        language="uitars",
        coordinate_mode="rel1000",
        action_space="uitars",
        history_window=5,
        reference="mm_agents/uitars15_v2.py",
        presets=("uitars-1.5-v2",),
        summary="UI-TARS-1.5 through OSWorld's v2 agent: <point> replies in thousandths, no system message",
    ),
    AgentSpec(
        id="qwen3vl",
        entry="osw_studio.agent.qwen3vl:Qwen3VLAgent",
        needs_model=True,
        language="qwen3vl",
        coordinate_mode="rel999",
        action_space="pyautogui",
        reference="mm_agents/qwen3vl_agent.py",
        presets=("qwen3-vl",),
        summary="Qwen3-VL: computer_use tool calls",
    ),
    AgentSpec(
        id="qwen25vl",
        entry="osw_studio.agent.qwen25vl:Qwen25VLAgent",
        needs_model=True,
        language="qwen3vl",
        coordinate_mode="abs",
        action_space="pyautogui",
        history_window=4,
        reference="mm_agents/qwen25vl_agent.py",
        presets=("qwen2.5-vl",),
        summary="Qwen2.5-VL: computer_use tool calls in pixels of the image sent",
    ),
    AgentSpec(
        id="evocua",
        entry="osw_studio.agent.evocua:EvoCUAAgent",
        needs_model=True,
        language="qwen3vl",
        coordinate_mode="rel999",
        action_space="pyautogui",
        history_window=3,
        reference="mm_agents/evocua",
        presets=("evocua-s2",),
        summary="EvoCUA (S2): computer_use tool calls in 999ths of the screen",
    ),
    AgentSpec(
        id="owl15",
        entry="osw_studio.agent.owl15:Owl15Agent",
        needs_model=True,
        language="qwen3vl",
        coordinate_mode="rel1000",
        action_space="pyautogui",
        history_window=5,
        reference="mm_agents/owl15_agent.py",
        presets=("gui-owl-1.5",),
        summary="GUI-Owl-1.5: computer_use tool calls in thousandths of the screen, one trimmed conversation",
    ),
    AgentSpec(
        id="jedi",
        entry="osw_studio.agent.jedi:JediAgent",
        needs_model=True,
        action_space="pyautogui",
        history_window=5,
        reference="mm_agents/jedi_7b_agent.py",
        presets=("jedi-7b",),
        summary="Jedi-7B: a planner writes pyautogui code, a grounding model places each pointer call",
    ),
    AgentSpec(
        id="opencua",
        entry="osw_studio.agent.opencua:OpenCUAAgent",
        needs_model=True,
        language="opencua",
        coordinate_mode="smart",
        action_space="pyautogui",
        reference="mm_agents/opencua",
        presets=("opencua-7b",),
        summary="OpenCUA: thought, action and pyautogui code",
    ),
    AgentSpec(
        id="dart",
        entry="osw_studio.agent.dart:DartAgent",
        needs_model=True,
        language="uitars",
        coordinate_mode="smart",
        action_space="uitars",
        history_window=5,
        reference="mm_agents/dart_gui_agent.py",
        presets=("dart-gui-7b",),
        summary="DART-GUI's own agent (dart_mode): UI-TARS-1.5 replies, its own prompt and history",
    ),
    AgentSpec(
        id="gpt54",
        entry="osw_studio.agent.cua_openai:GPT54Agent",
        needs_model=True,
        reference="mm_agents/gpt54_agent.py",
        presets=("gpt-5.4",),
        summary="GPT-5.4 through OpenAI's Responses API and its computer tool (batched actions)",
        api="responses",
        tool="computer",
        chained=True,
    ),
    AgentSpec(
        id="openai_cua",
        entry="osw_studio.agent.cua_openai:ComputerUsePreviewAgent",
        needs_model=True,
        reference="mm_agents/openai_cua_agent.py",
        presets=("computer-use-preview",),
        summary="computer-use-preview through OpenAI's Responses API and its computer_use_preview tool",
        api="responses",
        tool="computer_use_preview",
    ),
    AgentSpec(
        id="claude",
        entry="osw_studio.agent.cua_anthropic:ClaudeAgent",
        needs_model=True,
        reference="mm_agents/anthropic",
        presets=("claude-sonnet-4.5",),
        summary="Claude through Anthropic's Messages API and its computer_20251124 tool",
        api="messages",
        tool="computer_20251124",
    ),
    AgentSpec(
        id="replay",
        entry="osw_studio.agent.replay:ReplayAgent",
        needs_model=False,
        summary="plays a task's reference solution or a recorded run (no model)",
    ),
    AgentSpec(
        id="human",
        entry="osw_studio.agent.human:HumanAgent",
        needs_model=False,
        unattended=False,
        summary="a person acts; every step is theirs",
    ),
)
"""Every agent, in the order menus list them."""

BY_ID: dict[str, AgentSpec] = {s.id: s for s in SPECS}
AGENT_IDS: tuple[str, ...] = tuple(BY_ID)
"""Every agent id (the settings' agent kinds, ``osw-studio run --agent``)."""
MODEL_AGENTS: tuple[str, ...] = tuple(s.id for s in SPECS if s.needs_model)
"""Agents that call a model (and so need a key)."""
UNATTENDED_AGENTS: tuple[str, ...] = tuple(s.id for s in SPECS if s.unattended)
"""Agents that can run a suite with no person there."""
SUITE_AGENTS: tuple[str, ...] = (
    *(s.id for s in SPECS if not s.needs_model and s.unattended),
    *(s.id for s in SPECS if s.needs_model and s.unattended),
)
"""``osw-studio eval run --agent`` choices: the no-model ones first (``replay`` needs no key)."""
RESPONSES_AGENTS: tuple[str, ...] = tuple(s.id for s in SPECS if s.api == "responses")
"""Agents that speak OpenAI's Responses API."""
MESSAGES_AGENTS: tuple[str, ...] = tuple(s.id for s in SPECS if s.api == "messages")
"""Agents that speak Anthropic's Messages API."""
OWN_LANGUAGES: dict[str, str] = {s.id: s.language for s in SPECS if s.language is not None}
"""Agents whose models write an action language of their own (the others: pyautogui or computer_13)."""


def spec(agent_id: str) -> AgentSpec:
    """The spec of ``agent_id``.

    Raises:
        KeyError: If no agent has that id.
    """
    return BY_ID[agent_id]


def preset_agents() -> dict[str, str]:
    """Each preset named in the table, with the agent that runs it.

    >>> preset_agents()["qwen3-vl"]
    'qwen3vl'
    """
    return {name: s.id for s in SPECS for name in s.presets}
