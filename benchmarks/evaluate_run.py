"""Score a TREC run file (e.g. from ``scrapy search --queries ... --run``) on Cranfield.

python benchmarks/export_cranfield.py out/        # writes cran.jsonl and queries.tsv
scrapy index --input out/cran.jsonl --index out/cran-index --fields title,text --weights title=6
scrapy search --index out/cran-index --queries out/queries.tsv --run out/run.txt
python benchmarks/evaluate_run.py out/run.txt
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from datasets import cranfield

from adaptive_spider.search.evaluation import evaluate, read_run


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("run", help="TREC run file")
    options = parser.parse_args()
    _, _, qrels = cranfield()
    figures = evaluate(read_run(options.run), qrels)
    print(" ".join(f"{name} {value:.3f}" for name, value in figures.items()))


if __name__ == "__main__":
    main()
