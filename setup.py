# Shim so that `scrapyd-deploy` can build an egg; the metadata lives in pyproject.toml.
from setuptools import setup

setup()
