"""Search over what was crawled: a BM25 index with fuzzy suggestions and a result page.

Python API::

    from adaptive_spider.search import SearchIndex
    index = SearchIndex.create("idx", fields=["title", "text"], id_field="url")
    index.add(items)
    index.commit()
    for hit in SearchIndex.open("idx").search("wing slipstream", top=10).hits:
        print(hit.id, hit.score, hit.fields["title"])
"""

from .analysis import Analyzer
from .errors import SearchError
from .formula import BoostFormula
from .fuzzy import QGramIndex, prefix_edit_distance
from .index import Hit, SearchIndex, SearchResults
from .ranking import BM25
from .synonyms import SynonymDictionary

__all__ = [
    "BM25",
    "Analyzer",
    "BoostFormula",
    "Hit",
    "QGramIndex",
    "SearchError",
    "SearchIndex",
    "SearchResults",
    "SynonymDictionary",
    "prefix_edit_distance",
]
