"""Fixtures of the deployment tests: a redis-server, a Scrapyd environment and
server, a copy of the project to deploy, and the reference focused crawl.

Scrapyd and scrapyd-client live in their own virtualenv (scrapyd's runner
imports ``pkg_resources``, so it needs setuptools < 81), built once with pip
and cached under ``~/.cache/adaptive_spider``. It has the project's
dependencies and its ``distributed`` extra (scrapy-redis, for distributed jobs)
but not the project: a job can only run the deployed egg.

``redis_server`` and ``scrapyd`` fail a test when they cannot run;
``redis_server_or_skip`` and ``scrapyd_or_skip`` skip it instead (for tests of
what needs both at once, on machines that may lack either).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest
import tomllib

from adaptive_spider.demo.site import QUERY, DemoSite, serve
from adaptive_spider.distributed.localredis import LocalRedis, free_port

PROJECT = Path(__file__).resolve().parents[2]
SCRAPYD_REQUIREMENTS = ["scrapyd>=1.5,<2", "scrapyd-client>=2,<3", "setuptools>=77,<81"]
#: Pages of the reference crawls of ``small_site`` (386 pages): its relevant
#: region (60 pages) lies behind generic hubs; a focused crawl has all of it by
#: then (in about 115 fetches), a breadth-first crawl none (it starts after ~300).
BUDGET = 150
_IGNORED = shutil.ignore_patterns(
    ".git", "__pycache__", "*.pyc", "*.egg-info", "build", "dist", ".venv", "*.jsonl", ".scrapy", "out"
)


def clean_env(**extra) -> dict:
    """The environment for a subprocess: no Scrapy project variables of the caller."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("SCRAPY_")}
    env.update(extra)
    return env


def relevant_urls(site, base_url: str) -> set[str]:
    return {base_url.rstrip("/") + path for path in site.relevant}


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


@pytest.fixture
def redis_server():
    if shutil.which("redis-server") is None:
        pytest.fail("redis-server is missing: apt-get install -y redis-server (scripts/setup-system does)")
    with LocalRedis() as server:
        yield server


@pytest.fixture
def redis_server_or_skip():
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server is missing: apt-get install -y redis-server (scripts/setup-system does)")
    try:
        server = LocalRedis().__enter__()
    except RuntimeError as error:
        pytest.skip(f"redis-server cannot run: {error}")
    try:
        yield server
    finally:
        server.__exit__(None, None, None)


@pytest.fixture(scope="session")
def small_site():
    """A smaller demo site (386 pages, 60 relevant), served on 127.0.0.1."""
    site = DemoSite(seed=0, hubs_per_topic=3, articles_per_hub=20)
    server, url = serve(site)
    yield site, url
    server.shutdown()


def start_crawl(
    spider: str,
    out: Path,
    *arguments: str,
    cwd: Path = PROJECT,
    self_stop: bool = False,
    log_level: str = "INFO",
    **env,
) -> subprocess.Popen:
    """Start ``scrapy crawl`` in a subprocess (no robots.txt): items to ``out``, log beside it.
    Budget only unless ``self_stop`` (these crawls are compared page for page)."""
    command = [
        sys.executable, "-m", "scrapy", "crawl", spider, *arguments,
        "-s", "ROBOTSTXT_OBEY=False", "-s", f"ADAPTIVE_SELF_STOP={self_stop}", "-s", f"LOG_LEVEL={log_level}",
        "-s", f"LOG_FILE={out.with_suffix('.log')}", "-O", str(out),
    ]  # fmt: skip
    process = subprocess.Popen(command, cwd=cwd, env=clean_env(**env), stderr=subprocess.PIPE, text=True)
    process.out = out
    return process


def finish(process: subprocess.Popen, timeout: float = 120) -> tuple[list[dict], str]:
    """Wait for a crawl started by :func:`start_crawl`; returns its items and its log."""
    _, errors = process.communicate(timeout=timeout)
    log_file = process.out.with_suffix(".log")
    log = log_file.read_text(encoding="utf-8") if log_file.exists() else ""
    assert process.returncode == 0, (errors + log)[-3000:]
    return read_jsonl(process.out), log


@pytest.fixture(scope="session")
def focused_reference(small_site, tmp_path_factory) -> set[str]:
    """Relevant pages ``scrapy crawl focused`` fetches within the budget."""
    site, url = small_site
    out = tmp_path_factory.mktemp("reference") / "pages.jsonl"
    items, _ = finish(
        start_crawl(
            "focused", out, "-a", f"query={QUERY}", "-a", f"start_urls={url}", "-s", f"CLOSESPIDER_PAGECOUNT={BUDGET}"
        )
    )
    return {item["url"] for item in items} & relevant_urls(site, url)


# -- Scrapyd ---------------------------------------------------------------------------------
class ScrapydUnavailable(Exception):
    """Scrapyd cannot run here: its environment cannot be built, or the server does not start."""


def project_requirements() -> list[str]:
    """The project's dependencies and its ``distributed`` extra (what a distributed job imports)."""
    project = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return project["dependencies"] + project["optional-dependencies"]["distributed"]


