"""SimHash fingerprints of page text, and an index that finds near-duplicate pages.

Exact duplicates share a content SHA-1; near-duplicates (the same article with
another date, navigation or session id) do not. A 64-bit SimHash of a page's word
pairs differs in a few bits between such pages, and :class:`NearDuplicateIndex`
finds an earlier fingerprint within :data:`SIMHASH_DISTANCE` bits in a few dict
look-ups, whatever the number of pages. Fingerprints are deterministic across
processes (CRC-32 and SplitMix64, no salted ``hash()``), so a resumed crawl keeps
recognising the pages of the run before.
"""

from __future__ import annotations

import string
import zlib

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
#: Words whose CRC-32 the index keeps between pages before it starts afresh.
_WORD_CODES_KEPT = 200_000
#: bytes.translate table: ASCII letters and digits stay, every other byte becomes a space.
_WORD_BYTES = bytes(byte if chr(byte) in string.ascii_lowercase + string.digits else 0x20 for byte in range(256))


def _mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finaliser: spreads every input bit over all 64 output bits."""
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def simhash_words(text: str) -> list[bytes]:
    """The words SimHash reads: runs of ASCII letters and digits of the lowercased text's
    first :data:`SIMHASH_MAX_CHARS` characters (any other character separates words).

    The same words as ``re.findall("[a-z0-9]+", text.lower())``, as bytes, in a
    few C passes instead of a regular expression (a third of its time).
    """
    ascii_text = text[:SIMHASH_MAX_CHARS].lower().encode("ascii", "replace")  # others become "?"
    return ascii_text.translate(_WORD_BYTES).split()


def simhash(text: str, codes: dict[bytes, int] | None = None) -> int:
    """64-bit SimHash of the set of word pairs of a text (deterministic across processes).

    Word pairs, not single words: pages of one site share most of their
    vocabulary (navigation, boilerplate) but not their sentences. ``codes``, a
    dict kept by the caller, caches each word's CRC-32 across pages (the caller
    bounds its size). Only the first :data:`SIMHASH_MAX_CHARS` characters count. On long
    texts only the pairs whose hash ends in two zero bits vote: the same pairs
    on every page (consistent sampling), so near-duplicates still agree.
    """
    words = simhash_words(text)
    if not words:
        return 0
    if codes is None:
        codes = {}
    missing = set(words).difference(codes)
    if missing:
        codes.update(zip(missing, map(zlib.crc32, missing)))
    values = np.fromiter(map(codes.__getitem__, words), dtype=np.uint64, count=len(words))
    pairs = (values[:-1] << np.uint64(32)) | values[1:] if len(values) > 1 else values
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
        # Each word's CRC-32, shared by all texts (a cache: not part of the state).
        self._word_codes: dict[bytes, int] = {}

    def add(self, text: str) -> bool:
        """Whether a text is a near-duplicate of one added before; remembers it either way."""
        if len(self._word_codes) > _WORD_CODES_KEPT:
            self._word_codes.clear()
        fingerprint = simhash(text, self._word_codes)
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
