"""FrontierJournal: a crawl's queue survives a killed process, and saving it never freezes the crawl.

Scrapy's JOBDIR keeps a crawl's state between runs, but the scheduler writes
it only when the crawl closes cleanly; a crawl killed with SIGKILL (or by the
OOM killer, or a power cut of its container) would lose everything queued.
The journal makes the queue durable as the crawl goes:

- every request the scheduler accepts gets a sequence number
  (``request.meta["adaptive_seq"]``) and an ``add`` record with the request
  (pickled once, when it is queued);
- every request it hands to the engine gets a ``take`` record;
- every taken request the engine has finished with gets a ``done`` record.
  *Finished* is the engine's own notion: the response (or failure) was
  handled by the spider and everything it yielded went through the scheduler,
  or the request was replaced by a redirect or a retry (enqueued first).

Records are appended to ``JOBDIR/adaptive_journal.<generation>`` and flushed
to the operating system at once, so a killed process loses nothing that was
recorded. The journal *is* the queue on disk: a snapshot never serialises the
queued requests again. Every few seconds (``ADAPTIVE_JOURNAL_SNAPSHOT_SECONDS``)
the scheduler *rolls* the journal: it writes the crawl's state without its queue
(model, domain profiles, page log: ``JOBDIR/adaptive_frontier.pickle``) and starts
a new generation, and a background thread *compacts* the generations before it
into ``JOBDIR/adaptive_journal.base``: the ``add`` records of requests not done
(copied as they are, not unpickled and pickled again) and the ``take`` records of
those in flight. The thread reads only closed files, and the reactor only appends
to the new generation, so the crawl goes on while the base is written; a kill in
the middle leaves the old base and every generation it did not cover.

A resumed crawl loads the state and replays the base and the generations after
it: requests added and not taken are queued again, and so are requests taken and
not done — the requests that were *in flight* when the process died. Those, and
only those, may be fetched a second time.

File format of a journal: records of a 4-byte big-endian payload length, the
payload's 4-byte CRC-32, and the payload (a pickled tuple). A record cut short
by the kill ends the replay.
"""

from __future__ import annotations

import logging
import os
import pickle
import struct
import threading
import time
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

logger = logging.getLogger(__name__)

#: request.meta key of a request's sequence number in the journal.
SEQ_KEY = "adaptive_seq"
SNAPSHOT_FILE = "adaptive_frontier.pickle"
JOURNAL_PREFIX = "adaptive_journal."
BASE_FILE = "adaptive_journal.base"
ADD, TAKE, DONE = "add", "take", "done"

_HEADER = struct.Struct(">II")


def read_raw_records(path: Path) -> Iterator[bytes]:
    """The payloads of the whole records of a journal file, in order (a torn tail is skipped).

    Read as a stream: a base of a million queued requests is not held in memory twice.
    """
    with path.open("rb") as handle:
        offset = 0
        while True:
            header = handle.read(_HEADER.size)
            if len(header) < _HEADER.size:
                if header:
                    logger.warning("Journal %s: record at byte %d is cut short; replay stops there", path, offset)
                return
            length, crc = _HEADER.unpack(header)
            payload = handle.read(length)
            if len(payload) < length or zlib.crc32(payload) != crc:
                logger.warning("Journal %s: record at byte %d is cut short; replay stops there", path, offset)
                return
            yield payload
            offset += _HEADER.size + length


def read_records(path: Path) -> Iterator[tuple]:
    """The whole records of a journal file, unpickled, in order (a torn tail is skipped)."""
    for payload in read_raw_records(path):
        yield pickle.loads(payload)


def encode_record(record: tuple) -> bytes:
    """One record as it is written: header (length, CRC-32) and the pickled tuple."""
    payload = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(payload), zlib.crc32(payload)) + payload


def request_data(data: bytes | dict) -> dict:
    """The request dict of an ``add`` record (pickled apart since the journal is the queue)."""
    return pickle.loads(data) if isinstance(data, bytes) else data


