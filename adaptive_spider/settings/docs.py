"""The table of every ``ADAPTIVE_*`` setting, made from default_settings.py.

Each setting's description is its ``#:`` comment there, and its default is its
value, so docs/settings.md cannot drift from the code (a test regenerates it):

    python -m adaptive_spider.settings.docs > docs/settings.md
"""

from __future__ import annotations

import ast
import inspect

from adaptive_spider.settings import defaults as default_settings

HEADER = """# Settings

Every `ADAPTIVE_*` setting, its default and what it does (generated from
`adaptive_spider/settings/defaults.py` by `python -m adaptive_spider.settings.docs`).
Set them like any Scrapy setting: in a project's `settings.py`, with `-s NAME=VALUE`,
or in a settings profile. Sections follow the components they configure.
"""


def rows() -> list[tuple[str, str, str, str]]:
    """(section, name, default, description) of each setting, in file order."""
    source = inspect.getsource(default_settings)
    lines = source.splitlines()
    section, out = "", []
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        if not name.startswith("ADAPTIVE_"):
            continue
        comments, line = [], node.lineno - 2
        while line >= 0 and lines[line].lstrip().startswith("#"):
            text = lines[line].strip()
            if text.startswith("# ---"):
                section = section if comments else section
                break
            comments.insert(0, text.lstrip("#:").strip())
            line -= 1
        section = _section_above(lines, node.lineno - 1) or section
        default = ast.get_source_segment(source, node.value).replace("\n", " ")
        out.append((section, name, " ".join(default.split()), " ".join(comments)))
    return out


def _section_above(lines: list[str], index: int) -> str:
    for line in reversed(lines[:index]):
        if line.startswith("# ---"):
            return line.strip("# -").strip()
    return ""


def markdown() -> str:
    parts, current = [HEADER], None
    for section, name, default, description in rows():
        if section != current:
            current = section
            parts.append(f"\n## {section}\n\n| setting | default | what it does |\n|---|---|---|")
        parts.append(f"| `{name}` | `{default}` | {description.replace('|', '/')} |")
    return "\n".join(parts) + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
