"""A small suite of quick terminal tasks for batch tests and the batch bench (tasks/ holds too few).

Each task opens an xterm, and its reference solution writes one word into a file of its own on the
Desktop; the evaluator reads the file back. Two domains, so per-domain results have something to show.
"""

from __future__ import annotations

import json
from pathlib import Path

WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
    "kilo",
    "lima",
    "mike",
    "november",
    "oscar",
    "papa",
]
DOMAINS = ("os", "terminal")


def task(index: int, domain: str) -> dict[str, object]:
    """One task: write ``WORDS[index]`` into ``~/Desktop/word_<index>.txt`` in the open terminal."""
    word = WORDS[index % len(WORDS)]
    name = f"word_{index:02d}.txt"
    return {
        "id": f"batch-{domain}-{index:02d}",
        "snapshot": domain,
        "instruction": f"In the open terminal, write the word {word} into {name} on my Desktop.",
        "source": "osw-studio-tests",
        "config": [
            {
                "type": "execute",
                "parameters": {
                    "command": f'mkdir -p "$HOME/Desktop" && rm -f "$HOME/Desktop/{name}"',
                    "shell": True,
                },
            },
            {
                "type": "launch",
                "parameters": {"command": ["xterm", "-geometry", "100x30+200+150", "-title", "Terminal"]},
            },
            {"type": "sleep", "parameters": {"seconds": 0.5}},
        ],
        "related_apps": [domain],
        "evaluator": {
            "func": "exact_match",
            "result": {"type": "vm_command_line", "command": f'cat "$HOME/Desktop/{name}"', "shell": True},
            "expected": {"type": "rule", "rules": {"expected": f"{word}\n"}},
        },
        "solution": [
            {"actions": [{"kind": "click", "x": 500, "y": 340}], "note": "focus the terminal"},
            {"actions": [{"kind": "typing", "text": f"echo {word} > ~/Desktop/{name}\n"}]},
            {"actions": [{"kind": "done"}]},
        ],
    }


def write_suite(root: Path, count: int = 12) -> Path:
    """Write ``count`` tasks under ``root/examples/<domain>/`` and an index; return the index path."""
    index: dict[str, list[str]] = {d: [] for d in DOMAINS}
    for i in range(count):
        domain = DOMAINS[i % len(DOMAINS)]
        data = task(i, domain)
        folder = root / "examples" / domain
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{data['id']}.json").write_text(json.dumps(data, indent=2))
        index[domain].append(str(data["id"]))
    path = root / "suite.json"
    path.write_text(json.dumps(index, indent=2))
    return path
