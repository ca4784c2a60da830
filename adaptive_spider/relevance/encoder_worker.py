"""A sentence encoder in a process of its own: the other end of :mod:`~adaptive_spider.relevance.encoder_processes`.

Run as ``python -m adaptive_spider.relevance.encoder_worker FOLDER MAX_TOKENS [RUNTIME]``.
It loads the model (run by ``numpy``, the default, or ``onnx``), then answers on stdout what
it reads on stdin, in order, until stdin closes:

- first, once the model is loaded: the embedding's dimension (4 bytes, big-endian);
- then for each text (4 bytes of length, big-endian, then the text in UTF-8): its unit-length
  embedding (dimension float32 values, little-endian).

One text at a time: batches of texts that had arrived together were no faster per text at 64
tokens (measured on this project's 2-core machine). Plain pipes and a fixed frame keep the
crawl's side free of threads and of multiprocessing's import of the crawl's ``__main__``.
"""

from __future__ import annotations

import struct
import sys
from typing import BinaryIO

_HEADER = struct.Struct(">I")


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


def serve(folder: str, max_tokens: int, requests: BinaryIO, answers: BinaryIO, runtime: str = "numpy") -> None:
    """Encode each text read from ``requests`` and write its embedding to ``answers``."""
    from adaptive_spider.relevance.onnx_encoder import sentence_encoder

    encoder = sentence_encoder(folder, max_tokens, runtime)
    dimension = int(encoder.encode(["ready"]).shape[1])
    answers.write(_HEADER.pack(dimension))
    answers.flush()
    while True:
        text = read_text(requests)
        if text is None:
            return
        answers.write(encoder.encode([text])[0].astype("<f4").tobytes())
        answers.flush()


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (2, 3):
        print("usage: python -m adaptive_spider.relevance.encoder_worker FOLDER MAX_TOKENS [RUNTIME]", file=sys.stderr)
        return 2
    try:
        serve(args[0], int(args[1]), sys.stdin.buffer, sys.stdout.buffer, *args[2:])
    except (BrokenPipeError, KeyboardInterrupt):
        return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
