"""A BERT sentence encoder in NumPy: the model behind :mod:`adaptive_spider.relevance.embedding`.

Sentence-embedding models such as all-MiniLM-L6-v2 are small BERT encoders whose mean-pooled
output, normalised, puts texts that mean the same near each other. sentence-transformers runs
them with PyTorch, a dependency of about a gigabyte; a crawl scores one page at a time, which
NumPy's matrix products do as fast. So this module reads the model's own files (``config.json``,
``vocab.txt``, ``model.safetensors``: a sentence-transformers folder of a BERT model) and runs
the forward pass itself: WordPiece tokens, six (or ``num_hidden_layers``) transformer layers,
mean pooling over the tokens, unit length. Inference only; weights stay as the file has them.
"""

from __future__ import annotations

import json
import struct
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64}


class ModelFilesError(ValueError):
    """The folder is not a BERT sentence-embedding model this encoder can read."""


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """Every tensor of a ``.safetensors`` file (an 8-byte header length, a JSON header, the data)."""
    data = path.read_bytes()
    if len(data) < 8:
        raise ModelFilesError(f"{path}: not a safetensors file (too short)")
    (header_length,) = struct.unpack("<Q", data[:8])
    try:
        header = json.loads(data[8 : 8 + header_length])
    except ValueError as error:
        raise ModelFilesError(f"{path}: not a safetensors file ({error})") from None
    start = 8 + header_length
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(entry["dtype"])
        if dtype is None:
            raise ModelFilesError(f"{path}: tensor {name} is {entry['dtype']}, which this encoder does not read")
        begin, end = entry["data_offsets"]
        tensors[name] = np.frombuffer(data, dtype=dtype, count=(end - begin) // np.dtype(dtype).itemsize,
                                      offset=start + begin).reshape(entry["shape"])  # fmt: skip
    return tensors


def _is_punctuation(char: str) -> bool:
    # BERT counts every non-alphanumeric ASCII sign as punctuation, "$" and "^" included.
    code = ord(char)
    if 33 <= code <= 47 or 58 <= code <= 64 or 91 <= code <= 96 or 123 <= code <= 126:
        return True
    return unicodedata.category(char).startswith("P")


def _is_cjk(code: int) -> bool:
    return (
        0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0x20000 <= code <= 0x2A6DF
        or 0x2A700 <= code <= 0x2B73F or 0x2B740 <= code <= 0x2B81F or 0x2B820 <= code <= 0x2CEAF
        or 0xF900 <= code <= 0xFAFF or 0x2F800 <= code <= 0x2FA1F
    )  # fmt: skip


def _clean(text: str) -> str:
    """BERT's text clean-up: no control characters, CJK characters spaced as words of their own."""
    spaced = []
    for char in text:
        code = ord(char)
        if code == 0 or code == 0xFFFD or (unicodedata.category(char).startswith("C") and char not in "\t\n\r"):
            continue
        spaced.append(f" {char} " if _is_cjk(code) else char)
    return "".join(spaced)


def _split_punctuation(word: str) -> Iterator[str]:
    """A whitespace-separated word lowercased, accents stripped, each punctuation sign a word."""
    word = "".join(c for c in unicodedata.normalize("NFD", word.lower()) if unicodedata.category(c) != "Mn")
    current = ""
    for char in word:
        if _is_punctuation(char):
            if current:
                yield current
            yield char
            current = ""
        else:
            current += char
    if current:
        yield current


