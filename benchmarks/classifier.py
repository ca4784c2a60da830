"""The page classifier on the offline web: its training files, and its effect on N90 and R@1000.

ACHE users train a page classifier from a few pages they labelled. This builds such a
set for each topic of a topics file from the offline web's labels: ``--positives``
relevant pages and ``--negatives`` irrelevant ones, drawn at random (seeded) from the
pages reachable from the topic's seeds, each written with its HTML, so the crawl fetches
nothing extra to train. Then the harness crawls with the classifier as the page relevance
(``{topic}`` in a ``--set`` value is the topic's id), and ``compare`` puts its runs beside
those of the default BM25 relevance, measured on all relevant pages and on the relevant
pages not in the training set (a page the classifier was trained on is found for free):

    python -m benchmarks.classifier training benchmarks/out/classifier
    python -m benchmarks.harness --strategies tres --traces --out benchmarks/out/relevance-bm25
    python -m benchmarks.harness --strategies tres --traces --out benchmarks/out/relevance-classifier \\
        --set ADAPTIVE_RELEVANCE=adaptive_spider.relevance.classifier.PageClassifier \\
        --set 'ADAPTIVE_CLASSIFIER_TRAINING=benchmarks/out/classifier/{topic}.jsonl'
    python -m benchmarks.classifier compare benchmarks/out/relevance-bm25 benchmarks/out/relevance-classifier \\
        --training benchmarks/out/classifier

``--web big`` does the same on the big web, its relevant pages from the labels file beside
the topics file (``labels-dev.json``, ``labels-bigweb-heldout.json``; ``--labels`` names
another); the harness runs then take ``--web big`` too.

``python -m benchmarks.classifier check benchmarks/out/classifier`` scores every reachable
page of each topic with its trained classifier (no crawl): ROC AUC, and the mean score
of relevant and irrelevant pages.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

from benchmarks.harness.metrics import Run
from benchmarks.harness.topics import Labeler, load_topics
from benchmarks.webbench.webs import WEBS, open_web, spec_folder


class Topics:
    """The topics of a run, the web they are judged on, and their relevant pages."""

    def __init__(self, args) -> None:
        spec = spec_folder(args.web)
        path = args.topics or (str(spec / "topics-dev.json") if spec else None)
        if path is None:
            raise SystemExit(f"error: no topics file (--topics), and no ../shared spec folder of the {args.web} web")
        self.topics = load_topics(path)
        self.labeler = Labeler(open_web(args.web))
        beside = Path(path).with_name(
            Path(path).name.replace("topics", "labels", 1)
        )  # labels-X.json beside topics-X.json
        labels_path = args.labels or (str(beside) if args.web == "big" else None)
        # The big web's labels come from its labels file: its rules read page titles over 100k pages.
        self.labels = json.loads(Path(labels_path).read_text(encoding="utf-8")) if labels_path else {}

    def relevant(self, topic) -> set[str]:
        if topic.id in self.labels:
            return set(self.labels[topic.id])
        return set(self.labeler.relevant(topic))


def draw_training(
    topic: str, relevant: set[str], irrelevant: set[str], positives: int, negatives: int, rng: random.Random
) -> tuple[list[str], list[str]]:
    """``positives`` relevant and ``negatives`` irrelevant pages drawn at random. A topic with
    fewer than twice ``positives`` relevant pages gives half of them: the other half measures
    what the classifier was not trained on."""
    wanted = min(positives, len(relevant) // 2)
    if wanted == 0:
        raise SystemExit(f"error: {topic}: {len(relevant)} relevant page(s), too few to train on and keep some unseen")
    if wanted < positives:
        print(f"{topic}: {len(relevant)} relevant pages; training on {wanted}, the other half unseen")
    irrelevant_pages = sorted(irrelevant)
    return rng.sample(sorted(relevant), wanted), rng.sample(irrelevant_pages, min(negatives, len(irrelevant_pages)))


def training(args) -> int:
    run = Topics(args)
    topics, labeler = run.topics, run.labeler
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for topic in topics:
        relevant = run.relevant(topic)
        rng = random.Random(f"{args.seed}:{topic.id}")
        irrelevant = set(labeler.reachable_pages(topic.seeds)) - relevant
        positives, negatives = draw_training(topic.id, relevant, irrelevant, args.positives, args.negatives, rng)
        lines = [
            json.dumps({"url": url, "label": label, "html": labeler.web.get(url).body.decode("utf-8", "replace")})
            for label, urls in ((1, positives), (0, negatives))
            for url in urls
        ]
        (out / f"{topic.id}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        print(f"{topic.id}: {len(positives)} relevant, {len(negatives)} irrelevant -> {out / f'{topic.id}.jsonl'}")
    return 0


def check(args) -> int:
    from sklearn.metrics import roc_auc_score

    from adaptive_spider.relevance.classifier import PageClassifier
    from adaptive_spider.relevance.pagetext import html_page_fields

    run = Topics(args)
    for topic in run.topics:
        training_file = Path(args.training) / f"{topic.id}.jsonl"
        classifier = PageClassifier.from_settings(
            {"ADAPTIVE_CLASSIFIER_TRAINING": str(training_file), "ADAPTIVE_CLASSIFIER_C": args.C}
        )
        trained = {json.loads(line)["url"] for line in training_file.read_text().splitlines() if line}
        relevant = run.relevant(topic)
        urls = [url for url in run.labeler.reachable_pages(topic.seeds) if url not in trained]
        pages = [html_page_fields(run.labeler.web.get(url).body.decode("utf-8", "replace"), url) for url in urls]
        scores = classifier.predict_proba(pages)
        truth = [url in relevant for url in urls]
        mean_relevant = scores[[i for i, t in enumerate(truth) if t]].mean()
        mean_other = scores[[i for i, t in enumerate(truth) if not t]].mean()
        above = sum(1 for s, t in zip(scores, truth) if s >= 0.5)
        print(
            f"{topic.id:<20} AUC {roc_auc_score(truth, scores):.3f}  mean score relevant {mean_relevant:.2f}, "
            f"irrelevant {mean_other:.2f}; {above} of {len(urls)} pages >= 0.5 ({sum(truth)} relevant)"
        )
    return 0


def _runs(folder: Path) -> dict[str, Run]:
    """The first crawl of each topic in a harness output folder (from its traces)."""
    runs = {}
    for trace in sorted((folder / "traces").glob("*-1.txt")):
        topic, strategy = trace.stem[: -len("-1")].rsplit("-", 1)
        runs[topic] = Run(topic, strategy, trace.read_text(encoding="utf-8").split())
    return runs


def compare(args) -> int:
    run_topics = Topics(args)
    folders = [Path(folder) for folder in args.runs]
    runs = [_runs(folder) for folder in folders]
    names = [folder.name for folder in folders]
    header = (
        "| topic (relevant pages counted) | relevant | " + " | ".join(f"{n} N90 | {n} R@1000" for n in names) + " |"
    )
    lines = [header, "|" + "---|" * (2 + 2 * len(names))]
    means: dict[str, list[list[float]]] = {}
    for topic in run_topics.topics:
        relevant = run_topics.relevant(topic)
        sets = [("all", relevant)]
        if args.training:
            trained = {
                json.loads(line)["url"]
                for line in (Path(args.training) / f"{topic.id}.jsonl").read_text().splitlines()
                if line
            }
            sets.append(("not trained on", relevant - trained))
        for label, pages in sets:
            cells = []
            row = []
            for by_topic in runs:
                run = by_topic.get(topic.id)
                metrics = run.metrics(pages, args.budget) if run else {}
                cells += [str(metrics.get("N90", "–")), str(metrics.get("R@1000", "–"))]
                n90 = metrics.get("N90")
                row += [args.budget + 1 if n90 is None else n90, metrics.get("R@1000") or 0.0]
            means.setdefault(label, []).append(row)
            lines.append(f"| {topic.id} ({label}) | {len(pages)} | " + " | ".join(cells) + " |")
    for label, rows in means.items():
        columns = [sum(values) / len(values) for values in zip(*rows)]
        cells = [f"{value:.1f}" if i % 2 == 0 else f"{value:.3f}" for i, value in enumerate(columns)]
        lines.append(f"| mean ({label}) | | " + " | ".join(cells) + " |")
    print("\n".join(lines))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.classifier", description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", help="topics JSON file (default: the web's topics-dev.json in ../shared)")
    parser.add_argument("--web", choices=WEBS, default="small", help="the offline web (default small)")
    parser.add_argument(
        "--labels",
        help="a labels JSON file (topic id: relevant URLs; default for --web big: labels-X.json beside topics-X.json)",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    make = commands.add_parser("training", help="write <topic>.jsonl training files into a folder")
    make.add_argument("out")
    make.add_argument("--positives", type=int, default=10)
    make.add_argument("--negatives", type=int, default=10)
    make.add_argument("--seed", type=int, default=0)
    make.set_defaults(run=training)
    test = commands.add_parser("check", help="score every reachable page with each topic's classifier")
    test.add_argument("training")
    test.add_argument("--C", type=float, default=10.0)
    test.set_defaults(run=check)
    table = commands.add_parser("compare", help="N90 and R@1000 of harness runs (made with --traces)")
    table.add_argument("runs", nargs="+", help="harness output folders")
    table.add_argument("--training", help="the training folder: also measure without its relevant pages")
    table.add_argument("--budget", type=int, default=1000)
    table.set_defaults(run=compare)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
