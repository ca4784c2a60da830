"""``scrapy crawl`` that checks spider arguments and settings before it starts.

Scrapy builds the spider inside the running reactor, so an invalid argument
ends as a traceback in the log and a zero exit status. This command asks the
spider class to check its arguments first (a ``check_arguments`` classmethod,
as the ``focused`` and ``template`` spiders have) and validates the
``ADAPTIVE_*`` settings, and turns a bad value into Scrapy's usual one-line
usage error with exit status 2. Everything else is Scrapy's ``crawl`` command.
"""

from __future__ import annotations

from scrapy.commands.crawl import Command as ScrapyCrawlCommand
from scrapy.exceptions import UsageError

from adaptive_spider.config import AdaptiveConfig


class Command(ScrapyCrawlCommand):
    def run(self, args, opts) -> None:
        if len(args) != 1:
            return super().run(args, opts)
        assert self.crawler_process
        crawler = self._create_crawler(args[0])
        try:
            check = getattr(crawler.spidercls, "check_arguments", None)
            if check is not None:
                check(crawler.settings, **opts.spargs)
            AdaptiveConfig.from_settings(crawler.settings)
        except ValueError as exc:  # ConfigError, TemplateError: one line naming the input
            raise UsageError(str(exc), print_help=False) from None
        self.crawler_process.crawl(crawler, **opts.spargs)
        self.crawler_process.start()
        if self.crawler_process.bootstrap_failed:
            self.exitcode = 1
        return None