class WordPieceTokenizer:
    """BERT's uncased tokenizer: clean, lowercase, strip accents, split off punctuation, then
    split each word into the longest pieces of the vocabulary (``##`` marks a continuation)."""

    def __init__(self, vocab: list[str], max_word_chars: int = 100) -> None:
        self.ids = {token: index for index, token in enumerate(vocab)}
        for special in ("[CLS]", "[SEP]", "[UNK]", "[PAD]"):
            if special not in self.ids:
                raise ModelFilesError(f"vocab.txt has no {special} token")
        self.max_word_chars = max_word_chars
        self._pieces: dict[str, list[int]] = {}

    @classmethod
    def from_file(cls, path: Path) -> WordPieceTokenizer:
        return cls(path.read_text(encoding="utf-8").splitlines())

    def words(self, text: str) -> list[str]:
        return list(self.iter_words(text))

    def iter_words(self, text: str, block: int = 512) -> Iterator[str]:
        """The text's words, read ``block`` characters at a time: a page is cut to the model's
        first tokens, and its other thousands of characters need not be read."""
        carry = ""
        for start in range(0, len(text), block):
            cleaned = carry + _clean(text[start : start + block])
            parts = cleaned.split()
            # A word cut by the block's end waits for the rest of it.
            carry = parts.pop() if parts and start + block < len(text) and not cleaned[-1].isspace() else ""
            for part in parts:
                yield from _split_punctuation(part)
        if carry:
            yield from _split_punctuation(carry)

    def word_ids(self, word: str) -> list[int]:
        cached = self._pieces.get(word)
        if cached is not None:
            return cached
        ids: list[int] = []
        start = 0 if len(word) <= self.max_word_chars else len(word)
        while start < len(word):
            end = len(word)
            while end > start and self._piece(word, start, end) not in self.ids:
                end -= 1
            if end == start:  # no piece fits: the whole word is unknown
                ids = []
                break
            ids.append(self.ids[self._piece(word, start, end)])
            start = end
        ids = ids or [self.ids["[UNK]"]]
        if len(self._pieces) < 200_000:
            self._pieces[word] = ids
        return ids

    @staticmethod
    def _piece(word: str, start: int, end: int) -> str:
        return word[start:end] if start == 0 else "##" + word[start:end]

    def encode(self, text: str, max_length: int) -> list[int]:
        """``[CLS]`` + the text's token ids + ``[SEP]``, cut to ``max_length`` ids in all."""
        ids = [self.ids["[CLS]"]]
        for word in self.iter_words(text):
            ids.extend(self.word_ids(word))
            if len(ids) >= max_length - 1:
                break
        return [*ids[: max_length - 1], self.ids["[SEP]"]]


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz and Stegun 7.1.26 (error under 1.5e-7): NumPy has no erf, and BERT's GELU is exact.
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-x * x))


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / np.float32(np.sqrt(2.0))))


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(variance + eps) * weight + bias


