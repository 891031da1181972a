"""The agent spec table is the one list of agents: every other list is derived from it."""

from __future__ import annotations

import ast
import io
import json
from pathlib import Path

import pytest

from osw_studio.agent.registry import AGENTS, agent_class
from osw_studio.cli import main
from osw_studio.core import agent_specs
from osw_studio.core.agent_specs import AGENT_IDS, SPECS, spec
from osw_studio.settings.model import PRESETS, Profile, Settings

PACKAGE = Path(__file__).resolve().parents[2] / "osw_studio"
TABLE = PACKAGE / "core" / "agent_specs.py"
LANGUAGES = {s.language for s in SPECS if s.language}
"""Agent ids that are also action-language names (``uitars``): lists of languages may name them."""


def _hand_written_lists(path: Path, root: Path = PACKAGE.parent) -> list[str]:
    """Literal collections in ``path`` naming two or more agents, one of them not a language name."""
    found = []
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict):
            items: list[ast.expr | None] = list(node.keys)
        elif isinstance(node, ast.Tuple | ast.List | ast.Set):
            items = list(node.elts)
        else:
            continue
        ids = {i.value for i in items if isinstance(i, ast.Constant) and i.value in AGENT_IDS}
        if len(ids) >= 2 and ids - LANGUAGES:
            found.append(f"{path.relative_to(root)}:{node.lineno}: {sorted(ids)}")
    return found


def test_no_list_of_agents_is_written_by_hand() -> None:
    found = [hit for p in sorted(PACKAGE.rglob("*.py")) if p != TABLE for hit in _hand_written_lists(p)]
    assert found == [], "derive these from osw_studio.core.agent_specs:\n" + "\n".join(found)


def test_the_check_finds_a_hand_written_list(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text(
        'AGENTS = ("replay", "osworld", "uitars")\n'
        'KINDS = {"uitars": 1, "human": 2}\n'
        'LANGUAGES = ("pyautogui", "uitars", "qwen3vl")\n'  # action languages, not agents
    )
    hits = _hand_written_lists(probe, tmp_path)
    assert [h.split(":")[1] for h in hits] == ["1", "2"]


def test_every_list_is_the_tables() -> None:
    from osw_studio.cli import eval_run, run
    from osw_studio.runner import plan, suite
    from osw_studio.trajectory.exporters import samples

    assert list(AGENTS) == list(AGENT_IDS)
    assert run.AGENTS == AGENT_IDS
    assert suite.AGENTS == eval_run.AGENTS == agent_specs.SUITE_AGENTS
    assert "human" not in suite.AGENTS and suite.AGENTS[0] == "replay"
    assert set(plan.MODEL_AGENTS) == set(samples.MODEL_AGENTS) == {s.id for s in SPECS if s.needs_model}


@pytest.mark.parametrize("agent_id", AGENT_IDS)
def test_each_entry_point_is_its_agent(agent_id: str) -> None:
    cls = agent_class(agent_id)
    assert f"{cls.__module__}:{cls.__name__}" == spec(agent_id).entry
    if spec(agent_id).needs_model:
        assert getattr(cls, "kind", agent_id) == agent_id


def test_presets_are_the_tables() -> None:
    assert agent_specs.preset_agents() == {name: p.agent for name, p in PRESETS.items()}


@pytest.mark.parametrize("agent_id", AGENT_IDS)
def test_settings_accept_every_agent_and_take_its_defaults(agent_id: str) -> None:
    s = Settings.model_validate({"profiles": {"p": {"agent": agent_id}}})
    resolved = s.resolve_profile("p")
    table = spec(agent_id)
    assert resolved.coordinate_mode == table.coordinate_mode
    assert resolved.action_space == (table.action_space or s.evaluation.action_space)


def test_settings_refuse_an_unknown_agent_naming_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"unknown agent 'tars'.*uitars"):
        Profile.model_validate({"agent": "tars"})


def test_cli_coordinate_choices_are_every_mode(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    reply = "Thought: go\nAction: click(start_box='(500,500)')"
    monkeypatch.setattr("sys.stdin", io.StringIO(reply))
    code = main(["actions", "parse", "--format", "uitars", "--coords", "rel999"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out) == [{"kind": "click", "x": 961, "y": 541}]  # 500/999 of the screen
