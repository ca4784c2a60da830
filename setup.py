"""Shim so that ``scrapyd-deploy`` can build an egg; the metadata lives in pyproject.toml.

A wheel or an sdist (``pip install .``, ``pip wheel .``, ``python -m build``) installs
the ``adaptive_spider`` package only. An egg (``setup.py bdist_egg``, which is what
``scrapyd-deploy`` runs) is a deployment of this repository's Scrapy project, so it
also holds the project's ``spiders`` and ``settings_profiles`` packages and the
``scrapy: settings`` entry point from which Scrapyd reads the settings module.
Those generic top-level names never reach a pip install.
"""

from setuptools import find_packages, setup
from setuptools.dist import Distribution

#: What only a Scrapyd egg holds: the project's packages and its settings entry point.
PROJECT_PACKAGES = ["spiders", "settings_profiles"]
PROJECT_ENTRY_POINTS = {"scrapy": ["settings = settings_profiles.default"]}
EGG_COMMANDS = ("bdist_egg", "bdist_uberegg")
#: An egg's build directory, apart from a wheel's: a later `pip wheel .` of the same
#: checkout must not pick the project's packages up from a stale build/lib.
EGG_BUILD_DIR = "build/scrapyd-egg"


class ProjectDistribution(Distribution):
    """Adds the Scrapy project to the distribution when, and only when, an egg is built.

    (pyproject.toml's static metadata outranks setup() arguments, so the additions
    are made after the configuration is read, just before the commands run.)
    """

    def run_commands(self):
        if any(command in EGG_COMMANDS for command in self.commands):
            self.add_scrapy_project()
        super().run_commands()

    def add_scrapy_project(self):
        self.get_option_dict("build")["build_base"] = ("setup.py", EGG_BUILD_DIR)
        found = find_packages(include=[pattern for name in PROJECT_PACKAGES for pattern in (name, name + ".*")])
        self.packages = sorted(set(self.packages or []) | set(found))
        entry_points = {group: _as_list(lines) for group, lines in (self.entry_points or {}).items()}
        for group, lines in PROJECT_ENTRY_POINTS.items():
            entry_points[group] = sorted(set(entry_points.get(group, [])) | set(lines))
        self.entry_points = entry_points


def _as_list(lines):
    if isinstance(lines, str):
        return [line.strip() for line in lines.splitlines() if line.strip()]
    if isinstance(lines, dict):
        return [f"{name} = {value}" for name, value in lines.items()]
    return list(lines)


setup(distclass=ProjectDistribution)
