"""The sentence encoder run by ONNX Runtime (``ADAPTIVE_EMBEDDING_RUNTIME=onnx``): the same
embeddings as the NumPy encoder (exactly in 32 bits, nearly with 8-bit weights), the same
judgement of pages, in a crawl's worker process, and a clear error where it cannot run."""

from __future__ import annotations

import sys

import numpy as np
import pytest
from scrapy.utils.defer import maybe_deferred_to_future

from adaptive_spider.crawl.state import CrawlState
from adaptive_spider.demo.site import QUERY
from adaptive_spider.relevance.embedding import EmbeddingRelevance
from adaptive_spider.relevance.encoder_processes import EncoderProcesses
from adaptive_spider.relevance.onnx_encoder import OnnxSentenceEncoder, sentence_encoder
from adaptive_spider.relevance.pagetext import PageFields
from adaptive_spider.relevance.sentence_encoder import SentenceEncoder
from adaptive_spider.settings.config import AdaptiveConfig, ConfigError
from spiders.focused import FocusedSpider
from tests.conftest import crawl_test, project_settings, run_crawl
from tests.test_embedding import EMBEDDING, MODEL, REFERENCE, needs_model

pytest.importorskip("onnxruntime", reason="the onnx runtime's packages: pip install onnx onnxruntime")
pytest.importorskip("onnx", reason="the onnx runtime's packages: pip install onnx onnxruntime")

# Texts of very different lengths, so that a batch pads the short ones (padding must not count).
TEXTS = [
    *REFERENCE["texts"],
    "Telescopes and galaxies: how a reflecting telescope gathers light. " * 30,
    "std::regex_search determines if there is a match between the regular expression and the text.",
]


@pytest.fixture(scope="module")
def numpy_encoder() -> SentenceEncoder:
    assert MODEL is not None
    return SentenceEncoder(MODEL, 128)


@pytest.fixture(scope="module")
def quantized() -> OnnxSentenceEncoder:
    assert MODEL is not None
    return OnnxSentenceEncoder(MODEL, 128)


@needs_model
def test_in_32_bits_the_graph_computes_what_numpy_does(numpy_encoder):
    # The ONNX graph is built from the model's weights, layer by layer as the NumPy encoder
    # runs them: a wrong transpose, head split or mask shows here.
    plain = OnnxSentenceEncoder(MODEL, 128, quantized=False)
    ours, reference = plain.encode(TEXTS), numpy_encoder.encode(TEXTS)
    assert ours.shape == reference.shape
    assert np.all((ours * reference).sum(axis=1) > 0.99999)
    assert np.allclose(plain.encode(TEXTS[-1:]), ours[-1:], atol=1e-5)  # alone as in a batch
    # And what sentence-transformers computes.
    assert np.all((plain.encode(REFERENCE["texts"]) * np.asarray(REFERENCE["embeddings"])).sum(axis=1) > 0.99999)


@needs_model
def test_with_8_bit_weights_the_embeddings_stay_near(numpy_encoder, quantized):
    ours, reference = quantized.encode(TEXTS), numpy_encoder.encode(TEXTS)
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cosines = (ours * reference).sum(axis=1)
    assert cosines.min() > 0.97 and cosines.mean() > 0.985, cosines


@needs_model
def test_with_8_bit_weights_pages_are_judged_as_before(numpy_encoder, quantized):
    query = "How do I use regular expressions to match, search and replace text?"
    pages = [
        PageFields(url="http://cpp.test/regex_search.html", title="std::regex_search", headings="Parameters Example",
                   body="Determines if there is a match between the regular expression e and the target sequence."),
        PageFields(url="http://py.test/re.html", title="re — Regular expression operations", headings="Syntax",
                   body="This module provides regular expression matching operations similar to those in Perl."),
        PageFields(url="http://sqlite.test/lang_corefunc.html", title="Built-In Scalar SQL Functions",
                   headings="Overview", body="abs(X) changes() char(X1,X2) coalesce(X,Y) hex(X) ifnull(X,Y) instr(X,Y)"),
        PageFields(url="http://stars.test/telescope.html", title="Reflecting telescopes", headings="Mirrors",
                   body="A reflecting telescope uses a curved mirror to gather light from galaxies and stars."),
    ]  # fmt: skip
    before = [EmbeddingRelevance(query, numpy_encoder).score(page) for page in pages]
    after = [EmbeddingRelevance(query, quantized).score(page) for page in pages]
    assert np.argsort(after).tolist() == np.argsort(before).tolist()
    assert after[0] > 0.5 and after[1] > 0.5 and after[2] < 0.5 and after[3] < 0.5
    assert np.abs(np.subtract(after, before)).max() < 0.1