def scrapyd_venv() -> Path:
    """A cached virtualenv with scrapyd, scrapyd-client and the project's dependencies;
    raises :class:`ScrapydUnavailable` if pip cannot build it."""
    requirements = SCRAPYD_REQUIREMENTS + project_requirements()
    digest = hashlib.sha1("\n".join([sys.version, *requirements]).encode()).hexdigest()[:12]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "adaptive_spider"
    venv = cache / f"scrapyd-{digest}"
    if (venv / "ready").exists():
        return venv
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f"scrapyd-{digest}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another test process may be building it
        if not (venv / "ready").exists():
            shutil.rmtree(venv, ignore_errors=True)
            base_python = getattr(sys, "_base_executable", sys.executable)
            subprocess.run([base_python, "-m", "venv", str(venv)], check=True)
            install = subprocess.run(
                [venv / "bin" / "python", "-m", "pip", "install", "-q", "--disable-pip-version-check", *requirements],
                capture_output=True,
                text=True,
            )
            if install.returncode:
                raise ScrapydUnavailable(
                    f"cannot build the Scrapyd environment: {install.stderr.strip().splitlines()[-1:]}"
                )
            (venv / "ready").write_text("\n".join(requirements), encoding="utf-8")
    return venv


@pytest.fixture(scope="session")
def scrapyd_env() -> Path:
    try:
        return scrapyd_venv()
    except ScrapydUnavailable as error:
        pytest.fail(str(error))


@pytest.fixture(scope="session")
def project_copy(tmp_path_factory) -> Path:
    """The project as a user would deploy it, away from the working tree (the egg build writes files)."""
    copy = tmp_path_factory.mktemp("deploy") / "adaptive_spider"
    shutil.copytree(PROJECT, copy, ignore=_IGNORED)
    return copy


class Scrapyd:
    """A running scrapyd: its URL, home directory and JSON API."""

    def __init__(self, url: str, home: Path, venv: Path):
        self.url = url
        self.home = home
        self.venv = venv

    def get(self, path: str) -> bytes:
        with urllib.request.urlopen(self.url + path, timeout=10) as response:
            return response.read()

    def get_json(self, path: str) -> dict:
        return json.loads(self.get(path))

    def post(self, path: str, fields: list[tuple[str, str]]) -> dict:
        data = urllib.parse.urlencode(fields).encode()
        with urllib.request.urlopen(self.url + path, data=data, timeout=30) as response:
            return json.loads(response.read())

    def wait_for_job(self, project: str, job: str, timeout: float = 90) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            jobs = self.get_json(f"listjobs.json?project={project}")
            finished = [entry for entry in jobs["finished"] if entry["id"] == job]
            if finished:
                return finished[0]
            time.sleep(0.5)
        raise AssertionError(f"job {job} did not finish in {timeout} s: {jobs}")


SCRAPYD_CONF = """[scrapyd]
bind_address = 127.0.0.1
http_port = {port}
eggs_dir = eggs
logs_dir = logs
items_dir = items
dbs_dir = dbs
poll_interval = 0.5
max_proc = 2
"""


@pytest.fixture(scope="session")
def scrapyd_server(tmp_path_factory):
    """One scrapyd for the session, or why it cannot run (a string): :func:`scrapyd` fails
    on that, :func:`scrapyd_or_skip` skips."""
    try:
        venv = scrapyd_venv()
    except ScrapydUnavailable as error:
        yield str(error)
        return
    home = tmp_path_factory.mktemp("scrapyd")
    port = free_port()
    (home / "scrapyd.conf").write_text(SCRAPYD_CONF.format(port=port), encoding="utf-8")
    with open(home / "scrapyd.out", "wb") as output:
        # Unbuffered: the tests read jobs' stderr lines from scrapyd's own log.
        process = subprocess.Popen(
            [venv / "bin" / "scrapyd"],
            cwd=home,
            stdout=output,
            stderr=subprocess.STDOUT,
            env=clean_env(PYTHONUNBUFFERED="1"),
        )
    server = Scrapyd(f"http://127.0.0.1:{port}/", home, venv)
    deadline = time.monotonic() + 30
    while True:
        try:
            if server.get_json("daemonstatus.json")["status"] == "ok":
                break
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                process.wait()
                yield f"scrapyd did not start: {(home / 'scrapyd.out').read_text(errors='replace')[-2000:]}"
                return
            time.sleep(0.2)
    yield server
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()


@pytest.fixture
def scrapyd(scrapyd_server) -> Scrapyd:
    if isinstance(scrapyd_server, str):
        pytest.fail(scrapyd_server)
    return scrapyd_server


@pytest.fixture
def scrapyd_or_skip(scrapyd_server) -> Scrapyd:
    if isinstance(scrapyd_server, str):
        pytest.skip(scrapyd_server)
    return scrapyd_server


def deploy(project_copy: Path, scrapyd: Scrapyd) -> None:
    """Deploy the project (once per scrapyd) with scrapyd-deploy, as a user does."""
    config = project_copy / "scrapy.cfg"
    text = config.read_text(encoding="utf-8")
    if "[deploy:test]" not in text:
        config.write_text(f"{text}\n[deploy:test]\nurl = {scrapyd.url}\nproject = adaptive_spider\n", encoding="utf-8")
    if "adaptive_spider" not in scrapyd.get_json("listprojects.json")["projects"]:
        subprocess.run(
            [scrapyd.venv / "bin" / "scrapyd-deploy", "test"],
            cwd=project_copy,
            check=True,
            capture_output=True,
            env=clean_env(),
        )
