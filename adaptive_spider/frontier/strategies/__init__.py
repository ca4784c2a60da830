"""Frontier orders behind ``ADAPTIVE_STRATEGY``: TRES, link groups and the baselines."""
