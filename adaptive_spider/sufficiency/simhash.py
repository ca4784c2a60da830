"""SimHash fingerprints of page text, and an index that finds near-duplicate pages.

Exact duplicates share a content SHA-1; near-duplicates (the same article with
another date, navigation or session id) do not. A 64-bit SimHash of a page's word
pairs differs in a few bits between such pages, and :class:`NearDuplicateIndex`
finds an earlier fingerprint within :data:`SIMHASH_DISTANCE` bits in a few dict
look-ups, whatever the number of pages. Fingerprints are deterministic across
processes (a polynomial hash of each word and SplitMix64, no salted ``hash()``), so a
resumed crawl keeps recognising the pages of the run before.
"""

from __future__ import annotations

import string

import numpy as np

SIMHASH_BITS = 64
#: Texts with more distinct word pairs than this hash a consistent quarter of them.
SIMHASH_FULL_PAIRS = 1024
#: SimHash reads this much of a page's text: pages alike that far are near-duplicates
#: for the estimator, and a long page costs no more than a medium one.
SIMHASH_MAX_CHARS = 16000
#: Two pages whose SimHashes differ in at most this many bits are near-duplicates.
SIMHASH_DISTANCE = 3
BANDS = 4  # 4 bands of 16 bits: any pair within 3 bits shares a band exactly
_BAND_BITS = SIMHASH_BITS // BANDS
#: bytes.translate table: ASCII letters and digits stay, every other byte becomes a space.
_WORD_BYTES = bytes(byte if chr(byte) in string.ascii_lowercase + string.digits else 0x20 for byte in range(256))
_SPACE = 0x20
#: A word's hash is the sum of its bytes times powers of this odd number, modulo 2**64
#: (numpy's uint64 wraps): the words of a page hash in a few array passes, without a
#: Python object per word. Odd, so it has an inverse modulo 2**64.
_BASE = 0x100000001B3


def _powers(base: int, n: int) -> np.ndarray:
    """``base**i`` modulo 2**64 for ``i < n`` (uint64 products wrap)."""
    powers = np.full(n, base, dtype=np.uint64)
    powers[0] = 1
    return np.cumprod(powers, dtype=np.uint64)


# Lowercasing may lengthen a text ("İ" becomes two characters): room for twice the characters read.
_POWERS = _powers(_BASE, 2 * SIMHASH_MAX_CHARS + 1)
_INVERSE_POWERS = _powers(pow(_BASE, -1, 1 << 64), 2 * SIMHASH_MAX_CHARS + 1)
#: Multiplies a pair's first word, so that the pair (a, b) hashes unlike (b, a).
_PAIR_FACTOR = np.uint64(0x9E3779B97F4A7C15)


def _mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser: spreads every input bit over all 64 output bits."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def word_hashes(text: str) -> np.ndarray:
    """A 64-bit hash of each word SimHash reads, in order (uint64), from array passes.

    The words are the runs of ASCII letters and digits of the lowercased text's first
    :data:`SIMHASH_MAX_CHARS` characters, the words of ``re.findall("[a-z0-9]+", text.lower())``
    (any other character separates words).

    With ``c`` the text's bytes, ``w`` the base and ``P[k]`` the sum of ``c[i] * w**i`` for
    ``i < k``, a word at ``[start, end)`` hashes to ``(P[end] - P[start]) * w**-start``: the same
    number wherever the word stands.
    """
    data = text[:SIMHASH_MAX_CHARS].lower().encode("ascii", "replace").translate(_WORD_BYTES)
    chars = np.frombuffer(data, dtype=np.uint8)[: len(_POWERS) - 1]
    in_word = np.zeros(len(chars) + 2, dtype=np.int8)
    in_word[1:-1] = chars != _SPACE
    edges = np.diff(in_word)
    starts = np.flatnonzero(edges == 1)
    ends = np.flatnonzero(edges == -1)
    prefix = np.zeros(len(chars) + 1, dtype=np.uint64)
    np.cumsum(chars * _POWERS[: len(chars)], out=prefix[1:])
    return (prefix[ends] - prefix[starts]) * _INVERSE_POWERS[starts]


def simhash(text: str) -> int:
    """64-bit SimHash of the set of word pairs of a text (deterministic across processes).

    Word pairs, not single words: pages of one site share most of their
    vocabulary (navigation, boilerplate) but not their sentences. Only the first
    :data:`SIMHASH_MAX_CHARS` characters count. On long texts only the pairs whose
    hash ends in two zero bits vote: the same pairs on every page (consistent
    sampling), so near-duplicates still agree.
    """
    values = word_hashes(text)
    if not len(values):
        return 0
    values = _mix64(values)
    pairs = (values[:-1] * _PAIR_FACTOR) ^ values[1:] if len(values) > 1 else values
    hashes = _mix64(pairs)
    if len(hashes) > SIMHASH_FULL_PAIRS:
        hashes = hashes[(hashes & np.uint64(3)) == 0]
    hashes.sort()
    if len(hashes) > 1:  # each distinct pair votes once
        hashes = hashes[np.concatenate(([True], hashes[1:] != hashes[:-1]))]
    # One row of 64 bits per hash, bit i in column i (the bytes of a little-endian uint64).
    bits = np.unpackbits(hashes.astype("<u8").view(np.uint8).reshape(-1, 8), axis=1, bitorder="little")
    majority = np.count_nonzero(bits, axis=0) * 2 > len(hashes)
    return int.from_bytes(np.packbits(majority, bitorder="little").tobytes(), "little")


def hamming(a: int, b: int) -> int:
    return (a ^ b).bit_count()


class NearDuplicateIndex:
    """The SimHashes of the texts seen so far, banded for look-up.

    A fingerprint is cut into :data:`BANDS` bands; two fingerprints within
    :data:`SIMHASH_DISTANCE` bits agree exactly on at least one band, so only the
    fingerprints filed under one of a text's band values are compared.
    """

    def __init__(self) -> None:
        self.bands: list[dict[int, list[int]]] = [{} for _ in range(BANDS)]

    def add(self, text: str) -> bool:
        """Whether a text is a near-duplicate of one added before; remembers it either way."""
        fingerprint = simhash(text)
        candidates: set[int] = set()
        for band, table in enumerate(self.bands):
            key = (fingerprint >> (band * _BAND_BITS)) & ((1 << _BAND_BITS) - 1)
            candidates.update(table.get(key, ()))
            table.setdefault(key, []).append(fingerprint)
        return any(hamming(fingerprint, other) <= SIMHASH_DISTANCE for other in candidates)

    def state_dict(self) -> list[dict[int, list[int]]]:
        return [{k: list(v) for k, v in table.items()} for table in self.bands]

    def load_state_dict(self, state: list[dict]) -> None:
        self.bands = [{int(k): list(v) for k, v in table.items()} for table in state]
