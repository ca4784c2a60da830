"""The Scrapy adapters of a focused crawl: scheduler, middlewares, pipelines, report and the
per-crawl state they share. Each module is named after the Scrapy hook it plugs into."""
