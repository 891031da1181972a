"""The dataset card (``README.md``) every export folder gets: what went in and how it is written.

Exporters count what they write in a :class:`CardStats`; :func:`write_card` writes the card when the
export ends: source runs, samples by source (agent, approved, edited, human), how prompts were made
(recorded, derived, re-targeted), filters, format, image sizes and encodings, coordinate spaces.

Examples:
    >>> stats = CardStats()
    >>> stats.count("agent", origin="recorded", image=(1932, 1092, "image/png"), space="smart")
    >>> stats.count("edited", origin="recorded")
    >>> stats.sources["agent"], stats.origins["recorded"], stats.images[(1932, 1092, "image/png")]
    (1, 2, 1)
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING

from osw_studio import __version__
from osw_studio.trajectory.exporters.card_stats import CardStats as CardStats

if TYPE_CHECKING:
    from osw_studio.trajectory.exporters.base import ExportOptions

CARD = "README.md"

_ORIGINS = {
    "recorded": "the request the agent sent at that step, message for message and image for image",
    "derived": "a person's takeover step: the agent's previous request, one round on, showing this "
    "step's screenshot (the model was not asked at this step)",
    "reprompt": "rebuilt with a target-model profile (the run recorded no request, or --reprompt)",
}


def _filters(options: ExportOptions) -> list[str]:
    f = options.filter
    out = []
    if f.success_only:
        out.append("successful runs only")
    if f.min_score is not None:
        out.append(f"score at least {f.min_score:g}")
    if f.sources:
        out.append("steps of " + ", ".join(sorted(f.sources)))
    if f.domains:
        out.append("domains " + ", ".join(sorted(f.domains)))
    if f.since is not None:
        out.append(f"started on or after {dt.datetime.fromtimestamp(f.since, dt.UTC):%Y-%m-%d %H:%M:%S} UTC")
    if f.until is not None:
        out.append(f"started on or before {dt.datetime.fromtimestamp(f.until, dt.UTC):%Y-%m-%d %H:%M:%S} UTC")
    if options.scrubber.typed_patterns:
        out.append(f"typed text matching {len(options.scrubber.typed_patterns)} pattern(s) redacted")
    c = options.curation
    if c is not None:
        if c.review != "any":
            out.append(f"review: {c.review} runs")
        if c.min_rating is not None:
            out.append(f"rated at least {c.min_rating}")
        if c.drop_labels:
            out.append("steps labelled " + " or ".join(sorted(c.drop_labels)) + " dropped")
        if c.replay_below is not None:
            out.append(
                f"successful runs of tasks with a success rate below {c.replay_below:g} repeated "
                f"{1 + c.replay_copies} times (DART-style replay)"
            )
        if c.entropy_top is not None:
            out.append(f"agent steps in the top {c.entropy_top:.0%} by token entropy")
    if options.apply_corrections:
        out.append("reviewers' corrections exported as edits (steps labelled wrong, with the right action)")
    return out or ["none"]


def write_card(
    out: Path,
    fmt: str,
    description: str,
    stats: CardStats,
    options: ExportOptions,
    samples: int,
    details: list[str] | None = None,
    image_mode: str | None = None,
) -> Path:
    """Write ``out/README.md`` and return its path."""
    lines = [
        f"# OSW Studio export: {fmt}",
        "",
        f"{description}. Written by OSW Studio {__version__} on "
        f"{dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M} UTC: {samples} samples from {len(stats.runs)} runs.",
        "",
    ]
    if options.reprompt:
        lines += [
            f"**Re-targeted with `--reprompt {options.reprompt}`**: prompts and targets were rebuilt in that "
            "profile's prompt, action language and coordinate convention. They are not the requests the "
            "recorded model was sent.",
            "",
        ]
    lines += ["## Source runs", ""]
    shown = stats.runs[:50]
    lines += [f"- `{r}`" for r in shown]
    if len(stats.runs) > len(shown):
        lines.append(f"- ... and {len(stats.runs) - len(shown)} more")
    if stats.models:
        lines += ["", "Models: " + ", ".join(f"{m} ({n})" for m, n in stats.models.most_common()) + "."]
    if stats.agents:
        lines += ["Agents: " + ", ".join(f"{a} ({n})" for a, n in stats.agents.most_common()) + "."]
    lines += ["", "## Filters", "", *[f"- {f}" for f in _filters(options)], ""]
    lines += ["## Samples by source", "", "| source | count |", "|---|---|"]
    for source in ("agent", "approved", "edited", "human", "skipped"):
        if stats.sources[source] or source != "skipped":
            lines.append(f"| {source} | {stats.sources[source]} |")
    lines += [
        "",
        "agent: the model decided (auto mode), the target is its raw reply; approved: a person approved "
        "the model's reply, the target is that reply; edited: a person changed the actions; human: a "
        "person acted alone (takeover). Edited and human targets are the person's actions written in the "
        "model's own output format (its action language, coordinate space and thought structure), with "
        "the person's note as the thought, or a neutral sentence about the actions.",
        "",
    ]
    if stats.origins:
        lines += ["## Prompts", "", "| prompt | count | what it is |", "|---|---|---|"]
        for origin, n in stats.origins.most_common():
            lines.append(f"| {origin} | {n} | {_ORIGINS.get(origin, origin)} |")
        lines.append("")
    lines += ["## Format", "", *(details or []), ""]
    lines += ["## Images", ""]
    mode = image_mode or options.images or "copy"
    lines.append(
        f"Written as: {mode} ({'data URLs in the records' if mode == 'embed' else 'files beside the data'})."
    )
    if options.train_size:
        lines.append(f"Scaled to the training size {options.train_size[0]}x{options.train_size[1]}.")
    if stats.images:
        lines += ["", "| width | height | encoding | images |", "|---|---|---|---|"]
        for (w, h, mime), n in stats.images.most_common():
            lines.append(f"| {w} | {h} | {mime} | {n} |")
    lines += ["", "## Coordinate space", ""]
    if stats.spaces:
        lines += [f"- {space}: {n} samples" for space, n in stats.spaces.most_common()]
    else:
        lines.append("- screen pixels of the guest (as recorded)")
    if stats.notes:
        lines += ["", "## Notes", "", *[f"- {n}" for n in stats.notes]]
    path = out / CARD
    temp = out / f".{CARD}.partial"
    temp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    temp.replace(path)  # the card is whole or absent, never torn
    return path
