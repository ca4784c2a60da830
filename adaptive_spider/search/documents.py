"""What the index takes from a crawl item or a feed record: one rule for both ways in.

The :class:`~.pipelines.SearchIndexPipeline` (during a crawl) and ``scrapy index``
(over a feed) both pass every record through :func:`search_document` and pick the
id field with :func:`default_id_field`, so an index built either way holds the
same documents.

Most records are flat: text fields and numbers side by side.  A template's
documents (docs/extraction.md) are not, in two ways the index has to know about:

* their numbers are under ``ranking`` (``{"votes": 1200.0}``), next to the text
  they were read from (``"votes": "1.2k"``).  :func:`search_document` lifts each
  ranking variable to a top-level field, so a formula can name it
  (``log(votes + 1)``), and drops the ``ranking`` mapping, which is no text.
* their ``url`` is the page's, shared by every document of that page; what tells
  them apart is their content, whose SHA-1 the template puts in ``sha1``.  So a
  template document is identified by ``sha1``: a page's ten questions stay ten
  documents, and the same question read from two URLs is one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import SearchError

#: The key of a template document's ranking variables.
RANKING = "ranking"
#: What a ranking variable never replaces: the fields a document is identified by.
IDENTITY_FIELDS = frozenset({"id", "url", "template", "sha1", RANKING})


def is_template_document(record: Mapping[str, Any]) -> bool:
    """Whether *record* is a template's document: a ``template`` name and a content ``sha1``."""
    template, sha1 = record.get("template"), record.get("sha1")
    return isinstance(template, str) and isinstance(sha1, str) and bool(sha1)


def search_document(record: Mapping[str, Any], id_field: str | None = None) -> dict[str, Any]:
    """*record* as the index takes it: ranking variables lifted to numeric fields by name.

    A ranking variable replaces a top-level field of the same name.  That is the
    usual case, not a conflict: ``ranking: votes`` on the field ``votes`` gives
    ``"votes": "1.2k"`` and ``ranking.votes = 1200``, and whoever writes
    ``log(votes + 1)`` means the number (the text "1.2k" is no number, and would
    otherwise make ``votes`` a text field).  The feed keeps both.  A ranking
    variable never replaces the id field or :data:`IDENTITY_FIELDS`.  A
    ``ranking`` value that is not a mapping (a CSV column, say) is left alone:
    it is not a template's.
    """
    document = dict(record)
    ranking = document.get(RANKING)
    if not isinstance(ranking, Mapping):
        return document
    del document[RANKING]
    for name, value in ranking.items():
        name = str(name)
        if name in IDENTITY_FIELDS or name == id_field:
            continue
        document[name] = value
    return document


def default_id_field(record: Mapping[str, Any]) -> str:
    """The id field when none is given: ``sha1`` for a template document, else ``url``.

    The SearchIndexPipeline uses it as it is (an item's ``url`` identifies a page);
    ``scrapy index`` first prefers an ``id`` field (see :func:`guess_id_field`).
    """
    return "sha1" if is_template_document(record) else "url"


def guess_id_field(record: Mapping[str, Any]) -> str:
    """The id field of a feed from its first record: ``id``, else :func:`default_id_field`."""
    if "id" in record:
        return "id"
    name = default_id_field(record)
    if name in record:
        return name
    raise SearchError(
        f"no 'id' or 'url' field in the first record; pass --id-field (fields: {', '.join(record) or 'none'})"
    )
