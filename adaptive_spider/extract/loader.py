"""Read a template file (YAML or JSON) into plain data that remembers its line numbers.

Validation errors must name the line of the offending field, so mappings and
lists come back as :class:`LocatedDict` and :class:`LocatedList`: ordinary
``dict``/``list`` objects that also carry the line of each key or item.
"""

from __future__ import annotations

import json
import json.decoder
import json.scanner
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from adaptive_spider.extract.errors import TemplateError


class LocatedDict(dict[str, Any]):
    """A mapping that knows the line it starts on and the line of each key."""

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line
        self.key_lines: dict[str, int] = {}

    def line_of(self, key: str) -> int:
        return self.key_lines.get(key, self.line)


class LocatedList(list[Any]):
    """A list that knows the line it starts on and the line of each item."""

    def __init__(self, line: int) -> None:
        super().__init__()
        self.line = line
        self.item_lines: list[int] = []

    def line_of(self, index: int) -> int:
        if 0 <= index < len(self.item_lines):
            return self.item_lines[index]
        return self.line


def line_of(container: object, key: Any, default: int = 1) -> int:
    """The line of ``container[key]`` when *container* carries lines, else *default*."""
    if isinstance(container, (LocatedDict, LocatedList)):
        return container.line_of(key)
    return default


def load_template_data(path: str | Path) -> Any:
    """Parse *path* as JSON (``.json``) or YAML (anything else) into located data.

    Raises :class:`TemplateError` for a missing file or a syntax error, with the line.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise TemplateError(path, None, "file", f"cannot read the template: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise TemplateError(path, None, "file", f"not UTF-8 text ({exc.reason})") from None
    if path.suffix.lower() == ".json":
        return _load_json(text, path)
    return _load_yaml(text, path)


# --- YAML -------------------------------------------------------------------


class _LocatedYamlLoader(yaml.SafeLoader):
    """SafeLoader whose mappings and sequences keep their node marks as line numbers."""


def _yaml_line(node: yaml.Node) -> int:
    return node.start_mark.line + 1


def _construct_located_mapping(loader: _LocatedYamlLoader, node: yaml.MappingNode) -> LocatedDict:
    loader.flatten_mapping(node)
    mapping = LocatedDict(_yaml_line(node))
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, str):
            raise _YamlKeyError(_yaml_line(key_node), f"keys must be text, got {key!r}")
        if key in mapping:
            raise _YamlKeyError(_yaml_line(key_node), f"duplicate key {key!r}")
        mapping[key] = loader.construct_object(value_node, deep=True)
        mapping.key_lines[key] = _yaml_line(key_node)
    return mapping


def _construct_located_sequence(loader: _LocatedYamlLoader, node: yaml.SequenceNode) -> LocatedList:
    sequence = LocatedList(_yaml_line(node))
    for item_node in node.value:
        sequence.append(loader.construct_object(item_node, deep=True))
        sequence.item_lines.append(_yaml_line(item_node))
    return sequence


_LocatedYamlLoader.add_constructor("tag:yaml.org,2002:map", _construct_located_mapping)
_LocatedYamlLoader.add_constructor("tag:yaml.org,2002:seq", _construct_located_sequence)


class _YamlKeyError(Exception):
    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def _load_yaml(text: str, path: Path) -> Any:
    try:
        return yaml.load(text, Loader=_LocatedYamlLoader)  # a SafeLoader subclass: safe
    except _YamlKeyError as exc:
        raise TemplateError(path, exc.line, "YAML syntax", exc.message) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark is not None else None
        problem = exc.problem or exc.context or "malformed YAML"
        raise TemplateError(path, line, "YAML syntax", problem) from None
    except yaml.YAMLError as exc:
        raise TemplateError(path, None, "YAML syntax", str(exc)) from None


# --- JSON -------------------------------------------------------------------


def _line_at(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


# The scanner's callback: (text, index) -> (value, end index).
ScanOnce = Callable[[str, int], tuple[Any, int]]


class _LocatedJsonDecoder(json.JSONDecoder):
    """A JSONDecoder whose objects and arrays record the line of each member.

    The pure-Python scanner calls ``parse_object``/``parse_array`` with the
    position of the opening bracket and a ``scan_once`` that it uses for every
    value, so wrapping ``scan_once`` reveals where each value starts.
    """

    def __init__(self) -> None:
        super().__init__()
        self.parse_object = self._parse_located_object
        self.parse_array = self._parse_located_array
        # py_make_scanner and JSONObject/JSONArray are real but missing from typeshed's stubs.
        self.scan_once = json.scanner.py_make_scanner(self)  # type: ignore[attr-defined]

    @staticmethod
    def _recording(scan_once: ScanOnce, positions: list[int]) -> ScanOnce:
        def scan_and_record(text: str, index: int) -> tuple[Any, int]:
            positions.append(index)
            return scan_once(text, index)

        return scan_and_record

    def _parse_located_object(
        self,
        s_and_end: tuple[str, int],
        strict: bool,
        scan_once: ScanOnce,
        object_hook: Any,
        object_pairs_hook: Any,
        memo: dict[str, str] | None = None,
    ) -> tuple[LocatedDict, int]:
        text, start = s_and_end
        positions: list[int] = []
        pairs, end = json.decoder.JSONObject(  # type: ignore[attr-defined]
            s_and_end, strict, self._recording(scan_once, positions), None, list, memo
        )
        mapping = LocatedDict(_line_at(text, start - 1))
        for (key, value), position in zip(pairs, positions):
            if key in mapping:
                raise json.JSONDecodeError(f"duplicate key {key!r}", text, position)
            mapping[key] = value
            mapping.key_lines[key] = _line_at(text, position)
        return mapping, end

    def _parse_located_array(self, s_and_end: tuple[str, int], scan_once: ScanOnce) -> tuple[LocatedList, int]:
        text, start = s_and_end
        positions: list[int] = []
        values, end = json.decoder.JSONArray(  # type: ignore[attr-defined]
            s_and_end, self._recording(scan_once, positions)
        )
        sequence = LocatedList(_line_at(text, start - 1))
        sequence.extend(values)
        # A failed scan (the closing bracket) is recorded too; keep one line per value.
        sequence.item_lines = [_line_at(text, p) for p in positions[: len(values)]]
        return sequence, end


def _load_json(text: str, path: Path) -> Any:
    try:
        return _LocatedJsonDecoder().decode(text)
    except json.JSONDecodeError as exc:
        raise TemplateError(path, exc.lineno, "JSON syntax", exc.msg) from None
