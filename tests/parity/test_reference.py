"""The reference worker itself: it loads OSWorld's modules without their package __init__ files."""

from __future__ import annotations

import pytest

from tests.parity.reference import Reference, ReferenceError


def test_worker_calls_a_reference_function(reference: Reference) -> None:
    # OSWorld's prompt module: loading it must not run mm_agents/__init__ (which imports model SDKs).
    value = reference.exec(
        "result = isinstance(m0.SYS_PROMPT_IN_SCREENSHOT_OUT_CODE, str)", modules=("mm_agents.prompts",)
    )
    assert value is True


def test_worker_reports_reference_errors(reference: Reference) -> None:
    with pytest.raises(ReferenceError, match="ZeroDivisionError"):
        reference.exec("result = 1 / 0")
