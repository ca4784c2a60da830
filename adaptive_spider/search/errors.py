"""The one exception type of the search package."""


class SearchError(ValueError):
    """Bad input to the search index: the message is one line naming what is wrong."""
