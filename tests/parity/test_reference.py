"""The reference worker itself: it loads OSWorld's modules without their package __init__ files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.parity.reference import Reference, ReferenceError, reference_osworld


def test_worker_calls_a_reference_function(reference: Reference) -> None:
    # OSWorld's prompt module: loading it must not run mm_agents/__init__ (which imports model SDKs).
    value = reference.exec(
        "result = isinstance(m0.SYS_PROMPT_IN_SCREENSHOT_OUT_CODE, str)", modules=("mm_agents.prompts",)
    )
    assert value is True


def test_worker_reports_reference_errors(reference: Reference) -> None:
    with pytest.raises(ReferenceError, match="ZeroDivisionError"):
        reference.exec("result = 1 / 0")


def test_worker_judges_with_the_code_at_the_tasks_commit(reference: Reference) -> None:
    # The default judge is the upstream checkout beside the task files, not the installed package.
    loaded = reference.describe()
    checkout = reference_osworld()
    if checkout is None:
        assert loaded["reference"] == "package" and loaded["version"]
    else:
        assert loaded["reference"] == "checkout"
        assert Path(loaded["path"]) == (checkout / "desktop_env").resolve()
    module = reference.exec("result = m0.__file__", modules=("desktop_env.evaluators.metrics.vscode",))
    assert Path(module).is_relative_to(loaded["path"])
