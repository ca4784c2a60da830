"""``python -m benchmarks.encoder_cost``: each runtime's cost a page and its agreement with NumPy."""

from __future__ import annotations

import re

import pytest

from benchmarks.encoder_cost import main, sample_texts
from benchmarks.webbench.web import OfflineWeb
from tests.test_embedding import needs_model

pytest.importorskip("onnxruntime", reason="the onnx runtime's packages: pip install onnx onnxruntime")
needs_small_web = pytest.mark.skipif(
    bool(OfflineWeb.missing_packages()), reason="the small web's Debian packages are not installed"
)


@needs_small_web
def test_the_sample_is_the_text_the_crawl_embeds_spread_over_the_sites():
    texts = sample_texts("small", 20, seed=1)
    assert len(texts) == 20 and len(set(texts)) == 20
    assert all(text.strip() and "<" not in text[:200] for text in texts), texts[:3]
    assert sample_texts("small", 20, seed=1) == texts


@needs_model
@needs_small_web
@pytest.mark.benchmark
def test_each_runtime_prints_its_cost_and_its_agreement_with_numpy(capsys):
    assert main(["--web", "small", "--pages", "6", "--tokens", "32"]) == 0
    printed = capsys.readouterr().out
    pattern = r"^(numpy|onnx, 32-bit weights|onnx, 8-bit weights) +(\S+) +(\S+) +(\S+) +(\S+)$"
    rows = {name: [float(value) for value in values] for name, *values in re.findall(pattern, printed, flags=re.M)}
    assert set(rows) == {"numpy", "onnx, 32-bit weights", "onnx, 8-bit weights"}
    assert all(cost > 0 for cost, *_ in rows.values())
    assert rows["numpy"][2:] == [1.0, 1.0]
    assert rows["onnx, 32-bit weights"][2] > 0.9999
    assert 0.95 < rows["onnx, 8-bit weights"][2] < 1.0
