"""Safe defaults: no settings profile starts Scrapy's RemoteControl (an HTTP port
that runs code) or the telnet console, and everything the project serves listens
on 127.0.0.1 only — checked in the kernel's table of listening sockets."""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from scrapy.settings import Settings

from adaptive_spider.addon import AdaptiveAddon

PROJECT = Path(__file__).resolve().parent.parent
PROFILES = sorted(path.stem for path in (PROJECT / "settings_profiles").glob("*.py") if path.stem != "__init__")
UNSAFE = ("REMOTE_CONTROL_ENABLED", "TELNETCONSOLE_ENABLED")


def test_the_profiles_are_found():
    assert {"default", "polite", "fast", "javascript"} <= set(PROFILES)


@pytest.mark.parametrize("profile", PROFILES)
def test_every_profile_turns_off_remote_control_and_telnet(profile):
    module = importlib.import_module(f"settings_profiles.{profile}")
    settings = Settings()
    assert all(settings.getbool(name) for name in UNSAFE)  # Scrapy's own defaults: both on
    settings.setmodule(module, priority="project")
    for name in UNSAFE:
        assert getattr(module, name) is False, f"{profile}: {name}"
        assert settings.getbool(name) is False, f"{profile}: {name}"
    AdaptiveAddon().update_settings(settings)  # and the add-on does not turn them on again
    assert not any(settings.getbool(name) for name in UNSAFE)


def test_the_addon_turns_them_off_in_any_project():
    settings = Settings()
    AdaptiveAddon().update_settings(settings)
    assert not any(settings.getbool(name) for name in UNSAFE)
    settings.set("TELNETCONSOLE_ENABLED", True, "project")  # a project may still ask for it
    assert settings.getbool("TELNETCONSOLE_ENABLED")


def test_a_real_crawl_enables_neither(trap_crawl):
    site, url, log, items, report = trap_crawl
    enabled = log.split("Enabled extensions:", 1)[1].split("]", 1)[0]
    assert "CoreStats" in enabled
    assert "RemoteControl" not in enabled and "TelnetConsole" not in enabled


# -- servers ------------------------------------------------------------------------------------
def listening_addresses(port: int) -> set[str]:
    """Local addresses with a socket listening on ``port`` (from /proc/net/tcp and tcp6)."""
    found = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        if not os.path.exists(table):
            continue
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            address, hex_port = fields[1].split(":")
            if fields[3] == "0A" and int(hex_port, 16) == port:
                if width == 8:
                    found.add(".".join(str(b) for b in reversed(bytes.fromhex(address))))
                else:
                    found.add(address)
    return found


def serve_and_check(command: list[str], tmp_path: Path) -> set[str]:
    """Start a server command with its default host, read the port it prints, and
    return the addresses it listens on."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONPATH": str(PROJECT)}
    process = subprocess.Popen(
        command, cwd=PROJECT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        line = process.stdout.readline()
        match = re.search(r"http://[^/\s:]+:(\d+)", line)
        assert match, line
        return listening_addresses(int(match.group(1)))
    finally:
        process.terminate()
        process.wait(10)


@pytest.fixture(scope="module")
def search_index(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("index")
    (tmp / "items.jsonl").write_text(
        json.dumps({"url": "http://a.test/", "title": "Stars", "text": "telescope"}) + "\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "scrapy", "index", "--input", str(tmp / "items.jsonl"), "--index", str(tmp / "index")],
        cwd=PROJECT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    return tmp / "index"


@pytest.mark.parametrize(
    "server",
    ["demo site", "trap site", "search result page", "offline web proxy"],
)
def test_everything_served_listens_on_loopback_only(server, tmp_path, request):
    if server == "demo site":
        command = [sys.executable, "-m", "adaptive_spider.demo.site", "--port", "0"]
    elif server == "trap site":
        command = [sys.executable, "-m", "adaptive_spider.demo.traps", "--port", "0"]
    elif server == "search result page":
        index = request.getfixturevalue("search_index")
        command = [sys.executable, "-m", "scrapy", "searchserver", "--index", str(index), "--port", "0"]
    else:
        (tmp_path / "index.html").write_text("<html><body>hello</body></html>")
        command = [sys.executable, "-m", "benchmarks.webbench.server", "--port", "0", "--folder", str(tmp_path)]
    assert serve_and_check(command, tmp_path) == {"127.0.0.1"}


# -- a project's own SCHEDULER --------------------------------------------------------------------
@pytest.mark.parametrize(
    "scheduler, warned",
    [
        (None, False),
        ("adaptive_spider.crawl.scheduler.AdaptiveScheduler", False),
        ("adaptive_spider.distributed.scheduler.DistributedScheduler", False),
        ("scrapy.core.scheduler.Scheduler", True),
        ("scrapy_redis.scheduler.Scheduler", True),
    ],
)
def test_a_project_scheduler_that_overrides_the_addons_is_named_with_the_fix(scheduler, warned, caplog):
    import logging

    from scrapy import Spider
    from scrapy.utils.test import get_crawler

    settings = {"ADDONS": {"adaptive_spider.addon.AdaptiveAddon": 0}, "ADAPTIVE_QUERY": "widgets"}
    if scheduler:
        settings["SCHEDULER"] = scheduler
    with caplog.at_level(logging.WARNING, logger="adaptive_spider.addon"):
        crawler = get_crawler(Spider, settings)
    messages = [record.getMessage() for record in caplog.records if record.name == "adaptive_spider.addon"]
    assert bool(messages) == warned, messages
    if warned:
        assert scheduler in messages[0] and "AdaptiveScheduler" in messages[0]
        assert ("DistributedScheduler" in messages[0]) == scheduler.startswith("scrapy_redis")
    else:
        assert crawler.settings["SCHEDULER"] in (scheduler, "adaptive_spider.crawl.scheduler.AdaptiveScheduler")
