"""Fields ("inspectors"): what one value of a document is and how to read it from a page."""

from __future__ import annotations

import re
from dataclasses import dataclass

from parsel import Selector
from scrapy.http import TextResponse

FIELD_TYPES = ("text", "link", "image")
DEFAULT_ATTRIBUTES = {"text": (), "link": ("href",), "image": ("src",)}

_WHITESPACE = re.compile(r"\s+")
# Thousands separated by commas ("1,234") or plain digits, an optional decimal
# part, and an optional k/m multiplier glued to the number ("1.2k votes").
_NUMBER = re.compile(
    r"(?P<sign>[-+\u2212])?\s*"
    r"(?P<digits>\d{1,3}(?:,\d{3})+|\d+)(?P<decimals>\.\d+)?"
    r"(?P<suffix>[kKmM](?![A-Za-z]))?"
)
_MULTIPLIERS = {"k": 1e3, "m": 1e6}
# Text of an element without the code of scripts and styles inside it.
_VISIBLE_TEXT = ".//text()[not(ancestor::script or ancestor::style)]"


def normalize_space(text: str) -> str:
    """Collapse runs of whitespace into one space and trim the ends."""
    return _WHITESPACE.sub(" ", text).strip()


def to_number(text: str | None) -> float | None:
    """The first number in *text* (``"=3"`` → 3, ``"1,234 pts"`` → 1234, ``"1.2k"`` → 1200), or None."""
    if not text:
        return None
    match = _NUMBER.search(text)
    if match is None:
        return None
    value = float(match["digits"].replace(",", "") + (match["decimals"] or ""))
    if match["suffix"]:
        value *= _MULTIPLIERS[match["suffix"].lower()]
    if match["sign"] in ("-", "\u2212"):
        value = -value
    return value


@dataclass(frozen=True)
class CleanupRule:
    """A regular expression whose matches are replaced (removed by default)."""

    pattern: re.Pattern
    replacement: str = ""

    def apply(self, text: str) -> str:
        return self.pattern.sub(self.replacement, text)


@dataclass(frozen=True)
class Field:
    """One inspector of a template: a named value read with an XPath.

    ``text`` fields give the visible text of the matched node (or of one of
    its ``attributes``); ``link`` and ``image`` fields give an absolute URL
    read from ``href``/``src`` unless other attributes are named (the first
    non-empty one wins, e.g. ``data-src`` before ``src`` for lazy images).
    Clean-up rules run in order on each value, then whitespace is normalised;
    a field with a ``ranking`` variable also yields that value as a number.
    """

    name: str
    xpath: str
    type: str = "text"
    attributes: tuple[str, ...] = ()
    cleanup: tuple[CleanupRule, ...] = ()
    ranking: str | None = None
    multiple: bool = False
    required: bool = False

    def extract(self, scope: Selector, response: TextResponse) -> str | list[str] | None:
        """This field's value within *scope*: a string (or a list when ``multiple``), None if absent."""
        values = []
        for node in scope.xpath(self.xpath):
            value = self._value_of(node, response)
            if value:
                values.append(value)
                if not self.multiple:
                    break
        if self.multiple:
            return values
        return values[0] if values else None

    def number(self, value: str | list[str] | None) -> float | None:
        """The ranking number of an extracted value (the first one of a list)."""
        if isinstance(value, list):
            value = value[0] if value else None
        return to_number(value)

    def _value_of(self, node: Selector, response: TextResponse) -> str | None:
        raw = self._raw_value(node)
        if raw is None:
            return None
        text = normalize_space(raw)
        for rule in self.cleanup:
            text = rule.apply(text)
        text = normalize_space(text)
        if not text:
            return None
        if self.type in ("link", "image"):
            return response.urljoin(text)
        return text

    def _raw_value(self, node: Selector) -> str | None:
        root = node.root
        if not hasattr(root, "tag"):
            # The XPath already selected a string: a text node, an attribute, a number.
            return str(root)
        attributes = self.attributes or DEFAULT_ATTRIBUTES[self.type]
        if not attributes:
            return " ".join(node.xpath(_VISIBLE_TEXT).getall())
        for attribute in attributes:
            value = node.attrib.get(attribute)
            if value and value.strip():
                return value
        return None
