"""Scrapy's own scheduler tests, run against AdaptiveScheduler (bfs strategy).

The tests come from the sdist of the installed Scrapy version (downloaded once
from the package index into a cache). Deselected are the cases that test parts
of Scrapy's default scheduler that AdaptiveScheduler replaces by design: the
DownloaderAwarePriorityQueue (its slot fairness, its JOBDIR migration error,
its CONCURRENT_REQUESTS_PER_IP check) and the stats names of Scrapy's disk and
memory queues.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import scrapy

DESELECT = [
    "tests/test_scheduler.py::TestMigration",
    "tests/test_scheduler.py::TestSchedulerWithDownloaderAwareInMemory",
    "tests/test_scheduler.py::TestSchedulerWithDownloaderAwareOnDisk",
    "tests/test_scheduler.py::TestIncompatibility",
    "tests/test_scheduler.py::test_unserializable_requests",
]
CACHE = Path(os.environ.get("ADAPTIVE_CACHE_DIR", Path.home() / ".cache" / "adaptive_spider"))


def scrapy_sdist() -> Path:
    archive = CACHE / f"scrapy-{scrapy.__version__}.tar.gz"
    if not archive.exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        command = [
            sys.executable,
            "-m",
            "pip",
            "download",
            f"scrapy=={scrapy.__version__}",
            "--no-deps",
            "--no-binary",
            ":all:",
            "--dest",
            str(CACHE),
            "--quiet",
        ]
        done = subprocess.run(command, capture_output=True, text=True, timeout=300)
        if done.returncode != 0 or not archive.exists():
            pytest.skip(f"could not download Scrapy's sdist from the package index: {done.stderr.strip()[-200:]}")
    return archive


def test_scrapy_scheduler_suite_passes(tmp_path):
    with tarfile.open(scrapy_sdist()) as tar:
        tar.extractall(tmp_path, filter="data")
    source = tmp_path / f"scrapy-{scrapy.__version__}"
    project = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project), str(project / "tests"), str(source)])}
    command = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "scrapy_suite_plugin",
        "-p",
        "no:cacheprovider",
        "--reactor=asyncio",
        "tests/test_scheduler.py",
        "tests/test_scheduler_base.py",
    ]
    for node in DESELECT:
        command += ["--deselect", node]
    done = subprocess.run(command, cwd=source, env=env, capture_output=True, text=True, timeout=600)
    summary = done.stdout.strip().splitlines()[-1] if done.stdout.strip() else done.stderr[-500:]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert " passed" in summary and "failed" not in summary
    assert int(summary.split(" passed")[0].split()[-1]) >= 18