def replay(queued: dict[int, Any], in_flight: dict[int, Any], events: Iterable[tuple]) -> tuple[dict, dict]:
    """Apply journal events to a snapshot's queued and in-flight requests.

    Both map sequence numbers to whatever describes a request; ``add`` events
    bring ``("journal", request)`` (a pickled request dict, see :func:`request_data`).
    Returns the requests still queued and those in flight (taken, not done), each
    by sequence number.
    """
    queued, in_flight = dict(queued), dict(in_flight)
    for event in events:
        kind, seq = event[0], event[1]
        if kind == ADD:
            queued[seq] = ("journal", event[2])
        elif kind == TAKE:
            item = queued.pop(seq, None)
            if item is not None:
                in_flight[seq] = item
        elif kind == DONE:
            in_flight.pop(seq, None)
    return queued, in_flight


def compact(sources: Iterable[Path], covers: int, target: Path) -> tuple[int, int]:
    """Write ``target``: a base journal of the requests that ``sources`` leave not done.

    A base starts with a ``("base", covers)`` record (the last generation it covers),
    then the ``add`` record of every request not done, byte for byte as it was written,
    then a ``take`` record for each of those in flight. Returns (queued, in flight).
    """
    # Two passes: the first keeps sequence numbers only, the second copies the add records
    # still needed. Holding every pending request's bytes at once (tens of MB with a large
    # queue, every roll, in a thread of its own) would raise the process's resident memory
    # for good: the allocator keeps such peaks.
    sources = list(sources)
    done: set[int] = set()
    taken: set[int] = set()
    for source in sources:
        for payload in read_raw_records(source):
            kind, seq = pickle.loads(payload)[:2]  # an add's request stays pickled: this is cheap
            if kind == TAKE:
                taken.add(seq)
            elif kind == DONE:
                done.add(seq)
    partial = target.with_suffix(".partial")
    kept: list[int] = []
    written: set[int] = set()
    with partial.open("wb") as handle:
        handle.write(encode_record(("base", covers)))
        for source in sources:
            for payload in read_raw_records(source):
                kind, seq = pickle.loads(payload)[:2]
                if kind == ADD and seq not in done and seq not in written:  # in the order they were added
                    handle.write(_HEADER.pack(len(payload), zlib.crc32(payload)) + payload)
                    kept.append(seq)
                    written.add(seq)
        in_flight = [seq for seq in kept if seq in taken]
        for seq in in_flight:
            handle.write(encode_record((TAKE, seq)))
        handle.flush()
        os.fsync(handle.fileno())
    partial.replace(target)
    return len(kept) - len(in_flight), len(in_flight)


