"""Scrapy commands of adaptive_spider (found through COMMANDS_MODULE or entry points)."""
