"""A small, safe expression language for boosting scores with numeric fields.

Grammar (whitespace is ignored)::

    expr    := term (("+" | "-") term)*
    term    := unary (("*" | "/") unary)*
    unary   := ("+" | "-") unary | primary
    primary := NUMBER | FIELD | FUNC "(" expr ("," expr)* ")" | "(" expr ")"
    FUNC    := log | sqrt | min | max        (log is the natural logarithm)
    NUMBER  := 12 | 0.5 | .5 | 1e3
    FIELD   := a letter or underscore, then letters, digits, underscores

"×" and "÷" are accepted for "*" and "/".  The text is parsed by hand into a
tree of closures over numpy arrays; nothing is ever passed to ``eval`` or
``exec``, and nothing but the names above can be reached.  A value that is
not finite (log of 0, division by zero, overflow) counts as 0 for that document.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping

import numpy as np

from .errors import SearchError

MAX_LENGTH = 500
MAX_DEPTH = 40

_TOKEN = re.compile(
    r"\s*(?:(?P<number>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
    r"|(?P<name>[A-Za-z_][A-Za-z0-9_]*)"
    r"|(?P<op>[-+*/×÷(),]))"
)
_OPERATORS = {"×": "*", "÷": "/"}

#: A formula's value: an array over documents, or a plain number for a constant part.
Value = np.ndarray | float
Evaluator = Callable[[Mapping[str, np.ndarray]], Value]


def _log(x: Value) -> Value:
    return np.log(x)


def _sqrt(x: Value) -> Value:
    return np.sqrt(x)


# name -> (function, minimum arguments, maximum arguments)
_FUNCTIONS: dict[str, tuple[Callable[..., Value], int, int]] = {
    "log": (_log, 1, 1),
    "sqrt": (_sqrt, 1, 1),
    "min": (lambda *args: np.minimum.reduce(np.broadcast_arrays(*args)), 2, 16),
    "max": (lambda *args: np.maximum.reduce(np.broadcast_arrays(*args)), 2, 16),
}

_BINARY = {
    "+": np.add,
    "-": np.subtract,
    "*": np.multiply,
    "/": np.divide,
}


def _tokenize(text: str) -> list[tuple[str, str, int]]:
    tokens = []
    position = 0
    text = text.rstrip()
    while position < len(text):
        match = _TOKEN.match(text, position)
        if match is None or match.end() == position:
            rest = text[position:]
            where = position + len(rest) - len(rest.lstrip())
            raise SearchError(f"formula: unexpected character {text[where]!r} at position {where + 1}")
        kind = match.lastgroup
        assert kind is not None  # every alternative of _TOKEN is a named group
        value = match.group(kind)
        tokens.append((kind, _OPERATORS.get(value, value), match.start(kind)))
        position = match.end()
    return tokens


class _Parser:
    def __init__(self, text: str):
        self.tokens = _tokenize(text)
        self.position = 0
        self.fields: set[str] = set()

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.position] if self.position < len(self.tokens) else None

    def take(self, expected: str | None = None) -> tuple[str, str, int]:
        token = self.peek()
        if token is None:
            raise SearchError(f"formula: unexpected end, expected {expected or 'a value'}")
        if expected is not None and token[1] != expected:
            raise SearchError(f"formula: expected {expected!r} at position {token[2] + 1}, got {token[1]!r}")
        self.position += 1
        return token

    def parse(self) -> Evaluator:
        if not self.tokens:
            raise SearchError("formula is empty")
        tree = self.expr(0)
        token = self.peek()
        if token is not None:
            raise SearchError(f"formula: unexpected {token[1]!r} at position {token[2] + 1}")
        return tree

    def expr(self, depth: int) -> Evaluator:
        return self._binary(depth, ("+", "-"), self.term)

    def term(self, depth: int) -> Evaluator:
        return self._binary(depth, ("*", "/"), self.unary)

    def _binary(self, depth: int, operators: tuple[str, ...], operand: Callable[[int], Evaluator]) -> Evaluator:
        left = operand(depth)
        while (token := self.peek()) is not None and token[1] in operators:
            self.take()
            right = operand(depth)
            left = _apply_binary(_BINARY[token[1]], left, right)
        return left

    def unary(self, depth: int) -> Evaluator:
        if depth > MAX_DEPTH:
            raise SearchError(f"formula: nested more than {MAX_DEPTH} levels deep")
        token = self.peek()
        if token is not None and token[1] in ("+", "-"):
            self.take()
            inner = self.unary(depth + 1)
            return inner if token[1] == "+" else (lambda env: np.negative(inner(env)))
        return self.primary(depth + 1)

    def primary(self, depth: int) -> Evaluator:
        kind, value, position = self.take()
        if kind == "number":
            number = float(value)
            return lambda env: number
        if kind == "name":
            if (token := self.peek()) is not None and token[1] == "(":
                return self.call(value, position, depth)
            if value in _FUNCTIONS:
                raise SearchError(f"formula: function {value!r} needs arguments in parentheses")
            self.fields.add(value)
            return lambda env: env[value]
        if value == "(":
            inner = self.expr(depth)
            self.take(")")
            return inner
        raise SearchError(f"formula: unexpected {value!r} at position {position + 1}")

    def call(self, name: str, position: int, depth: int) -> Evaluator:
        if name not in _FUNCTIONS:
            known = ", ".join(sorted(_FUNCTIONS))
            raise SearchError(f"formula: unknown function {name!r} at position {position + 1} (known: {known})")
        function, least, most = _FUNCTIONS[name]
        self.take("(")
        arguments = [self.expr(depth)]
        while (token := self.peek()) is not None and token[1] == ",":
            self.take()
            arguments.append(self.expr(depth))
        self.take(")")
        if not least <= len(arguments) <= most:
            raise SearchError(
                f"formula: {name}() takes {least if least == most else f'{least} to {most}'}"
                f" arguments, got {len(arguments)}"
            )
        return lambda env: function(*(argument(env) for argument in arguments))


def _apply_binary(operator: np.ufunc, left: Evaluator, right: Evaluator) -> Evaluator:
    return lambda env: operator(left(env), right(env))


class BoostFormula:
    """A parsed boosting formula such as ``log(votes + 1)``.

    ``BoostFormula(text).fields`` names the numeric fields it reads;
    :meth:`evaluate` computes it for many documents at once.
    """

    def __init__(self, text: str):
        if not isinstance(text, str):
            raise SearchError("formula must be a string")
        if len(text) > MAX_LENGTH:
            raise SearchError(f"formula longer than {MAX_LENGTH} characters")
        self.text = text
        parser = _Parser(text)
        self._evaluate = parser.parse()
        self.fields = frozenset(parser.fields)

    def check_fields(self, known: set[str] | frozenset[str]) -> None:
        """Raise SearchError if the formula reads a field the index does not have."""
        unknown = sorted(self.fields - set(known))
        if unknown:
            listed = ", ".join(sorted(known)) or "none"
            raise SearchError(f"formula: unknown field {unknown[0]!r} (numeric fields: {listed})")

    def evaluate(self, values: Mapping[str, np.ndarray], size: int) -> np.ndarray:
        """The formula for *size* documents, given each field's values (NaN: missing -> 0)."""
        env = {name: np.nan_to_num(np.asarray(values[name], dtype=np.float64), nan=0.0) for name in self.fields}
        with np.errstate(all="ignore"):
            result = np.broadcast_to(np.asarray(self._evaluate(env), dtype=np.float64), (size,))
        return np.where(np.isfinite(result), result, 0.0)

    def __repr__(self) -> str:
        return f"BoostFormula({self.text!r})"
