"""Configurable extraction: templates of fields, pagination scope and browser actions.

``Template.from_file(path)`` reads a YAML or JSON template; see docs/extraction.md.
"""

from adaptive_spider.extract.actions import Action
from adaptive_spider.extract.errors import TemplateError
from adaptive_spider.extract.fields import CleanupRule, Field, normalize_space, to_number
from adaptive_spider.extract.schema import Options
from adaptive_spider.extract.template import Template

__all__ = [
    "Action",
    "CleanupRule",
    "Field",
    "Options",
    "Template",
    "TemplateError",
    "normalize_space",
    "to_number",
]
