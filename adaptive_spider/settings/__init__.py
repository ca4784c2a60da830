"""Every ``ADAPTIVE_*`` setting: declared once in ``table``; from it the defaults (``defaults``),
the validated per-crawl config (``config``) and docs/settings.md (``docs``)."""
