"""Document fields: reading field values and weights, and the fields an index stores.

A document is a mapping.  Its text fields are analyzed into postings
(:mod:`.postings`); besides them the index keeps, per document, the fields shown
with a hit and the numbers that boosting formulas read (:class:`StoredFields`).
Both live in memory until a commit writes them to the index file (:mod:`.storage`).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Container, Iterable, Mapping
from typing import Any

import numpy as np

from .errors import SearchError
from .storage import IndexStore

# A leading number, as in "12", "-3.5", "1,234 views" or "12\nvotes".
_NUMBER = re.compile(r"\s*([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?:\s|$)")


def parse_number(value: Any) -> float | None:
    """A float for numbers and strings that start with one, else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        match = _NUMBER.match(value)
        if match:
            return float(match.group(1).replace(",", ""))
    return None


def as_text(value: Any) -> str:
    """The indexable text of a field value (lists are joined, None is empty)."""
    if value is None or isinstance(value, bool):
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):
        return " ".join(as_text(part) for part in value)
    if isinstance(value, (int, float)):
        return str(value)
    return ""


def parse_pairs(spec: str | Mapping) -> list[tuple[str, Any]]:
    """(name, value) pairs from a mapping or from ``"a=1,b=2"``."""
    if isinstance(spec, Mapping):
        return [(str(name).strip(), value) for name, value in spec.items()]
    pairs = []
    for part in spec.split(","):
        if part.strip():
            name, _, value = part.partition("=")
            pairs.append((name.strip(), value.strip()))
    return pairs


def text_fields_of(record: Mapping, id_field: str) -> list[str]:
    """The fields of *record* worth indexing: text (or lists of text) that is not a number."""
    return [
        name
        for name, value in record.items()
        if name != id_field
        and isinstance(value, (str, list))
        and as_text(value).strip()
        and parse_number(value) is None
    ]


def parse_field_weights(spec: str | Mapping | None, fields: Iterable[str]) -> dict[str, float]:
    """Weights per field from ``"title=2,body=1"`` or a mapping; 1 for unnamed fields."""
    fields = list(fields)
    weights = dict.fromkeys(fields, 1.0)
    if not spec:
        return weights
    for name, value in parse_pairs(spec):
        if name not in weights:
            raise SearchError(f"unknown field {name!r} in weights (indexed fields: {', '.join(fields)})")
        try:
            weight = float(value)
        except (TypeError, ValueError):
            raise SearchError(f"weight of field {name!r} must be a number, got {value!r}") from None
        if not weight > 0:
            raise SearchError(f"weight of field {name!r} must be > 0, got {weight}")
        weights[name] = weight
    return weights


class StoredFields:
    """The fields shown with hits and the numeric fields of every document.

    Documents added since the last commit keep theirs here (``pending``,
    ``pending_numbers``); :meth:`write` moves them to the index file, from
    which :meth:`get` and :meth:`numbers` read the rest.
    """

    def __init__(self) -> None:
        #: Document number -> (id, stored fields), for documents not yet written.
        self.pending: dict[int, tuple[str, dict]] = {}
        self.pending_numbers: list[tuple[str, int, float]] = []
        #: Fields that held a number in some document (what formulas may name).
        self.numeric_fields: set[str] = set()
        #: How many documents had text in each indexed field.
        self.field_counts: Counter = Counter()
        self._numbers: dict[str, np.ndarray] = {}

    def load(self, store: IndexStore) -> None:
        self.numeric_fields = set(store.read_meta("numeric_fields", []))
        self.field_counts = Counter(store.read_meta("field_counts", {}))

    def collect_numbers(self, idx: int, document: Mapping, skip: Container[str], stored: dict) -> None:
        """Keep the numbers of *document*'s fields not in *skip*, and show them with its hits."""
        for name, value in document.items():
            if name in skip:
                continue
            number = parse_number(value)
            if number is not None and np.isfinite(number):
                self.numeric_fields.add(name)
                self.pending_numbers.append((name, idx, number))
                stored[name] = value if isinstance(value, (int, float)) else number

    def get(self, doc_idxs: list[int], store: IndexStore | None) -> dict[int, dict]:
        """Stored fields of documents by internal number."""
        found = {i: self.pending[i][1] for i in doc_idxs if i in self.pending}
        rest = [i for i in doc_idxs if i not in found]
        if rest and store is not None:
            found.update(store.read_stored(rest))
        return found

    def numbers(self, name: str, n_docs: int, store: IndexStore | None) -> np.ndarray:
        """The values of numeric field *name* per document (NaN where a document has none)."""
        values = self._numbers.get(name)
        if values is None:
            values = np.full(n_docs, np.nan)
            if store is not None:
                doc_idxs, stored = store.read_numbers(name)
                values[doc_idxs] = stored
            for field_name, idx, number in self.pending_numbers:
                if field_name == name:
                    values[idx] = number
            self._numbers[name] = values
        return values

    def forget_numbers(self) -> None:
        """Drop the cached number arrays (documents were added)."""
        self._numbers = {}

    def write(self, store: IndexStore) -> None:
        """Write the pending documents' fields and numbers, and the field statistics."""
        store.write_documents(
            (idx, doc_id, json.dumps(stored, ensure_ascii=False, default=str))
            for idx, (doc_id, stored) in sorted(self.pending.items())
        )
        store.write_numbers(self.pending_numbers)
        store.write_meta("numeric_fields", sorted(self.numeric_fields))
        store.write_meta("field_counts", dict(self.field_counts))
        self.pending, self.pending_numbers = {}, []
