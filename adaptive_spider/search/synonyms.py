"""Synonym dictionary: groups of interchangeable phrases that add suggestions.

File format: UTF-8 text, one group per line, phrases separated by commas;
``#`` starts a comment.  Matching ignores case and punctuation::

    usa, united states, united states of america
    nyc, new york city
"""

from __future__ import annotations

from pathlib import Path

from .analysis import words
from .errors import SearchError


def _key(phrase: str) -> str:
    return " ".join(words(phrase))


class SynonymDictionary:
    """Phrase -> the other phrases of its groups."""

    def __init__(self, groups: list[list[str]] | None = None):
        self._alternatives: dict[str, list[str]] = {}
        for group in groups or []:
            self.add_group(group)

    @classmethod
    def load(cls, path: str | Path) -> SynonymDictionary:
        path = Path(path)
        if not path.is_file():
            raise SearchError(f"synonym file not found: {path}")
        groups = []
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.split("#", 1)[0]
            group = [phrase.strip() for phrase in line.split(",") if phrase.strip()]
            if len(group) >= 2:
                groups.append(group)
        return cls(groups)

    def add_group(self, phrases: list[str]) -> None:
        for phrase in phrases:
            key = _key(phrase)
            if not key:
                continue
            alternatives = self._alternatives.setdefault(key, [])
            for other in phrases:
                if _key(other) != key and other not in alternatives:
                    alternatives.append(other)

    def lookup(self, phrase: str) -> list[str]:
        """The phrases interchangeable with *phrase* (empty if none)."""
        return list(self._alternatives.get(_key(phrase), ()))

    def __len__(self) -> int:
        return len(self._alternatives)
