"""Packaging: the runtime dependencies are what the package imports, a wheel installs
``adaptive_spider`` alone (no generic ``spiders`` or ``settings_profiles``), the egg
``scrapyd-deploy`` builds still holds the whole Scrapy project, and the README's
``CrawlerProcess`` example (docs/examples/crawl_from_python.py) crawls."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import packages_distributions
from pathlib import Path

import tomllib

from adaptive_spider.demo.site import QUERY
from tests.deploy.conftest import _IGNORED, PROJECT, clean_env

PYPROJECT = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))
SELF_STOP_REASONS = {"sufficient", "plateau", "no_promising_links"}


def requirement_name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def imported_modules(path: Path) -> tuple[set[str], set[str]]:
    """Top-level modules a file imports: (when the module is imported, only when used).
    A module-level import outside ``try`` and ``if TYPE_CHECKING`` is eager; the rest is lazy."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    eager: set[str] = set()
    lazy: set[str] = set()

    def visit(node: ast.AST, top_level: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom):
                if isinstance(child, ast.ImportFrom) and (child.level or not child.module):
                    continue
                names = [alias.name for alias in child.names] if isinstance(child, ast.Import) else [child.module]
                (eager if top_level else lazy).update(name.split(".")[0] for name in names)
            elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue  # never imported at runtime
            else:
                still_top = top_level and not isinstance(
                    child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Try | ast.Lambda
                )
                visit(child, still_top)

    visit(tree, True)
    return eager, lazy


def third_party(modules: set[str]) -> set[str]:
    return {module for module in modules if module not in sys.stdlib_module_names and module != "adaptive_spider"}


def distributions(module: str) -> set[str]:
    return {name.lower().replace("_", "-") for name in packages_distributions().get(module, [module])}


def test_the_runtime_dependencies_are_what_the_package_imports():
    declared = {requirement_name(requirement) for requirement in PYPROJECT["project"]["dependencies"]}
    extras = PYPROJECT["project"]["optional-dependencies"]
    optional = {
        requirement_name(requirement)
        for name in ("javascript", "distributed", "classifier", "embedding")
        for requirement in extras[name]
    }
    eager: set[str] = set()
    lazy: set[str] = set()
    for path in (PROJECT / "adaptive_spider").rglob("*.py"):
        now, later = imported_modules(path)
        eager |= third_party(now)
        lazy |= third_party(later)
    eager_distributions = {name for module in eager for name in distributions(module)}
    lazy_distributions = {name for module in lazy for name in distributions(module)}
    # Everything imported when a module is imported is a dependency; the optional parts are imported lazily.
    assert eager_distributions <= declared, sorted(eager_distributions - declared)
    assert lazy_distributions <= declared | optional, sorted(lazy_distributions - declared - optional)
    # And every dependency is imported: the benchmarks' rank-bm25 and matplotlib are extras.
    assert declared <= eager_distributions | lazy_distributions, sorted(
        declared - eager_distributions - lazy_distributions
    )
    assert {"rank-bm25", "matplotlib"} <= {requirement_name(requirement) for requirement in extras["bench"]}


def test_a_missing_extra_names_the_extra():
    code = (
        "import sys; sys.modules['scrapy_playwright'] = None; sys.modules['scrapy_redis'] = None\n"
        "from scrapy.settings import Settings\n"
        "from adaptive_spider.profiles import DistributedAddon, JavascriptAddon\n"
        "from adaptive_spider.extract.actions import Action\n"
        "for use in (lambda: JavascriptAddon().update_settings(Settings()),\n"
        "            lambda: DistributedAddon().update_settings(Settings()),\n"
        "            lambda: Action('wait', milliseconds=10).page_methods()):\n"
        "    try:\n"
        "        use()\n"
        "    except ImportError as exc:\n"
        "        print(exc)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True, env=clean_env())
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines == [
        "the javascript profile (JavascriptAddon) needs scrapy-playwright: pip install 'adaptive-spider[javascript]'",
        "the distributed profile (DistributedAddon) needs scrapy-redis and redis: pip install 'adaptive-spider[distributed]'",
        "a template with browser actions needs scrapy-playwright: pip install 'adaptive-spider[javascript]'",
    ], run.stdout


def build(command: list, cwd: Path) -> None:
    run = subprocess.run(command, cwd=cwd, capture_output=True, text=True, env=clean_env())
    assert run.returncode == 0, (run.stdout + run.stderr)[-3000:]


def top_level(archive: Path, info: str) -> tuple[set[str], str]:
    """The top-level names of a wheel's or egg's files, and its entry_points.txt."""
    with zipfile.ZipFile(archive) as zipped:
        names = zipped.namelist()
        entry_points = zipped.read(next(name for name in names if name.endswith(f"{info}/entry_points.txt"))).decode()
        listed = zipped.read(next(name for name in names if name.endswith(f"{info}/top_level.txt"))).decode().split()
    assert set(listed) <= {name.split("/")[0] for name in names}
    return {name.split("/")[0] for name in names if not name.split("/")[0].endswith(info)}, entry_points


def test_a_wheel_installs_adaptive_spider_alone_and_an_egg_the_whole_project(scrapyd_env, tmp_path):
    copy = tmp_path / "adaptive_spider"
    shutil.copytree(PROJECT, copy, ignore=_IGNORED)
    # The egg first, as scrapyd-deploy builds it: a wheel built afterwards from the same
    # checkout must not take the project's packages from the egg's build files.
    build([scrapyd_env / "bin" / "python", "setup.py", "-q", "bdist_egg", "-d", tmp_path / "egg"], copy)
    build(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "-q",
            "--no-deps",
            "--disable-pip-version-check",
            "-w",
            tmp_path / "wheel",
            ".",
        ],
        copy,
    )

    (egg,) = (tmp_path / "egg").glob("*.egg")
    packages, entry_points = top_level(egg, "EGG-INFO")
    assert packages == {"adaptive_spider", "spiders", "settings_profiles"}
    assert "[scrapy]\nsettings = settings_profiles.default" in entry_points  # what scrapyd's runner reads
    assert "[scrapy.commands]" in entry_points

    (wheel,) = (tmp_path / "wheel").glob("*.whl")
    packages, entry_points = top_level(wheel, ".dist-info")
    assert packages == {"adaptive_spider"}
    assert "[scrapy]" not in entry_points and "[scrapy.commands]" in entry_points
    with zipfile.ZipFile(wheel) as zipped:
        names = set(zipped.namelist())
    assert {"adaptive_spider/search/static/search.css", "adaptive_spider-0.1.0.dist-info/licenses/LICENSE"} <= names


def test_the_crawler_process_example_of_the_readme_crawls(small_site, tmp_path):
    _, url = small_site
    example = PROJECT / "docs" / "examples" / "crawl_from_python.py"
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    code = example.read_text(encoding="utf-8")
    # The README shows the example's code, from its imports to its end.
    assert f"```python\n{code[code.index('import sys') :]}```" in readme
    # Away from the project (no scrapy.cfg): what a pip install gives.
    env = clean_env(PYTHONPATH=os.pathsep.join([str(PROJECT), os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run(
        [sys.executable, example, url, QUERY], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=180
    )
    assert run.returncode == 0, run.stderr[-3000:]
    match = re.search(r"finish reason: (\w+); (\d+) pages", run.stdout)
    assert match, run.stdout + run.stderr[-3000:]
    assert match[1] in SELF_STOP_REASONS and int(match[2]) > 0, run.stdout
