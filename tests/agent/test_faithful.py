"""Faithful by default: known models get their preset, prompts come from the reference beside the app."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from osw_studio.agent.dart import DartAgent
from osw_studio.agent.faithful import faithfulness
from osw_studio.agent.reference import CHECKOUT, reference_site
from osw_studio.agent.registry import make_agent
from osw_studio.agent.uitars import UITarsAgent
from osw_studio.runner.plan import plan_recipe
from osw_studio.runner.settle import SettlePolicy
from osw_studio.settings import Settings, load_settings
from tests.conftest import ROOT

UPSTREAM = ROOT.parent / "shared" / "osworld" / "upstream"
SIDE_ENV = sorted((CHECKOUT / ".venv-ref" / "lib").glob("python3*/site-packages/mm_agents"))

# The settings.json of the getting-started guide, as it is written: OSWorld's skeleton with DART-GUI-7B
# as the model and an agent section, no profile and no preset.
SEED_SETTINGS = {
    "model_provider": {"base_url": "http://127.0.0.1:8000/v1", "model": "dart-gui-7b", "timeout": 120,
                       "max_retries": 3},
    "evaluation": {"benchmark": "osworld", "task_suite": "evaluation_examples/test_all.json", "max_steps": 15,
                   "screen_resolution": "1920x1080", "action_space": "pyautogui", "save_screenshots": True,
                   "output_dir": "results"},
    "agent": {"observation_type": "screenshot", "history_window": 5, "temperature": 0.5, "max_tokens": 1500},
}  # fmt: skip


@pytest.fixture(autouse=True)
def no_override(monkeypatch: pytest.MonkeyPatch) -> None:
    """As after ``make setup``: no environment variable names the reference."""
    monkeypatch.delenv("OSW_REFERENCE_SITE", raising=False)


def seed(tmp_path: Path, **evaluation: object) -> Settings:
    data = json.loads(json.dumps(SEED_SETTINGS))
    data["evaluation"].update(evaluation)
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return load_settings(path)


@pytest.mark.skipif(not (UPSTREAM / "mm_agents").is_dir(), reason="needs OSWorld's code (../shared/osworld)")
def test_the_seed_settings_run_dart_through_its_own_agent_with_its_prompt(tmp_path: Path) -> None:
    settings = seed(tmp_path, reference_osworld=str(UPSTREAM))
    profile = settings.resolve_profile()
    assert (profile.agent, profile.preset, profile.preset_inferred) == ("dart", "dart-gui-7b", True)
    # the preset's sampling and history, not the agent section's PromptAgent defaults
    assert (profile.temperature, profile.top_p, profile.max_tokens) == (0.0, 1.0, 500)
    assert (profile.history_window, profile.history_texts, profile.coordinate_mode) == (5, 35, "smart")
    assert any("'dart-gui-7b'" in n and "preset" in n for n in settings.notices), settings.notices
    # its run script's 5 s after each action and 15 steps
    recipe = plan_recipe(settings)
    assert recipe.config.settle == SettlePolicy.fixed(5.0) and recipe.config.max_steps == 15
    agent = make_agent(profile, api_key="sk-test")
    assert isinstance(agent, DartAgent)
    assert agent.prompt_info["faithful"], agent.prompt_info
    assert "dart_gui/prompts.py:COMPUTER_USE_PROMPT" in agent.prompt_info["source"]
    assert "## User Instruction" in agent.prompt("Save it.")  # DART-GUI's own text, read at run time
    verdict = faithfulness(profile)
    assert verdict.faithful and "chosen from the model name" in verdict.text


def test_without_an_osworld_checkout_dart_says_the_one_thing_to_change(tmp_path: Path) -> None:
    profile = seed(tmp_path).resolve_profile()
    agent = make_agent(profile, api_key="sk-test")
    assert isinstance(agent, DartAgent) and not agent.prompt_info["faithful"]
    verdict = faithfulness(profile)
    assert verdict.faithful is False and verdict.change is not None
    assert "reference_osworld" in verdict.change


@pytest.mark.skipif(
    not SIDE_ENV, reason="needs the reference side environment beside the checkout (make setup)"
)
def test_a_preset_sends_osworlds_prompt_from_the_side_environment_with_no_variable() -> None:
    settings = Settings.model_validate({"profiles": {"tars": {"model": "ByteDance-Seed/UI-TARS-1.5-7B"}}})
    profile = settings.resolve_profile("tars")
    assert (profile.agent, profile.preset) == ("uitars", "uitars-1.5")
    found = reference_site("mm_agents/uitars15_v1.py")
    assert found is not None and found[0] == SIDE_ENV[0].parent
    agent = make_agent(profile, api_key="sk-test")
    assert isinstance(agent, UITarsAgent) and agent.prompt_info["faithful"], agent.prompt_info
    assert faithfulness(profile).faithful


def test_a_changed_preset_value_or_no_preset_is_named() -> None:
    settings = Settings.model_validate(
        {
            "profiles": {
                "warm": {"model": "dart-gui-7b", "preset": "dart-gui-7b", "temperature": 0.7},
                "own": {"model": "dart-gui-7b", "agent": "uitars"},
                "gpt": {"model": "gpt-4o"},
            }
        }
    )
    warm = faithfulness(settings.resolve_profile("warm"))
    assert warm.faithful is False and warm.change == 'remove "temperature" from the profile'
    own = faithfulness(settings.resolve_profile("own"))
    assert own.faithful is False and own.change == 'set "preset": "dart-gui-7b"'
    gpt = settings.resolve_profile("gpt")
    assert gpt.preset is None and gpt.agent == "osworld" and not gpt.preset_inferred
