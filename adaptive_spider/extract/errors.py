"""The one error a malformed template raises."""

from __future__ import annotations

from pathlib import Path


class TemplateError(ValueError):
    """A template file is malformed.

    The message is one line naming the file, the line and the field, e.g.
    ``products.yaml, line 7: field 'price' (fields[1]).xpath: missing``.
    """

    def __init__(self, path: str | Path | None, line: int | None, field: str, problem: str):
        self.path = str(path) if path is not None else "<template>"
        self.line = line
        self.field = field
        self.problem = problem
        where = f"{self.path}, line {line}" if line is not None else self.path
        super().__init__(f"{where}: {field}: {problem}")
