"""What an env sees of its guest at one moment."""

from __future__ import annotations

import time

from pydantic import BaseModel, ConfigDict, Field


class Observation(BaseModel):
    """One observation of the guest.

    Attributes:
        screenshot: The screen as an encoded image (PNG unless ``image_format`` says otherwise).
        image_format: ``png`` or ``jpeg``.
        width: Screen width in pixels (the coordinate space of every action).
        height: Screen height in pixels.
        accessibility_tree: OSWorld's accessibility XML, when it was asked for and available.
        terminal: The text of the focused terminal, when available.
        timestamp: When the screen was grabbed (seconds since the epoch).
    """

    model_config = ConfigDict(frozen=True)

    screenshot: bytes = Field(repr=False)
    image_format: str = "png"
    width: int = Field(gt=0)
    height: int = Field(gt=0)
    accessibility_tree: str | None = Field(default=None, repr=False)
    terminal: str | None = Field(default=None, repr=False)
    timestamp: float = Field(default_factory=time.time)

    @property
    def size(self) -> tuple[int, int]:
        """``(width, height)`` of the screen."""
        return (self.width, self.height)
