"""The sandboxed runner of a task's test code keeps a bounded amount of the test's output."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap"),
]

# VmHWM, not ru_maxrss: the latter keeps the pytest process's peak from before the child's exec.
CHILD = """
import json, sys
from osw_studio.evaluation.metrics.python_suite import check_python_file_by_test_suite
score = check_python_file_by_test_suite(None, sys.argv[1])
peak = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print(json.dumps({"score": score, "rss_mb": int(peak.split()[1]) / 1024}))
"""


def test_a_test_that_prints_hundreds_of_megabytes_costs_the_host_no_memory(tmp_path: Path) -> None:
    test_file = tmp_path / "suite.py"
    test_file.write_text(
        "import os\n"
        "def test():\n"
        "    block = b'y' * (1 << 20)\n"
        "    for _ in range(400):\n"
        "        os.write(1, block)\n"
        "        os.write(2, block)\n"
        "    return True\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(test_file)], capture_output=True, text=True, timeout=100, check=True
    )
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    assert figures["score"] == 1.0
    assert figures["rss_mb"] < 200, figures  # 800 MB went through; only the streams' ends are kept
