"""A page classifier trained from a few labelled pages: relevance as ACHE users define it.

Instead of a query's words, a handful of pages someone marked relevant or not says what
the crawl is for. :class:`PageClassifier` learns them with scikit-learn (TF-IDF of the
page's title, headings, body and URL words; logistic regression with balanced classes)
and scores each fetched page with the probability that it is relevant. Plug it in with

    ADAPTIVE_RELEVANCE = "adaptive_spider.relevance.classifier.PageClassifier"
    ADAPTIVE_CLASSIFIER_TRAINING = "labelled.txt"

The examples (:func:`read_examples`) are a file of lines, each ``+ URL`` or ``- URL`` (a
relevant or an irrelevant page), or a JSON object with ``url``, ``label`` and the page
itself (``html``, or ``text`` and an optional ``title``); or a folder in ACHE's layout,
``positive/`` and ``negative/`` HTML files. A page given only by its URL is fetched once
when the crawl starts (``ADAPTIVE_CLASSIFIER_FETCH_TIMEOUT``, through the environment's
proxy, as urllib does); a page given in full is never fetched.

scikit-learn is the ``classifier`` extra (``pip install 'adaptive-spider[classifier]'``);
without it the crawl stops at start with a message saying so. docs/plugins.md shows the
interface, and the effect on the offline web benchmark.
"""

from __future__ import annotations

import json
import logging
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from adaptive_spider.extras import MissingExtra, missing_extra_message
from adaptive_spider.relevance.base import PageRelevance
from adaptive_spider.relevance.pagetext import PageFields, html_page_fields
from adaptive_spider.relevance.scoring import url_words
from adaptive_spider.settings.components import read_setting
from adaptive_spider.settings.parsers import ConfigError

try:
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
except ImportError:  # said when ADAPTIVE_RELEVANCE names the class: at start, in one line
    raise MissingExtra(missing_extra_message("classifier", "adaptive_spider.relevance.classifier")) from None

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.http import Response

logger = logging.getLogger(__name__)

EXTRA = "classifier"
TRAINING = "ADAPTIVE_CLASSIFIER_TRAINING"
_LABELS = {
    "+": 1, "1": 1, "pos": 1, "positive": 1, "relevant": 1, "true": 1, "yes": 1,
    "-": 0, "0": 0, "neg": 0, "negative": 0, "irrelevant": 0, "false": 0, "no": 0,
}  # fmt: skip
#: Words of at least two characters that start with a letter (no numbers, as in version lists).
_TOKEN_PATTERN = r"(?u)\b[^\W\d_][\w]+\b"


@dataclass
class Example:
    """A labelled page: ``label`` 1 (relevant) or 0; ``page`` None until it is fetched."""

    label: int
    url: str
    page: PageFields | None = None


def page_text(page: PageFields) -> str:
    """What the classifier reads of a page: title, headings, body and URL words."""
    return " ".join((page.title, page.headings, page.body, url_words(page.url) if page.url else ""))


def _label(raw: Any, where: str) -> int:
    if isinstance(raw, bool):
        return int(raw)
    label = _LABELS.get(str(raw).strip().lower())
    if label is None:
        raise ConfigError(f"{TRAINING}: {where}: label {raw!r} is neither positive (+, 1) nor negative (-, 0)")
    return label


