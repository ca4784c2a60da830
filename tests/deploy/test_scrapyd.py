"""Deploying to Scrapyd: the egg ``scrapyd-deploy`` builds holds the whole
project and reads its data from inside the zip; a job scheduled through
``schedule.json`` runs a focused crawl whose items and log scrapyd serves, and
it reaches the same relevant pages as ``scrapy crawl focused``."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import time
import zipfile

from scrapy.settings import Settings

from adaptive_spider.demo.site import QUERY
from adaptive_spider.items import PageItem
from spiders.focused import FocusedSpider
from tests.deploy.conftest import BUDGET, PROJECT, clean_env, deploy, relevant_urls

PACKAGES = ("adaptive_spider", "spiders", "settings_profiles")

# Runs in the Scrapyd environment with only the egg on sys.path: the product's
# own code paths that read packaged data (the result page and its assets).
EGG_CHECK = """
import hashlib, sys, tempfile
egg = sys.argv[1]
sys.path.insert(0, egg)
import adaptive_spider
assert adaptive_spider.__file__.startswith(egg), adaptive_spider.__file__
from adaptive_spider.search import SearchIndex
from adaptive_spider.search.webapp import SearchApp
with tempfile.TemporaryDirectory() as directory:
    index = SearchIndex.create(directory + "/index", fields=["title", "text"], id_field="url")
    index.add([{"url": "http://example.test/", "title": "Telescopes", "text": "a telescope"}])
    index.commit()
    app = SearchApp({"crawl": index})
    for target in ("/static/search.css", "/static/search.js", "/?q=telescope"):
        status, kind, body = app.respond(target)
        print(target, status, hashlib.sha1(body).hexdigest(), body.count(b"Telescopes"))
