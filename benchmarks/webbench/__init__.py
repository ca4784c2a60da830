"""The offline web benchmark: Debian's HTML documentation served locally as a web of sites.

``web.OfflineWeb`` answers URLs without sockets, ``server`` serves it as an HTTP proxy on
127.0.0.1, ``linkgraph`` walks its link graph and ``throughput`` measures stock Scrapy
through the server. See docs/webbench.md.
"""