@needs_model
def test_the_setting_chooses_the_runtime_and_a_wrong_one_is_named():
    config = {"ADAPTIVE_QUERY": "regular expressions"}
    model = EmbeddingRelevance.from_settings({**config, "ADAPTIVE_EMBEDDING_RUNTIME": "onnx"})
    assert isinstance(model.encoder, OnnxSentenceEncoder)
    assert type(EmbeddingRelevance.from_settings(config).encoder) is SentenceEncoder
    with pytest.raises(ConfigError, match=r"ADAPTIVE_EMBEDDING_RUNTIME.*onnx"):
        AdaptiveConfig.from_settings({**config, "ADAPTIVE_EMBEDDING_RUNTIME": "onxx"})
    with pytest.raises(ValueError, match="choose from numpy, onnx"):
        sentence_encoder(MODEL, 64, "torch")


@needs_model
def test_without_onnxruntime_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # import fails, as when not installed
    with pytest.raises(ConfigError, match=r"ADAPTIVE_EMBEDDING_RUNTIME=onnx: .*pip install onnx onnxruntime"):
        EmbeddingRelevance.from_settings({"ADAPTIVE_QUERY": "regex", "ADAPTIVE_EMBEDDING_RUNTIME": "onnx"})


@needs_model
@crawl_test
async def test_a_worker_process_runs_the_onnx_encoder(quantized):
    workers = EncoderProcesses(MODEL, 128, processes=1, depth=4, runtime="onnx")
    try:
        await maybe_deferred_to_future(workers.start())
        pending = [workers.encode(text) for text in TEXTS[-2:]]
        vectors = [await maybe_deferred_to_future(answer) for answer in pending if answer is not None]
        assert len(vectors) == 2
        for text, vector in zip(TEXTS[-2:], vectors, strict=True):
            assert float(vector @ quantized.encode([text])[0]) > 0.9999, text
    finally:
        workers.close()


@needs_model
@crawl_test
async def test_a_crawl_scores_its_pages_with_the_onnx_workers(demo_site):
    site, url = demo_site
    settings = project_settings(
        ADAPTIVE_RELEVANCE=EMBEDDING, ADAPTIVE_EMBEDDING_PROCESSES=1, ADAPTIVE_EMBEDDING_RUNTIME="onnx",
        CLOSESPIDER_PAGECOUNT=120,
    )  # fmt: skip
    result = await run_crawl(FocusedSpider, settings, query=QUERY, start_urls=url)
    model = CrawlState.of(result.crawler).relevance
    assert isinstance(model, EmbeddingRelevance) and model.workers is not None and model.workers.runtime == "onnx"
    assert result.stats.get("adaptive/relevance/model_scored", 0) >= 10
    relevant = {url.rstrip("/") + path for path in site.relevant}
    inside = [item["relevance"] for item in result.items if item.get("url") in relevant]
    outside = [item["relevance"] for item in result.items if "relevance" in item and item.get("url") not in relevant]
    assert len(inside) >= 20 and np.mean(inside) > 0.5 > np.mean(outside)


@needs_model
def test_building_the_8_bit_encoder_logs_no_advice_to_the_crawl(caplog):
    # onnxruntime's quantizer advises "pre-processing" on the root logger: at every crawl start
    # that would be a warning in the user's log about a step this graph does not need.
    with caplog.at_level("WARNING"):
        OnnxSentenceEncoder(MODEL, 32)
    assert not [record for record in caplog.records if "pre-processing" in record.getMessage()]