class SentenceEncoder:
    """A BERT sentence-embedding model read from a folder; :meth:`encode` gives unit vectors."""

    def __init__(self, folder: str | Path, max_length: int | None = None) -> None:
        folder = Path(folder)
        #: Where the model's files are (a worker process reads them again from there).
        self.folder = folder
        for name in ("config.json", "vocab.txt", "model.safetensors"):
            if not (folder / name).is_file():
                raise ModelFilesError(f"{folder}: no {name} (a sentence-transformers BERT model folder has it)")
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
        if config.get("model_type", "bert") != "bert" or config.get("hidden_act", "gelu") != "gelu":
            raise ModelFilesError(f"{folder}: a {config.get('model_type')} model; this encoder runs BERT with GELU")
        self.tokenizer = WordPieceTokenizer.from_file(folder / "vocab.txt")
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.max_length = int(max_length or _sentence_max_length(folder) or config["max_position_embeddings"])
        # Checkpoints name the encoder's tensors with or without a "bert." prefix.
        weights = {
            name.removeprefix("bert."): np.asarray(value, dtype=np.float32)
            for name, value in read_safetensors(folder / "model.safetensors").items()
        }
        for name in ("embeddings.word_embeddings.weight", f"encoder.layer.{self.layers - 1}.output.dense.weight"):
            if name not in weights:
                raise ModelFilesError(f"{folder}/model.safetensors: no tensor {name}")
        self.embeddings = {name: value for name, value in weights.items() if name.startswith("embeddings.")}
        self._layers = [_Layer.of(weights, f"encoder.layer.{layer}.") for layer in range(self.layers)]

    def encode(self, texts: list[str]) -> np.ndarray:
        """The unit-length embedding of each text, one row each."""
        rows = [self.tokenizer.encode(text, self.max_length) for text in texts]
        longest = max((len(row) for row in rows), default=0)
        ids = np.zeros((len(rows), longest), dtype=np.int64)
        mask = np.zeros((len(rows), longest), dtype=np.float32)
        for index, row in enumerate(rows):
            ids[index, : len(row)] = row
            mask[index, : len(row)] = 1.0
        hidden = self._forward(ids, mask)
        pooled = (hidden * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1.0)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return pooled / np.maximum(norms, 1e-12)

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self.embeddings
        batch, length = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length][None]
            + w["embeddings.token_type_embeddings.weight"][0][None, None]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        x = x.reshape(batch * length, -1)
        size = x.shape[-1]
        width = size // self.heads
        blocked = (1.0 - mask)[:, None, None, :] * np.float32(-1e9)  # padding gets no attention
        scale = np.float32(1.0 / np.sqrt(width))
        for layer in self._layers:
            qkv = (x @ layer.qkv + layer.qkv_bias).reshape(batch, length, 3, self.heads, width)
            q, k, v = (qkv[:, :, part].transpose(0, 2, 1, 3) for part in range(3))
            scores = (q * scale) @ k.transpose(0, 1, 3, 2) + blocked
            scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
            attended = (scores / scores.sum(axis=-1, keepdims=True)) @ v
            attended = attended.transpose(0, 2, 1, 3).reshape(batch * length, size)
            x = _layer_norm(x + attended @ layer.out + layer.out_bias, *layer.attention_norm, self.eps)
            inner = _gelu(x @ layer.up + layer.up_bias)
            x = _layer_norm(x + inner @ layer.down + layer.down_bias, *layer.output_norm, self.eps)
        return x.reshape(batch, length, size)


@dataclass(frozen=True)
class _Layer:
    """One transformer layer's weights, laid out as the products read them (inputs x outputs)."""

    qkv: np.ndarray
    qkv_bias: np.ndarray
    out: np.ndarray
    out_bias: np.ndarray
    attention_norm: tuple[np.ndarray, np.ndarray]
    up: np.ndarray
    up_bias: np.ndarray
    down: np.ndarray
    down_bias: np.ndarray
    output_norm: tuple[np.ndarray, np.ndarray]

    @classmethod
    def of(cls, weights: dict[str, np.ndarray], prefix: str) -> _Layer:
        def matrix(*names: str) -> np.ndarray:
            return np.ascontiguousarray(np.concatenate([weights[f"{prefix}{n}.weight"] for n in names]).T)

        def bias(*names: str) -> np.ndarray:
            return np.concatenate([weights[f"{prefix}{n}.bias"] for n in names])

        def norm(name: str) -> tuple[np.ndarray, np.ndarray]:
            return weights[f"{prefix}{name}.weight"], weights[f"{prefix}{name}.bias"]

        attention = ("attention.self.query", "attention.self.key", "attention.self.value")
        return cls(
            matrix(*attention), bias(*attention),
            matrix("attention.output.dense"), bias("attention.output.dense"), norm("attention.output.LayerNorm"),
            matrix("intermediate.dense"), bias("intermediate.dense"),
            matrix("output.dense"), bias("output.dense"), norm("output.LayerNorm"),
        )  # fmt: skip


def _sentence_max_length(folder: Path) -> int | None:
    """sentence-transformers' own limit on tokens (``sentence_bert_config.json``), when given."""
    path = folder / "sentence_bert_config.json"
    if not path.is_file():
        return None
    value = json.loads(path.read_text(encoding="utf-8")).get("max_seq_length")
    return int(value) if value else None
