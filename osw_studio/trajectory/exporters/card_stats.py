"""What an export wrote, counted for its dataset card (the card module writes it; every exporter counts)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field


@dataclass
class CardStats:
    """Counts of what an export wrote, for its card."""

    runs: list[str] = field(default_factory=list)
    models: Counter[str] = field(default_factory=Counter)
    agents: Counter[str] = field(default_factory=Counter)
    sources: Counter[str] = field(default_factory=Counter)
    origins: Counter[str] = field(default_factory=Counter)
    images: Counter[tuple[int | None, int | None, str]] = field(default_factory=Counter)
    spaces: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)

    def count(
        self,
        source: str,
        *,
        origin: str | None = None,
        image: tuple[int | None, int | None, str] | None = None,
        space: str | None = None,
        n: int = 1,
    ) -> None:
        """Count ``n`` samples (or steps) of ``source``."""
        self.sources[source] += n
        if origin is not None:
            self.origins[origin] += n
        if image is not None:
            self.images[image] += 1
        if space is not None:
            self.spaces[space] += n

    def note(self, text: str) -> None:
        """Add a line to the card's notes (once)."""
        if text not in self.notes:
            self.notes.append(text)
