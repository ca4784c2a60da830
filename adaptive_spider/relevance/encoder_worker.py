"""A sentence encoder in a process of its own: the other end of :mod:`~adaptive_spider.relevance.encoder_processes`.

Run as ``python -m adaptive_spider.relevance.encoder_worker FOLDER MAX_TOKENS``. It loads the
model, then answers on stdout what it reads on stdin, in order, until stdin closes:

- first, once the model is loaded: the embedding's dimension (4 bytes, big-endian);
- then for each text (4 bytes of length, big-endian, then the text in UTF-8): its unit-length
  embedding (dimension float32 values, little-endian).

Texts that have arrived while it encoded are encoded together, one forward pass for all: a
batch's matrix products run faster per text than one text's. Plain pipes and a fixed frame keep
the crawl's side free of threads and of multiprocessing's import of the crawl's ``__main__``.
"""

from __future__ import annotations

import os
import select
import struct
import sys
from typing import BinaryIO

_HEADER = struct.Struct(">I")
#: Texts of one forward pass at most: pages arrive a few at a time, and a larger batch only
#: delays the first of them.
MAX_BATCH = 8


def read_exactly(stream: BinaryIO, size: int) -> bytes | None:
    """``size`` bytes from ``stream``, or None at its end."""
    data = b""
    while len(data) < size:
        chunk = stream.read(size - len(data))
        if not chunk:
            return None
        data += chunk
    return data


def read_text(stream: BinaryIO) -> str | None:
    """One framed text, or None when the crawl closed the pipe."""
    header = read_exactly(stream, _HEADER.size)
    if header is None:
        return None
    (length,) = _HEADER.unpack(header)
    body = read_exactly(stream, length)
    return None if body is None else body.decode("utf-8", errors="replace")


def _more_waiting(stream: BinaryIO) -> bool:
    return bool(select.select([stream], [], [], 0)[0])


def serve(folder: str, max_tokens: int, requests: BinaryIO, answers: BinaryIO) -> None:
    """Encode each text read from ``requests`` and write its embedding to ``answers``."""
    from adaptive_spider.relevance.sentence_encoder import SentenceEncoder

    encoder = SentenceEncoder(folder, max_tokens)
    dimension = int(encoder.encode(["ready"]).shape[1])
    answers.write(_HEADER.pack(dimension))
    answers.flush()
    while True:
        text = read_text(requests)
        if text is None:
            return
        batch = [text]
        # Only what has fully arrived is read without waiting: the crawl writes a frame at once.
        while len(batch) < MAX_BATCH and _more_waiting(requests):
            text = read_text(requests)
            if text is None:
                break
            batch.append(text)
        answers.write(encoder.encode(batch).astype("<f4").tobytes())
        answers.flush()
        if text is None:
            return


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m adaptive_spider.relevance.encoder_worker FOLDER MAX_TOKENS", file=sys.stderr)
        return 2
    # Unbuffered binary ends of the pipes: select() must see what the reader has not taken yet.
    requests = os.fdopen(sys.stdin.fileno(), "rb", buffering=0)
    try:
        serve(args[0], int(args[1]), requests, sys.stdout.buffer)
    except (BrokenPipeError, KeyboardInterrupt):
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
