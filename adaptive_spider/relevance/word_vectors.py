"""Static word vectors distilled from a sentence encoder: a meaning for each word at lookup cost.

Running the sentence encoder on every page costs about 50 ms of CPU (:mod:`.embedding`).
Most of what it knows about a word it also says about the word alone: the encoder's output
for ``[CLS] word [SEP]`` places "regex" near "regular" and "pattern", "mutex" near "lock".
So each piece of the model's vocabulary is embedded once, alone (about 25 s for the 30,522
pieces of all-MiniLM-L6-v2, then read from a cache file), and a word's vector is the mean of
its pieces' (``std::basic_regex`` → "basic", "regex"; "condvar" → "con", "##d", "##var").
This is the distillation behind Model2Vec (Tulkens and van Dongen, 2024), without its
further training. A text is then the weighted sum of its words' vectors
(:class:`~adaptive_spider.relevance.static_embedding.StaticEmbeddingRelevance`).

The vectors are centred on the vocabulary's mean: every piece's vector shares a large common
part, which would make any two texts look alike.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import numpy as np

from adaptive_spider.relevance.sentence_encoder import SentenceEncoder, WordPieceTokenizer, check_model_folder

logger = logging.getLogger(__name__)

#: Bump when the distillation changes, so that an old cache file is not read for a new one.
_FORMAT = 1
_BATCH = 512


def default_cache_folder() -> Path:
    """Where distilled vectors are kept between crawls: ``$XDG_CACHE_HOME/adaptive_spider``."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "adaptive_spider"


def distil_pieces(encoder: SentenceEncoder) -> np.ndarray:
    """Each vocabulary piece's embedding alone: the mean output of ``[CLS] piece [SEP]``."""
    cls_id, sep_id = encoder.tokenizer.ids["[CLS]"], encoder.tokenizer.ids["[SEP]"]
    size = len(encoder.tokenizer.ids)
    pieces = np.empty((size, encoder.width), dtype=np.float32)
    for start in range(0, size, _BATCH):
        rows = [[cls_id, piece, sep_id] for piece in range(start, min(size, start + _BATCH))]
        pieces[start : start + len(rows)] = encoder.pooled(rows)
    return pieces


def _model_key(folder: Path) -> str:
    """A short fingerprint of a model folder's files: the cache file's name."""
    digest = hashlib.sha1(f"format {_FORMAT}".encode())
    for name in ("config.json", "vocab.txt"):
        digest.update((folder / name).read_bytes())
    weights = folder / "model.safetensors"
    digest.update(str(weights.stat().st_size).encode())
    with weights.open("rb") as file:
        digest.update(file.read(1 << 20))
    return digest.hexdigest()[:16]


def load_pieces(folder: str | Path, cache: Path | None) -> tuple[WordPieceTokenizer, np.ndarray]:
    """The model's tokenizer and its pieces' vectors: from ``cache`` when distilled before,
    else distilled now and saved there (a cache that cannot be written only costs the time)."""
    folder = check_model_folder(folder)
    path = cache / f"word-vectors-{_model_key(folder)}.npy" if cache is not None else None
    if path is not None and path.is_file():
        try:
            pieces = np.load(path).astype(np.float32)
            tokenizer = WordPieceTokenizer.from_file(folder / "vocab.txt")
            if pieces.shape[0] == len(tokenizer.ids):
                return tokenizer, pieces
        except (OSError, ValueError) as error:
            logger.warning("Word vectors: %s unreadable (%s); distilling them again", path, error)
    encoder = SentenceEncoder(folder)
    logger.info("Word vectors: distilling %d pieces of %s (once per model)", len(encoder.tokenizer.ids), folder)
    pieces = distil_pieces(encoder)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(f"{path.stem}.{os.getpid()}.partial.npy")
            np.save(partial, pieces.astype(np.float16))
            os.replace(partial, path)
        except OSError as error:
            logger.warning("Word vectors: cannot save %s (%s); the next crawl distils them again", path, error)
    return encoder.tokenizer, pieces


class WordVectors:
    """The centred vector of any word, from its pieces'; each word's row is kept once made.

    Parameters
    ----------
    tokenizer : WordPieceTokenizer
        The model's tokenizer (splits a word into the pieces of ``pieces``).
    pieces : ndarray of shape (vocabulary size, width)
        Each piece's vector (:func:`distil_pieces`).
    """

    def __init__(self, tokenizer: WordPieceTokenizer, pieces: np.ndarray) -> None:
        self.tokenizer = tokenizer
        self.pieces = np.asarray(pieces, dtype=np.float32)
        self.center = self.pieces.mean(axis=0)
        self.rows: dict[str, int] = {}
        self.matrix = np.zeros((1024, self.pieces.shape[1]), dtype=np.float32)

    @classmethod
    def of_model(cls, folder: str | Path, cache: Path | None = None) -> WordVectors:
        return cls(*load_pieces(folder, cache))

    def __len__(self) -> int:
        return len(self.rows)

    def row_ids(self, words: list[str]) -> np.ndarray:
        """The row of :attr:`matrix` that holds each word's vector (new words get one)."""
        rows = self.rows
        ids = np.empty(len(words), dtype=np.int64)
        for index, word in enumerate(words):
            row = rows.get(word)
            if row is None:
                row = self._add(word)
            ids[index] = row
        return ids

    def vector(self, word: str) -> np.ndarray:
        return self.matrix[self.row_ids([word])[0]]

    def _add(self, word: str) -> int:
        tokenizer = self.tokenizer
        piece_ids = [piece for part in tokenizer.words(word) for piece in tokenizer.word_ids(part)]
        piece_ids = piece_ids or [tokenizer.ids["[UNK]"]]
        row = len(self.rows)
        if row == len(self.matrix):
            self.matrix = np.concatenate([self.matrix, np.zeros_like(self.matrix)])
        self.matrix[row] = self.pieces[piece_ids].mean(axis=0) - self.center
        self.rows[word] = row
        return row
