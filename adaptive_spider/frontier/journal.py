"""FrontierJournal: a crawl's queue survives a killed process.

Scrapy's JOBDIR keeps a crawl's state between runs, but the scheduler writes
it only when the crawl closes cleanly; a crawl killed with SIGKILL (or by the
OOM killer, or a power cut of its container) would lose everything queued.
The journal makes the queue durable as the crawl goes:

- every request the scheduler accepts gets a sequence number
  (``request.meta["adaptive_seq"]``) and an ``add`` record with the request;
- every request it hands to the engine gets a ``take`` record;
- every taken request the engine has finished with gets a ``done`` record.
  *Finished* is the engine's own notion: the response (or failure) was
  handled by the spider and everything it yielded went through the scheduler,
  or the request was replaced by a redirect or a retry (enqueued first).

Records are appended to ``JOBDIR/adaptive_journal.<generation>`` and flushed
to the operating system at once, so a killed process loses nothing that was
recorded. Every few seconds (``ADAPTIVE_JOURNAL_SNAPSHOT_SECONDS``) the
scheduler writes a full snapshot (queue, model, domain profiles, page log) to
``JOBDIR/adaptive_frontier.pickle`` and starts a new generation, so the journal
stays short. A resumed crawl loads the snapshot and replays the journals of
its generation and later: requests added and not taken are queued again, and
so are requests taken and not done — the requests that were *in flight* when
the process died. Those, and only those, may be fetched a second time.

File format of a journal: records of a 4-byte big-endian payload length, the
payload's 4-byte CRC-32, and the payload (a pickled tuple). A record cut short
by the kill ends the replay.
"""

from __future__ import annotations

import logging
import os
import pickle
import struct
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
ADD, TAKE, DONE = "add", "take", "done"

_HEADER = struct.Struct(">II")


def read_records(path: Path) -> Iterator[tuple]:
    """The whole records of a journal file, in order (a torn tail is skipped)."""
    data = path.read_bytes()
    offset = 0
    while offset + _HEADER.size <= len(data):
        length, crc = _HEADER.unpack_from(data, offset)
        start = offset + _HEADER.size
        payload = data[start : start + length]
        if len(payload) < length or zlib.crc32(payload) != crc:
            logger.warning("Journal %s: record at byte %d is cut short; replay stops there", path, offset)
            return
        yield pickle.loads(payload)
        offset = start + length


def replay(queued: dict[int, object], in_flight: dict[int, object], events: Iterable[tuple]) -> tuple[dict, dict]:
    """Apply journal events to a snapshot's queued and in-flight requests.

    Both map sequence numbers to whatever describes a request; ``add`` events
    bring ``("journal", request_dict)``. Returns the requests still queued and
    those in flight (taken, not done), each by sequence number.
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


class FrontierJournal:
    """The snapshot and journal files of one JOBDIR.

    Parameters
    ----------
    jobdir : str
        Scrapy's JOBDIR.
    snapshot_seconds : float
        Seconds between snapshots (0: only when asked, e.g. at close).
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

    @property
    def snapshot_path(self) -> Path:
        return self.dir / SNAPSHOT_FILE

    def journal_path(self, generation: int) -> Path:
        return self.dir / f"{JOURNAL_PREFIX}{generation}"

    # -- reading ---------------------------------------------------------------------------
    def recover(self) -> tuple[dict | None, list[tuple]]:
        """The last snapshot (None if there is none) and the events recorded after it."""
        snapshot = None
        if self.snapshot_path.exists():
            with self.snapshot_path.open("rb") as handle:
                snapshot = pickle.load(handle)
            self.generation = snapshot.get("journal_generation", 0)
            self.next_seq = snapshot.get("next_seq", 0)
        events: list[tuple] = []
        for generation in self._generations():
            if generation >= self.generation:
                events.extend(read_records(self.journal_path(generation)))
        for event in events:
            if event[0] == ADD:
                self.next_seq = max(self.next_seq, event[1] + 1)
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
        payload = pickle.dumps(record, protocol=pickle.HIGHEST_PROTOCOL)
        if self._file is None:
            self.dir.mkdir(parents=True, exist_ok=True)
            self._file = self.journal_path(self.generation).open("ab")
        self._file.write(_HEADER.pack(len(payload), zlib.crc32(payload)) + payload)
        self._file.flush()
        self.records += 1

    def snapshot_due(self) -> bool:
        return bool(self.snapshot_seconds) and self.clock() - self._last_snapshot >= self.snapshot_seconds

    def write_snapshot(self, snapshot: dict) -> None:
        """Write ``snapshot`` atomically as the state after every record so far, and
        start a new journal generation (older journals are deleted)."""
        self.dir.mkdir(parents=True, exist_ok=True)
        snapshot = {**snapshot, "journal_generation": self.generation + 1, "next_seq": self.next_seq}
        partial = self.snapshot_path.with_suffix(".partial")
        with partial.open("wb") as handle:
            pickle.dump(snapshot, handle, protocol=pickle.HIGHEST_PROTOCOL)
            handle.flush()
            os.fsync(handle.fileno())
        partial.replace(self.snapshot_path)
        self._close_file()
        self.generation += 1
        self.records = 0
        for generation in self._generations():
            if generation < self.generation:
                self.journal_path(generation).unlink(missing_ok=True)
        self._last_snapshot = self.clock()

    def close(self) -> None:
        self._close_file()

    def _close_file(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def requests_in_progress(crawler: Any) -> set | None:
    """The requests the engine is working on (None when there is no engine).

    ``crawler`` is duck-typed (a crawler, one not started yet, or None), hence ``Any``.

    A request is in the engine's in-progress set from the moment the scheduler
    hands it over until its response or failure went through the spider and
    every request that produced reached the scheduler — exactly the moment
    the journal may call it done. Scrapy has no public API for that set (the
    engine waits on it before it closes a spider), so it is read here, in one
    place.
    """
    try:
        engine = crawler.engine
    except (AttributeError, RuntimeError):  # no crawler, or the crawl has not started
        return None
    in_progress = getattr(getattr(engine, "_slot", None), "inprogress", None)
    return in_progress if isinstance(in_progress, set) else None
