"""Benchmarks of adaptive_spider: scripts that measure and print figures (run them from the project root)."""
