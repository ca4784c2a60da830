"""JavaScript profile: the default profile, with pages rendered in headless chromium.

Downloads go through scrapy-playwright on Debian's chromium (/usr/bin/chromium;
never ``playwright install``). Every page is rendered, so content written by
JavaScript is there to extract; a template's browser actions (wait, scroll,
click, wait for) run before extraction. Select it with
``SCRAPY_PROJECT=javascript scrapy crawl ...``.
"""

from settings_profiles import default as _default
from settings_profiles.default import *  # noqa: F403

DOWNLOAD_HANDLERS = {
    "http": "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler",
    "https": "scrapy_playwright.handler.ScrapyPlaywrightDownloadHandler",
}
# Pages whose requests do not ask for the browser themselves get it anyway.
DOWNLOADER_MIDDLEWARES = {
    **getattr(_default, "DOWNLOADER_MIDDLEWARES", {}),
    "adaptive_spider.extract.browser.BrowserRenderingMiddleware": 50,
}
PLAYWRIGHT_BROWSER_TYPE = "chromium"
PLAYWRIGHT_LAUNCH_OPTIONS = {
    "executable_path": "/usr/bin/chromium",
    "headless": True,
    "args": [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
    ],
}
# A browser page costs far more than an HTTP request; keep a few at a time.
CONCURRENT_REQUESTS = 4
PLAYWRIGHT_MAX_PAGES_PER_CONTEXT = 4
PLAYWRIGHT_DEFAULT_NAVIGATION_TIMEOUT = 30_000
TWISTED_REACTOR = "twisted.internet.asyncioreactor.AsyncioSelectorReactor"
