"""docs/settings.md, made from the table of settings.

Each setting's description, default and accepted values are its row in
:mod:`adaptive_spider.settings.table`, so the page cannot drift from the code
(a test regenerates it and compares):

    python -m adaptive_spider.settings.docs > docs/settings.md
"""

from __future__ import annotations

import json
from typing import Any

from adaptive_spider.settings.table import SECTIONS, SETTINGS

HEADER = """# Settings

Every `ADAPTIVE_*` setting, its default, what it accepts and what it does (generated from
`adaptive_spider/settings/table.py` by `python -m adaptive_spider.settings.docs`).
Set them like any Scrapy setting: in a project's `settings.py`, with `-s NAME=VALUE`,
or in a settings profile. Sections follow the components they configure. A name that
starts with `ADAPTIVE_` but is none of these is logged as a warning with the closest
real name when the add-on starts a crawl.
"""


def python_literal(value: Any) -> str:
    """``value`` as it would be written in a settings.py (double-quoted strings)."""
    if value is None or isinstance(value, bool):
        return repr(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(python_literal(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{python_literal(k)}: {python_literal(v)}" for k, v in value.items()) + "}"
    return json.dumps(value)


def rows() -> list[tuple[str, str, str, str]]:
    """(section, name, default, description) of each setting, in table order."""
    return [(s.section, s.name, python_literal(s.default), s.doc) for s in SETTINGS]


def markdown() -> str:
    """The whole of docs/settings.md."""
    parts = [HEADER]
    for section in SECTIONS:
        parts.append(f"\n## {section.title}\n")
        if section.note:
            parts.append(section.note + "\n")
        parts.append("| setting | default | accepts | what it does |\n|---|---|---|---|")
        for setting in SETTINGS:
            if setting.section == section.title:
                cells = (
                    f"`{setting.name}`",
                    f"`{python_literal(setting.default)}`",
                    setting.parse.describe(),
                    setting.doc,
                )
                parts.append("| " + " | ".join(cell.replace("|", "/") for cell in cells) + " |")
    return "\n".join(parts) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
