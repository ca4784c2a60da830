"""Where a traced crawl's fetches went, host by host, stretch by stretch.

A harness run with ``--traces`` keeps each crawl's fetch order. This cuts each trace into
stretches of ``--every`` fetches and prints, per stretch, the relevant pages found so far, what
the named hosts got (pages fetched, relevant among them) and the three busiest hosts. The
default hosts are the big web's slow ones: whether a slow host's places were busy while its
pages waited is what the pace shows (at most one fetch in about eight for a 1.5-second host with
eight places, while the rest of the crawl fetches some forty pages a second)::

    python -m benchmarks.harness --web big --strategies bestfirst --traces --out /tmp/run
    python -m benchmarks.host_pace /tmp/run --topic threads-sync
    python -m benchmarks.host_pace /tmp/run --every 500 --hosts doc.rust-lang.test,en.cppreference.test

The labels are the run's: the labels file beside its topics file (``labels-dev.json`` for the
big web's dev topics), or ``--labels``. Nothing is fetched: this reads files only.
"""

from __future__ import annotations

import argparse
import gzip
import sys
from collections import Counter
from collections.abc import Iterable, Mapping
from pathlib import Path
from urllib.parse import urlsplit

from benchmarks.harness.cli import BadInput, _reference_labels, spec_folder
from benchmarks.page_scores import _run_metadata, _topics_file
from benchmarks.webbench.bigweb import SLOW_HOSTS

EXIT_BAD_INPUT = 2


def pace_rows(urls: list[str], relevant: set[str], hosts: Iterable[str], every: int) -> list[dict]:
    """One row per stretch of ``every`` fetches: its last fetch, the relevant pages found so far,
    ``(fetched, relevant)`` per host of ``hosts``, and the three busiest hosts of the stretch."""
    hosts = list(hosts)
    rows, found = [], 0
    for start in range(0, len(urls), every):
        stretch = urls[start : start + every]
        fetched = Counter(urlsplit(url).hostname or "" for url in stretch)
        hits = Counter(urlsplit(url).hostname or "" for url in stretch if url in relevant)
        found += sum(hits.values())
        rows.append(
            {
                "fetches": start + len(stretch),
                "found": found,
                "hosts": {host: (fetched[host], hits[host]) for host in hosts},
                "busiest": fetched.most_common(3),
            }
        )
    return rows


def markdown(rows: list[dict], hosts: list[str], relevant: int) -> str:
    lines = [
        f"| fetches | relevant found (of {relevant}) | "
        + " | ".join(f"{host}: fetched (relevant)" for host in hosts)
        + " | busiest hosts |",
        "|---:|---:|" + "---:|" * len(hosts) + "---|",
    ]
    for row in rows:
        cells = [f"{fetched} ({hits})" for fetched, hits in row["hosts"].values()]
        busiest = ", ".join(f"{host} {n}" for host, n in row["busiest"])
        lines.append(f"| {row['fetches']} | {row['found']} | " + " | ".join(cells) + f" | {busiest} |")
    return "\n".join(lines)


def _labels(run: Path, labels_path: str | None) -> Mapping[str, list[str]]:
    """The run's labels: ``--labels``, else the file beside its topics file, as the harness finds it."""
    topics_file = _topics_file(_run_metadata(run))
    if not Path(topics_file).exists() and (spec := spec_folder("big")) is not None:
        topics_file = str(spec / Path(topics_file).name)  # the spec's file, run on another machine
    reference = _reference_labels(labels_path, topics_file)
    if reference is None:
        raise BadInput(f"no labels file beside {topics_file}: give --labels")
    return reference[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.host_pace", description=__doc__.split("\n")[0])
    parser.add_argument("run", type=Path, help="a harness output folder written with --traces")
    parser.add_argument("--topic", help="only this topic's traces (default: every trace)")
    parser.add_argument("--every", type=int, default=250, help="fetches per stretch (default %(default)s)")
    parser.add_argument(
        "--hosts",
        help="comma-separated hosts to follow (default: the big web's slow hosts)",
        default=",".join(SLOW_HOSTS),
    )
    parser.add_argument("--labels", help="labels JSON (default: the one beside the run's topics file)")
    args = parser.parse_args(argv)
    hosts = [host for host in args.hosts.split(",") if host]
    try:
        if args.every < 1:
            raise BadInput(f"--every {args.every}: give a number of fetches of at least 1")
        # A kept trace may be gzipped (benchmarks/results/ keeps them so).
        traces = sorted([*(args.run / "traces").glob("*.txt"), *(args.run / "traces").glob("*.txt.gz")])
        if not traces:
            raise BadInput(f"{args.run}: no traces/ (run the harness with --traces)")
        labels = _labels(args.run, args.labels)
        topics = sorted((t for t in labels if not t.startswith("_")), key=len, reverse=True)
        shown = 0
        for path in traces:
            stem = path.name.removesuffix(".gz").removesuffix(".txt")
            topic = next((t for t in topics if stem.startswith(t + "-")), None)
            if topic is None or (args.topic and topic != args.topic):
                continue
            text = (
                gzip.decompress(path.read_bytes()).decode()
                if path.suffix == ".gz"
                else path.read_text(encoding="utf-8")
            )
            urls = [line.strip() for line in text.splitlines() if line.strip()]
            relevant = set(labels[topic])
            print(f"\n{stem}: {len(urls)} fetches\n")
            print(markdown(pace_rows(urls, relevant, hosts, args.every), hosts, len(relevant)))
            shown += 1
        if not shown:
            known = ", ".join(sorted(topics))
            raise BadInput(f"no trace of topic {args.topic!r} in {args.run} (the labels' topics: {known})")
    except BadInput as error:
        print(f"error: {error}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return 0


if __name__ == "__main__":
    sys.exit(main())
