"""Bad input: every row of the table in docs/robustness.md is run as a real
``scrapy crawl`` subprocess and must end at start with exit status 2 and the
documented one-line error as the last line of stderr — no traceback, no log."""

from __future__ import annotations

import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent.parent
DOCS = PROJECT / "docs" / "robustness.md"
START = "<!-- bad-input table: each row is a test (tests/test_bad_input.py) -->"
END = "<!-- end of bad-input table -->"


def table_rows() -> list[tuple[str, list[str], str]]:
    """(input, scrapy arguments, documented message) of each row of the docs' table."""
    block = DOCS.read_text(encoding="utf-8").split(START, 1)[1].split(END, 1)[0]
    rows = []
    for line in block.strip().splitlines()[2:]:  # after the header and the separator
        name, command, message = (cell.strip() for cell in line.strip().strip("|").split(" | "))
        arguments = shlex.split(command.strip("`"))
        assert arguments[0] == "scrapy", line
        rows.append((name, arguments[1:], message.strip("`")))
    return rows


ROWS = table_rows()


def run_scrapy(arguments: list[str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "scrapy", *arguments], cwd=PROJECT, capture_output=True, text=True, timeout=60
    )


@pytest.fixture(scope="module")
def outcomes() -> dict[str, subprocess.CompletedProcess]:
    """Every row's command, run four at a time (each is a separate Python process)."""
    with ThreadPoolExecutor(4) as pool:
        return dict(zip((name for name, _, _ in ROWS), pool.map(run_scrapy, (args for _, args, _ in ROWS))))


def test_the_table_covers_what_the_issue_asks():
    names = " ".join(name.lower() for name, _, _ in ROWS)
    for kind in (
        "unknown strategy",
        "out of range",
        "negative",
        "domain weight",
        "empty query",
        "invalid start url",
        "missing template file",
    ):
        assert kind in names, kind
    assert len(ROWS) >= 25


@pytest.mark.parametrize(("name", "arguments", "message"), ROWS, ids=[name for name, _, _ in ROWS])
def test_bad_input_gets_its_one_line_error_at_start(outcomes, name, arguments, message):
    done = outcomes[name]
    assert done.returncode == 2, done.stderr[-1500:]
    lines = done.stderr.strip().splitlines()
    assert lines[-1].endswith("error: " + message), lines[-1]
    assert "Traceback" not in done.stderr
    assert not [line for line in lines if " INFO: " in line or " ERROR: " in line]  # nothing started
    assert len(lines) <= 4  # Scrapy's usage block and the error
    assert done.stdout == ""