class FrontierJournal:
    """The state snapshot, the journal generations and the compacted base of one JOBDIR.

    Parameters
    ----------
    jobdir : str
        Scrapy's JOBDIR.
    snapshot_seconds : float
        Seconds between rolls (0: only when asked, e.g. at close).
    clock : callable
        Monotonic time source.
    """

    def __init__(self, jobdir: str, snapshot_seconds: float = 60.0, clock: Callable[[], float] = time.monotonic):
        self.dir = Path(jobdir)
        self.snapshot_seconds = snapshot_seconds
        self.clock = clock
        self.generation = 0
        self.next_seq = 0
        self.records = 0
        self._file: BinaryIO | None = None
        self._last_snapshot = clock()
        self._compaction: threading.Thread | None = None
        self.compactions = 0

    @property
    def snapshot_path(self) -> Path:
        return self.dir / SNAPSHOT_FILE

    @property
    def base_path(self) -> Path:
        return self.dir / BASE_FILE

    def journal_path(self, generation: int) -> Path:
        return self.dir / f"{JOURNAL_PREFIX}{generation}"

    # -- reading ---------------------------------------------------------------------------
    def recover(self) -> tuple[dict | None, list[tuple]]:
        """The last state snapshot (None if there is none) and the events to replay on it."""
        snapshot = None
        if self.snapshot_path.exists():
            with self.snapshot_path.open("rb") as handle:
                snapshot = pickle.load(handle)
            self.next_seq = snapshot.get("next_seq", 0)
        generations = self._generations()
        events: list[tuple] = []
        if snapshot is not None and snapshot.get("frontier", {}).get("entries"):
            # A snapshot that holds the queue itself (written before the journal was the queue,
            # or at a clean close without the journal): replay what came after it.
            first = snapshot.get("journal_generation", 0)
        else:
            covers = -1
            if self.base_path.exists():
                records = read_records(self.base_path)
                covers = next(records, ("base", -1))[1]
                events.extend(records)
            first = covers + 1
        for generation in generations:
            if generation >= first:
                events.extend(read_records(self.journal_path(generation)))
        for event in events:
            if event[0] == ADD:
                self.next_seq = max(self.next_seq, event[1] + 1)
        known = [*generations, snapshot.get("journal_generation", 0) if snapshot else 0]
        self.generation = max(known)  # appended to until the next roll (which resume does at once)
        return snapshot, events

    def _generations(self) -> list[int]:
        found = []
        for path in self.dir.glob(f"{JOURNAL_PREFIX}*"):
            suffix = path.name[len(JOURNAL_PREFIX) :]
            if suffix.isdigit():
                found.append(int(suffix))
        return sorted(found)

    # -- writing ----------------------------------------------------------------------------
    def assign(self, meta: dict) -> int:
        """Give a request (its meta) the next sequence number."""
        seq = self.next_seq
        self.next_seq += 1
        meta[SEQ_KEY] = seq
        return seq

    def append(self, record: tuple) -> None:
        """Append one record and hand it to the operating system (survives SIGKILL).

        A record that cannot be pickled raises before anything is written.
        """
        data = encode_record(record)
        if self._file is None:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._file = self.journal_path(self.generation).open("ab")
        self._file.write(data)
        self._file.flush()
        self.records += 1

    def snapshot_due(self) -> bool:
        return bool(self.snapshot_seconds) and self.clock() - self._last_snapshot >= self.snapshot_seconds

    def persisting(self) -> bool:
        """Whether a compaction is still being written in the background."""
        return self._compaction is not None and self._compaction.is_alive()

    def write_snapshot(self, snapshot: dict, *, wait: bool = False) -> None:
        """Roll the journal: write ``snapshot`` (the crawl's state without its queue)
        atomically, start a new generation, and compact the ones before it into the base
        in a background thread (``wait``: in this thread, e.g. at close)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        snapshot = {**snapshot, "journal_generation": self.generation + 1, "next_seq": self.next_seq}
        partial = self.snapshot_path.with_suffix(".partial")
        with partial.open("wb") as handle:
            pickle.dump(snapshot, handle, protocol=pickle.HIGHEST_PROTOCOL)
            handle.flush()
            os.fsync(handle.fileno())
        partial.replace(self.snapshot_path)
        self._close_file()
        covers = self.generation
        self.generation += 1
        self.records = 0
        self._last_snapshot = self.clock()
        if self.persisting():
            if not wait:
                return  # the next roll compacts these generations too
            self.wait()
        if wait:
            self._compact(covers)
        else:
            self._compaction = threading.Thread(
                target=self._compact, args=(covers,), name="journal-compaction", daemon=True
            )
            self._compaction.start()

    def _compact(self, covers: int) -> None:
        """Fold the base and every generation up to ``covers`` into a new base; delete them."""
        try:
            sources = [self.base_path] if self.base_path.exists() else []
            previous = next(read_records(self.base_path), ("base", -1))[1] if sources else -1
            generations = [g for g in self._generations() if previous < g <= covers]
            sources += [self.journal_path(g) for g in generations]
            compact(sources, covers, self.base_path)
            for generation in self._generations():
                if generation <= covers:
                    self.journal_path(generation).unlink(missing_ok=True)
            self.compactions += 1
        except Exception:  # the old base and generations stay: nothing is lost, the next roll retries
            logger.exception("Journal compaction in %s failed", self.dir)

    def wait(self) -> None:
        """Wait for a compaction in the background to finish."""
        if self._compaction is not None:
            self._compaction.join()
            self._compaction = None

    def close(self) -> None:
        self.wait()
        self._close_file()

    def _close_file(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
