"""How well a page or a link matches the query: page text, links with their context, scores."""
