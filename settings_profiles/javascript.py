"""JavaScript profile: the default profile, with pages rendered in headless chromium.

Downloads go through scrapy-playwright on Debian's chromium (/usr/bin/chromium;
never ``playwright install``). Every page is rendered, so content written by
JavaScript is there to extract; a template's browser actions (wait, scroll,
click, wait for) run before extraction. Select it with
``SCRAPY_PROJECT=javascript scrapy crawl ...``. The settings are the ``JavascriptAddon``'s.
"""

from settings_profiles.default import *  # noqa: F403

ADDONS = {"adaptive_spider.profiles.JavascriptAddon": 0}
