"""Every ``ADAPTIVE_*`` setting: defaults, the validated per-crawl config, the generated docs."""