def read_examples(path: str | Path) -> list[Example]:
    """The labelled examples of a file or an ACHE-style folder (see the module's docstring)."""
    path = Path(path)
    if path.is_dir():
        return _read_folder(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{TRAINING}: cannot read {str(path)!r}: {exc}") from None
    examples = []
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        where = f"{path.name} line {number}"
        if line.startswith("{"):
            examples.append(_json_example(line, where))
            continue
        label, _, url = line.partition(" ")
        if not url.strip():
            raise ConfigError(f"{TRAINING}: {where}: expected '+ URL', '- URL' or a JSON object, got {line!r}")
        examples.append(Example(_label(label, where), url.strip()))
    return examples


def _json_example(line: str, where: str) -> Example:
    try:
        raw = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{TRAINING}: {where}: not valid JSON ({exc.msg})") from None
    if not isinstance(raw, dict) or "label" not in raw:
        raise ConfigError(f"{TRAINING}: {where}: a JSON example needs a label (and a url, html or text)")
    url = str(raw.get("url") or "")
    page = None
    if raw.get("html"):
        page = html_page_fields(str(raw["html"]), url)
    elif raw.get("text"):
        page = PageFields(url, title=str(raw.get("title") or ""), body=str(raw["text"]))
    elif not url:
        raise ConfigError(f"{TRAINING}: {where}: a JSON example needs a url, html or text")
    return Example(_label(raw["label"], where), url, page)


def _read_folder(folder: Path) -> list[Example]:
    examples = []
    for name, label in (("positive", 1), ("negative", 0)):
        for file in sorted((folder / name).glob("*")) if (folder / name).is_dir() else ():
            if file.is_file():
                html = file.read_bytes().decode("utf-8", "replace")
                # No URL: the file's path would give the label away ("positive").
                examples.append(Example(label, "", html_page_fields(html, "")))
    if not examples:
        raise ConfigError(f"{TRAINING}: folder {str(folder)!r} has no positive/ or negative/ files")
    return examples


def fetch_examples(examples: Iterable[Example], timeout: float, user_agent: str | None = None) -> list[Example]:
    """The examples with every page given by URL alone fetched (one after the other); a page
    that cannot be fetched, or is not HTML, is left out with a warning."""
    fetched = []
    for example in examples:
        if example.page is None:
            try:
                example.page = _fetch(example.url, timeout, user_agent)
            except (OSError, ValueError) as exc:
                logger.warning("%s: cannot fetch %s (%s); the example is left out", TRAINING, example.url, exc)
                continue
        fetched.append(example)
    return fetched


def _fetch(url: str, timeout: float, user_agent: str | None) -> PageFields:
    headers = {"User-Agent": user_agent} if user_agent else {}
    request = urllib.request.Request(url, headers=headers)
    with urllib.request.urlopen(request, timeout=timeout) as response:
        content_type = response.headers.get_content_type()
        if content_type not in ("text/html", "application/xhtml+xml"):
            raise ValueError(f"not HTML ({content_type})")
        charset = response.headers.get_content_charset() or "utf-8"
        html = response.read().decode(charset, "replace")
        return html_page_fields(html, response.geturl())


def _check_classes(labels: Sequence[int], note: str) -> None:
    positives = sum(1 for label in labels if label)
    if positives == 0 or positives == len(labels):
        raise ConfigError(
            f"{TRAINING}: needs relevant and irrelevant examples, got {positives} relevant and "
            f"{len(labels) - positives} irrelevant{note}"
        )


class PageClassifier(PageRelevance):
    """TF-IDF and logistic regression over labelled pages; a page's score is P(relevant).

    Parameters
    ----------
    C : float
        Inverse regularisation strength (``ADAPTIVE_CLASSIFIER_C``): with a few dozen
        examples a weakly regularised model spreads its probabilities over [0, 1]
        instead of keeping them all near the class balance.
    random_state : int
        Seed of the solver (``ADAPTIVE_SEED``).

    To mix the query's own page score into a crawl's relevance, set
    ``ADAPTIVE_RELEVANCE_QUERY_WEIGHT``: the crawl does the mixing, for any model.
    """

    def __init__(self, C: float = 10.0, random_state: int = 0) -> None:
        self.C = C
        self.random_state = random_state
        self.model: Any = None

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> PageClassifier:
        return cls.from_settings(crawler.settings)

    @classmethod
    def from_settings(cls, settings: Mapping[str, Any] | Any) -> PageClassifier:
        """Trained on ``ADAPTIVE_CLASSIFIER_TRAINING`` (pages given by URL fetched now)."""
        path = read_setting(settings, TRAINING)
        if not path:
            raise ConfigError(
                f"{TRAINING}: PageClassifier needs labelled examples (a file of '+ URL' / '- URL' lines, "
                "JSON lines or an ACHE-style folder); see docs/plugins.md"
            )
        examples = read_examples(path)
        _check_classes([example.label for example in examples], "")  # before fetching anything
        timeout = read_setting(settings, "ADAPTIVE_CLASSIFIER_FETCH_TIMEOUT")
        examples = fetch_examples(examples, timeout, settings.get("USER_AGENT"))
        classifier = cls(
            read_setting(settings, "ADAPTIVE_CLASSIFIER_C"),
            read_setting(settings, "ADAPTIVE_SEED"),
        )
        pages = [example.page for example in examples if example.page is not None]
        classifier.fit(pages, [example.label for example in examples])
        logger.info(
            "PageClassifier: trained on %d relevant and %d irrelevant pages from %s",
            sum(e.label for e in examples), sum(1 - e.label for e in examples), path,
        )  # fmt: skip
        return classifier

    def fit(self, pages: Sequence[PageFields], labels: Sequence[int]) -> PageClassifier:
        """Learn from pages and their labels (1: relevant, 0: not); both classes are needed."""
        _check_classes(labels, " (after leaving out the pages that could not be fetched)")
        self.model = make_pipeline(
            TfidfVectorizer(sublinear_tf=True, stop_words="english", token_pattern=_TOKEN_PATTERN),
            LogisticRegression(C=self.C, class_weight="balanced", max_iter=1000, random_state=self.random_state),
        )
        self.model.fit([page_text(page) for page in pages], np.asarray(labels, dtype=np.int64))
        return self

    def predict_proba(self, pages: Sequence[PageFields]) -> np.ndarray:
        """P(relevant) of each page."""
        if self.model is None:
            raise RuntimeError("PageClassifier: fit() it first (or build it with from_settings)")
        return np.asarray(self.model.predict_proba([page_text(page) for page in pages])[:, 1], dtype=np.float64)

    def score(self, page: PageFields, response: Response | None = None) -> float:
        return float(self.predict_proba([page])[0])
