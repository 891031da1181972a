"""Exporters from run stores to training and evaluation formats, registered by format name.

Each entry names its class lazily (``module:Class``), so listing formats imports nothing heavy.

Examples:
    >>> list(EXPORTERS)[:3]
    ['osworld', 'sft-messages', 'sft-sharegpt']
    >>> exporter_class("parquet").name
    'parquet'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from osw_studio.core.errors import ExportError

if TYPE_CHECKING:  # the base module imports pydantic and the core models: not for listing formats
    from osw_studio.trajectory.exporters.base import Exporter

EXPORTERS: dict[str, str] = {
    "osworld": "osw_studio.trajectory.exporters.osworld:OsworldExporter",
    "sft-messages": "osw_studio.trajectory.exporters.sft:MessagesExporter",
    "sft-sharegpt": "osw_studio.trajectory.exporters.sft:ShareGptExporter",
    "agentnet": "osw_studio.trajectory.exporters.agentnet:AgentNetExporter",
    "preference": "osw_studio.trajectory.exporters.preference:PreferenceExporter",
    "rollouts": "osw_studio.trajectory.exporters.rollouts:RolloutsExporter",
    "parquet": "osw_studio.trajectory.exporters.parquet:ParquetExporter",
    "html": "osw_studio.trajectory.exporters.html:HtmlExporter",
}
"""Format name -> ``module:Class`` of its exporter."""

DESCRIPTIONS: dict[str, str] = {
    "osworld": "OSWorld's results layout (traj.jsonl, screenshots, result.txt per task)",
    "sft-messages": "chat SFT JSONL, OpenAI messages with image_url parts",
    "sft-sharegpt": "chat SFT JSONL, ShareGPT conversations with <image> and an images list",
    "agentnet": "one JSON line per task in AgentNet's shape (traj of image, code, thought, action)",
    "preference": "DPO pairs: a person's edit (chosen) against the model's reply (rejected)",
    "rollouts": "RL rollouts: final messages per run and rollouts.parquet with rewards",
    "parquet": "one row per step with the screenshot embedded (Hugging Face datasets)",
    "html": "a self-contained HTML report per run, with an index",
}


def exporter_class(name: str) -> type[Exporter]:
    """The exporter class of a format.

    Raises:
        ExportError: If no format has that name.
    """
    try:
        module, _, attr = EXPORTERS[name].partition(":")
    except KeyError:
        raise ExportError(
            f"unknown export format {name!r}", hint=f"choose one of: {', '.join(EXPORTERS)}"
        ) from None
    cls: type[Exporter] = getattr(importlib.import_module(module), attr)
    return cls
