"""A run's results name the commit of the code that ran: "+changes" when the code differs
from it, not when the work tree holds new results or prose (a session writes those while it
measures, and a run marked "+changes" for them could not be traced to its code)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from benchmarks.harness import cli

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@127.0.0.1", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "adaptive_spider").mkdir()
    (tmp_path / "adaptive_spider" / "crawl.py").write_text("ORDER = 'bestfirst'\n")
    (tmp_path / "README.md").write_text("# readme\n")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "start")
    monkeypatch.setattr(cli, "PROJECT", tmp_path)
    return tmp_path


def test_a_clean_tree_names_its_commit(repo: Path) -> None:
    assert cli._git_commit() == _git(repo, "rev-parse", "HEAD")


def test_new_results_and_prose_are_not_changes_to_the_code(repo: Path) -> None:
    (repo / "benchmarks" / "results" / "run").mkdir(parents=True)
    (repo / "benchmarks" / "results" / "run" / "results.json").write_text("{}\n")
    (repo / "docs").mkdir()
    (repo / "docs" / "notes.md").write_text("figures\n")
    (repo / "README.md").write_text("# readme, with this run's figures\n")
    assert cli._git_commit() == _git(repo, "rev-parse", "HEAD")


@pytest.mark.parametrize("path", ["adaptive_spider/crawl.py", "adaptive_spider/new_module.py"])
def test_changed_or_new_code_is_marked(repo: Path, path: str) -> None:
    (repo / path).write_text("ORDER = 'tres'\n")
    assert cli._git_commit() == _git(repo, "rev-parse", "HEAD") + "+changes"
