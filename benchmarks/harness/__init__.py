"""The benchmark harness: focused crawls of the offline web, measured and compared.

``python -m benchmarks.harness`` (see :mod:`benchmarks.harness.cli`) runs the
``focused`` spider with every frontier strategy and stock Scrapy on each topic
of a topics file, and reports H@N, R@N, N50, N90 and pages/s as a table, a JSON
file and plots. Modules: ``topics`` (topics files, labels from label rules),
``crawl`` (one real crawl), ``lockstep`` (reruns that agree), ``metrics``,
``report`` and ``progress``. docs/benchmarks.md describes it all.
"""