"""


def source_files(package: str) -> set[str]:
    root = PROJECT / package
    return {
        path.relative_to(PROJECT).as_posix()
        for path in root.rglob("*")
        if path.is_file() and "__pycache__" not in path.parts
    }


def test_package_code_reads_no_file_beside_its_modules():
    # Inside a zipped egg there is no directory: packaged data must be read with
    # importlib.resources, never through a module's __file__.
    offenders = [
        name
        for package in PACKAGES
        for name in source_files(package)
        if name.endswith(".py") and re.search(r"\b__file__\b", (PROJECT / name).read_text(encoding="utf-8"))
    ]
    assert offenders == []


def test_the_egg_holds_the_project_and_its_data_reads_from_the_zip(project_copy, scrapyd_env, tmp_path):
    egg = tmp_path / "adaptive_spider.egg"
    build = subprocess.run(
        [scrapyd_env / "bin" / "scrapyd-deploy", f"--build-egg={egg}"],
        cwd=project_copy,
        capture_output=True,
        text=True,
        env=clean_env(),
    )
    assert build.returncode == 0, build.stderr
    with zipfile.ZipFile(egg) as archive:
        names = set(archive.namelist())
        entry_points = archive.read("EGG-INFO/entry_points.txt").decode()
    for package in PACKAGES:
        missing = source_files(package) - names
        assert not missing, f"not in the egg: {sorted(missing)}"
    assert "settings = settings_profiles.default" in entry_points  # what scrapyd's runner reads

    # Outside the egg, the Scrapyd environment has no adaptive_spider at all.
    bare = subprocess.run(
        [scrapyd_env / "bin" / "python", "-c", "import adaptive_spider"],
        cwd=tmp_path,
        capture_output=True,
        env=clean_env(),
    )
    assert bare.returncode != 0
    run = subprocess.run(
        [scrapyd_env / "bin" / "python", "-c", EGG_CHECK, str(egg)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=clean_env(),
    )
    assert run.returncode == 0, run.stderr
    served = {line.split()[0]: line.split()[1:] for line in run.stdout.splitlines()}
    static = PROJECT / "adaptive_spider" / "search" / "static"
    for name in ("search.css", "search.js"):
        assert served[f"/static/{name}"][:2] == ["200", hashlib.sha1((static / name).read_bytes()).hexdigest()]
    status, _, hits = served["/?q=telescope"]
    assert status == "200" and int(hits) >= 1


def test_the_focused_spider_takes_the_job_id_scrapyd_passes():
    spider = FocusedSpider(query=QUERY, start_urls="http://127.0.0.1/", _job="0123abcd")
    assert spider._job == "0123abcd"
    FocusedSpider.check_arguments(Settings(), query=QUERY, start_urls="http://127.0.0.1/", _job="0123abcd")


def add_deploy_target(project_copy, url: str) -> None:
    config = project_copy / "scrapy.cfg"
    text = config.read_text(encoding="utf-8")
    if "[deploy:test]" not in text:
        config.write_text(f"{text}\n[deploy:test]\nurl = {url}\nproject = adaptive_spider\n", encoding="utf-8")


def test_a_scrapyd_job_runs_a_focused_crawl(project_copy, scrapyd, small_site, focused_reference):
    site, url = small_site
    add_deploy_target(project_copy, scrapyd.url)
    deploy = subprocess.run(
        [scrapyd.venv / "bin" / "scrapyd-deploy", "test", "--version", "1"],
        cwd=project_copy,
        capture_output=True,
        text=True,
        env=clean_env(),
    )
    assert deploy.returncode == 0, deploy.stderr
    response = json.loads(deploy.stdout)  # scrapyd listed the egg's spiders to accept it
    assert response["status"] == "ok" and response["spiders"] == 2, response

    scheduled = scrapyd.post(
        "schedule.json",
        [
            ("project", "adaptive_spider"),
            ("spider", "focused"),
            ("query", QUERY),
            ("start_urls", url),
            ("setting", f"CLOSESPIDER_PAGECOUNT={BUDGET}"),
            ("setting", "ADAPTIVE_SELF_STOP=False"),  # same budget-only crawl as the reference
            ("setting", "ROBOTSTXT_OBEY=False"),
        ],
    )
    assert scheduled["status"] == "ok", scheduled
    job = scrapyd.wait_for_job("adaptive_spider", scheduled["jobid"])

    # What scrapyd serves: the job's items and its log.
    items = [json.loads(line) for line in scrapyd.get(job["items_url"].lstrip("/")).splitlines()]
    log = scrapyd.get(job["log_url"].lstrip("/")).decode()
    assert "AdaptiveScheduler: strategy bestfirst" in log
    assert "'finish_reason': 'closespider_pagecount'" in log
    assert BUDGET <= len(items) <= BUDGET + 2 * 16  # pages on their way at the budget still arrive
    assert set(items[0]) == set(PageItem.fields)
    reached = {item["url"] for item in items} & relevant_urls(site, url)
    # The whole relevant region, within a budget of 40% of the site: the same pages
    # as `scrapy crawl focused`.
    assert reached == focused_reference == relevant_urls(site, url)


def job_output(scrapyd, job_id: str, timeout: float = 15) -> str:
    """scrapyd's log from a job's start to its end: what the job's process wrote
    to stderr (scrapyd logs it in chunks; a chunk's later lines have no prefix)."""
    deadline = time.monotonic() + timeout
    while True:
        output = (scrapyd.home / "scrapyd.out").read_text(errors="replace")
        start = output.find(f"Process started: project='adaptive_spider' spider='focused' job='{job_id}'")
        end = re.search(rf"Process (?:finished|died): [^\n]*job='{job_id}'", output)
        if end or time.monotonic() > deadline:
            return output[start : end.start() if end else len(output)]
        time.sleep(0.2)


def test_a_job_without_a_query_fails_with_a_one_line_reason(project_copy, scrapyd, small_site):
    _, url = small_site
    deploy(project_copy, scrapyd)
    scheduled = scrapyd.post(
        "schedule.json", [("project", "adaptive_spider"), ("spider", "focused"), ("start_urls", url)]
    )
    scrapyd.wait_for_job("adaptive_spider", scheduled["jobid"])
    output = job_output(scrapyd, scheduled["jobid"])
    assert 'error: query: missing or empty; run with -a query="what to crawl for"' in output, output
    assert "Traceback" not in output


def test_a_scrapyd_job_chooses_a_profile_by_its_addon(project_copy, scrapyd, small_site):
    # One setting= field, ADDONS as JSON: the job runs the polite profile's add-on instead of the default's.
    _, url = small_site
    deploy(project_copy, scrapyd)
    scheduled = scrapyd.post(
        "schedule.json",
        [
            ("project", "adaptive_spider"),
            ("spider", "focused"),
            ("query", QUERY),
            ("start_urls", url),
            ("setting", 'ADDONS={"adaptive_spider.profiles.PoliteAddon": 0}'),
            ("setting", "CLOSESPIDER_PAGECOUNT=3"),
            ("setting", "ROBOTSTXT_OBEY=False"),
        ],
    )
    assert scheduled["status"] == "ok", scheduled
    job = scrapyd.wait_for_job("adaptive_spider", scheduled["jobid"])
    log = scrapyd.get(job["log_url"].lstrip("/")).decode()
    enabled = log.split("Enabled addons:", 1)[1].split("]", 1)[0]
    assert "adaptive_spider.profiles.PoliteAddon" in enabled and "DefaultProfileAddon" not in enabled
    overridden = log.split("Overridden settings:", 1)[1].split("}", 1)[0]
    for setting in (
        "'CONCURRENT_REQUESTS_PER_DOMAIN': 1",
        "'DOWNLOAD_DELAY': 1.0",
        "'AUTOTHROTTLE_ENABLED': True",
        "'DEPTH_LIMIT': 50",
    ):
        assert setting in overridden, overridden
    assert "AdaptiveScheduler: strategy bestfirst" in log
    assert "'finish_reason': 'closespider_pagecount'" in log
