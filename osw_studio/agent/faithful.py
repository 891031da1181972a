"""Whether a profile sends what OSWorld's leaderboard run of its model sends, and if not, what to change.

A profile is leaderboard-faithful when it runs a preset (written, or chosen from the model's name), keeps
every value the preset sets, asks for OSWorld's own prompts, and those prompts can be read: from the
OSWorld checkout the settings name (``evaluation.reference_osworld``) or the reference ``make setup``
installs beside the checkout. The run header and the Settings dialog show :func:`faithfulness`.

Examples:
    >>> from osw_studio.settings import Settings
    >>> s = Settings.model_validate({"profiles": {"h": {"agent": "human"}}})
    >>> faithfulness(s.resolve_profile("h")).text
    'no model: nothing to compare with the leaderboard'
"""

from __future__ import annotations

from dataclasses import dataclass

from osw_studio.agent.reference import reference_site, use_checkout
from osw_studio.core import agent_specs
from osw_studio.settings.model import PRESETS, ResolvedProfile, model_preset

_COMPARED = (
    "agent",
    "coordinate_mode",
    "history_window",
    "history_texts",
    "temperature",
    "top_p",
    "max_tokens",
    "frequency_penalty",
    "prompts",
    "call_user_tries",
    "parse_tries",
    "reask_temperature",
    "reask_min_temperature",
    "parse_exhausted",
    "settle_seconds",
)
"""The profile values a preset sets that change what is sent or how replies end the episode."""


@dataclass(frozen=True)
class Faithfulness:
    """The verdict on one profile.

    Attributes:
        faithful: True or False; None for agents without a model (replay, human).
        text: One line for the run header and the Settings dialog.
        change: The one thing to change to make it faithful (None when it is, or cannot be).
    """

    faithful: bool | None
    text: str
    change: str | None = None


def faithfulness(profile: ResolvedProfile) -> Faithfulness:
    """Whether ``profile`` is leaderboard-faithful, and if not, the first thing to change."""
    use_checkout(profile.reference_osworld)
    spec = agent_specs.BY_ID.get(profile.agent)
    if spec is None or not spec.needs_model:
        return Faithfulness(None, "no model: nothing to compare with the leaderboard")
    if profile.preset is None or profile.preset not in PRESETS:
        guess = model_preset(profile.model) or (spec.presets[0] if spec.presets else None)
        change = f'set "preset": "{guess}"' if guess else "pick a preset for the model"
        return Faithfulness(False, "not leaderboard-faithful: the profile runs no preset", change)
    preset = PRESETS[profile.preset]
    for field in _COMPARED:
        if field in preset.model_fields_set and getattr(profile, field) != getattr(preset, field):
            return Faithfulness(
                False,
                f"not leaderboard-faithful: {field} is {getattr(profile, field)!r}, the preset "
                f"{profile.preset} sends {getattr(preset, field)!r}",
                f'remove "{field}" from the profile',
            )
    if profile.prompts != "reference":
        return Faithfulness(False, "not leaderboard-faithful: it sends OSW Studio's own prompts",
                            'set "prompts": "reference"')  # fmt: skip
    if spec.reference is not None and reference_site(spec.reference) is None:
        return Faithfulness(
            False,
            f"not leaderboard-faithful: OSWorld's {spec.reference} is not found, so its prompt is not sent",
            'set "evaluation": {"reference_osworld": "<an OSWorld checkout>"} (or run make setup)',
        )
    how = f"{profile.preset} preset" + (" (chosen from the model name)" if profile.preset_inferred else "")
    where = f", as OSWorld's {spec.reference}" if spec.reference else ""
    return Faithfulness(True, f"leaderboard-faithful: {how}{where}")
