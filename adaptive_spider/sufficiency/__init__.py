"""Information sufficiency: when what the crawl fetched answers the query (the self-stop)."""
