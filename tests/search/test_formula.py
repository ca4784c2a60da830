"""The boosting-formula grammar: values, precedence, and hostile input."""

from __future__ import annotations

import ast
import inspect

import numpy as np
import pytest

from adaptive_spider.search import BoostFormula, SearchError
from adaptive_spider.search import formula as formula_module


def value(text, **fields):
    size = max([len(v) for v in fields.values()] or [1])
    return BoostFormula(text).evaluate({k: np.asarray(v, float) for k, v in fields.items()}, size).tolist()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1 + 2 * 3", 7.0),
        ("(1 + 2) * 3", 9.0),
        ("10 - 4 - 3", 3.0),
        ("12 / 4 / 3", 1.0),
        ("-2 * -3", 6.0),
        ("2 × 3 ÷ 4", 1.5),
        ("sqrt(16) + log(1)", 4.0),
        ("max(1, 5, 3) - min(4, 2)", 3.0),
        ("1e2 + .5", 100.5),
    ],
)
def test_arithmetic(text, expected):
    assert value(text) == [pytest.approx(expected)]


def test_fields_are_read_per_document():
    assert value("log(votes + 1)", votes=[0, np.e - 1, 9]) == pytest.approx([0, 1, np.log(10)])
    assert BoostFormula("votes / 10 + max(answers, 1)").fields == {"votes", "answers"}


def test_values_outside_the_domain_count_as_zero():
    assert value("log(votes)", votes=[0, -5, 1]) == [0, 0, 0]
    assert value("1 / votes", votes=[0, 2]) == [0, 0.5]
    assert value("sqrt(votes)", votes=[-4, 4]) == [0, 2]


def test_missing_values_count_as_zero():
    assert value("votes + 1", votes=[np.nan, 2]) == [1, 3]


@pytest.mark.parametrize(
    "text",
    [
        "__import__('os').system('touch /tmp/pwned')",
        "().__class__.__bases__[0].__subclasses__()",
        "votes.__class__",
        "open('/etc/passwd')",
        "eval('1')",
        "exec('x=1')",
        "lambda: 1",
        "votes if 1 else 2",
        "votes ** 2",
        "votes; 1",
        "[1, 2]",
        "'text'",
        "1 +",
        "log 3",
        "log()",
        "min(1)",
        "sqrt(1, 2)",
        "(1 + 2",
        "1 + 2)",
        "",
        "   ",
        "votes\x00",
        "(" * 200 + "1" + ")" * 200,
        "-" * 200 + "1",
        "1" + " + 1" * 200,
    ],
)
def test_malformed_or_malicious_formulas_raise_one_line_errors(text):
    with pytest.raises(SearchError) as caught:
        BoostFormula(text)
    message = str(caught.value)
    assert message.startswith("formula") and "\n" not in message


def test_error_names_the_problem_and_position():
    with pytest.raises(SearchError, match=r"unknown function 'exp' at position 1"):
        BoostFormula("exp(votes)")
    with pytest.raises(SearchError, match=r"unexpected character '\^' at position 7"):
        BoostFormula("votes ^ 2")


def test_unknown_field_is_reported_against_the_index_fields():
    with pytest.raises(SearchError, match=r"unknown field 'vote' .*numeric fields: votes"):
        BoostFormula("log(vote + 1)").check_fields({"votes"})


def test_the_module_never_calls_eval_exec_or_compile():
    tree = ast.parse(inspect.getsource(formula_module))
    called = {node.func.id for node in ast.walk(tree) if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)}
    assert not called & {"eval", "exec", "compile", "__import__", "getattr"}
