"""Progress of a long harness run: which crawl is running, pages fetched so far, time elapsed."""

from __future__ import annotations

import sys
import time

from benchmarks.harness.metrics import Run, canonical_url


class Progress:
    """Prints one line per crawl as it goes (rewritten in place on a terminal, else every ``interval`` s)."""

    def __init__(self, total: int, budget: int, stream=None, interval: float = 5.0):
        self.total = total
        self.budget = budget
        self.stream = stream if stream is not None else sys.stderr
        self.interval = interval
        self.live = bool(getattr(self.stream, "isatty", lambda: False)())
        self.index = 0
        self.label = ""
        self.relevant: set[str] = set()
        self._found_urls: set[str] = set()
        self._counted = 0
        self._last = 0.0

    def begin(self, topic: str, strategy: str, repeat: int, repeats: int, relevant: set[str]) -> None:
        self.index += 1
        again = f" #{repeat + 1}" if repeats > 1 else ""
        self.label = f"[{self.index:>{len(str(self.total))}}/{self.total}] {topic} {strategy}{again}"
        self.relevant = {canonical_url(url) for url in relevant}
        self._found_urls = set()
        self._counted = 0
        self._last = time.monotonic()
        self._write(f"{self.label}: starting", final=False)

    def update(self, run: Run, elapsed: float) -> None:
        self._count(run)
        now = time.monotonic()
        if now - self._last < (0.5 if self.live else self.interval):
            return
        self._last = now
        self._write(
            f"{self.label}: {len(run.fetched)}/{self.budget} pages, {len(self._found_urls)}/{len(self.relevant)} relevant, "
            f"{elapsed:.0f} s",
            final=False,
        )

    def end(self, run: Run, metrics: dict) -> None:
        self._count(run)
        reached = {name: metrics[name] if metrics[name] is not None else f">{self.budget}" for name in ("N50", "N90")}
        self._write(
            f"{self.label}: {metrics['pages']} pages in {run.seconds:.1f} s ({metrics['pages_per_s']} pages/s), "
            f"{len(self._found_urls)}/{len(self.relevant)} relevant, N50 {reached['N50']}, N90 {reached['N90']}, "
            f"finish {metrics['finish_reason'] or '?'}",
            final=True,
        )

    def _count(self, run: Run) -> None:
        fetched = (canonical_url(url) for url in run.fetched[self._counted : self.budget])
        self._found_urls.update(url for url in fetched if url in self.relevant)
        self._counted = max(self._counted, min(len(run.fetched), self.budget))

    def note(self, text: str) -> None:
        self._write(text, final=True)

    def _write(self, text: str, final: bool) -> None:
        if self.live:
            self.stream.write("\r\033[K" + text + ("\n" if final else ""))
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
