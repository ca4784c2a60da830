"""Fixtures shared by the tests of the tools that read harness runs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.harness.demo import write_demo

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def traced_run(tmp_path_factory):
    """A harness run with traces: the demo site (164 pages), bestfirst, 120 pages."""
    folder = tmp_path_factory.mktemp("demo")
    site, topics, demo = write_demo(folder, hubs_per_topic=2, articles_per_hub=12)
    out = folder / "out"
    command = [
        sys.executable, "-m", "benchmarks.harness", "--folder", str(site), "--topics", str(topics),
        "--out", str(out), "--no-warmup", "--strategies", "bestfirst", "--budget", "120", "--traces",
    ]  # fmt: skip
    completed = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr[-2000:]
    return out, demo
