"""Sentence embeddings in worker processes, so that the crawl never waits for them.

A Scrapy crawl runs in one Python thread. The sentence encoder of
:class:`~adaptive_spider.relevance.embedding.EmbeddingRelevance` costs about 50 ms of CPU a
page, more than Scrapy's own work for the page: in the crawl's thread it halves the pages/s.
A thread of its own would not help, since the encoder's many small NumPy steps each need
Python's lock back. :class:`EncoderProcesses` runs the encoder in processes of their own
(:mod:`~adaptive_spider.relevance.encoder_worker`), started with the reactor's
``spawnProcess`` and fed through pipes, so their answers come back as Deferreds on the
reactor's thread, with no thread in between.

A text the workers cannot take at once is not queued: :meth:`EncoderProcesses.encode` returns
None when every worker already has ``depth`` texts waiting, and the caller judges the page
without the model. The crawl then keeps its pace on any machine, and the model judges as many
pages as the machine's spare cores can encode.
"""

from __future__ import annotations

import logging
import os
import struct
import sys
from collections import deque
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from twisted.internet.defer import Deferred, DeferredList
from twisted.internet.protocol import ProcessProtocol

if TYPE_CHECKING:
    from twisted.python.failure import Failure

logger = logging.getLogger(__name__)

_HEADER = struct.Struct(">I")
# One BLAS thread a worker: each worker is to use one spare core, not compete for the crawl's.
_ONE_THREAD = {name: "1" for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")}


class WorkerGone(RuntimeError):
    """A worker process ended (or never started) while texts were waiting on it."""


class _Worker(ProcessProtocol):
    """One worker process: texts go to its stdin, embeddings come back on its stdout, in order."""

    def __init__(self) -> None:
        self.ready: Deferred[int] = Deferred()
        self.dimension = 0
        self.waiting: deque[Deferred[np.ndarray]] = deque()
        self.running = False
        self._buffer = bytearray()
        self._errors: deque[str] = deque(maxlen=20)

    def connectionMade(self) -> None:
        self.running = True

    @property
    def pipes(self) -> Any:
        # The process transport (Twisted types it by a zope interface, which mypy cannot read).
        assert self.transport is not None
        return self.transport

    def send(self, text: str) -> Deferred[np.ndarray]:
        data = text.encode("utf-8")
        answer: Deferred[np.ndarray] = Deferred()
        self.waiting.append(answer)
        self.pipes.write(_HEADER.pack(len(data)) + data)
        return answer

    def outReceived(self, data: bytes) -> None:
        self._buffer += data
        if not self.dimension:
            if len(self._buffer) < _HEADER.size:
                return
            (self.dimension,) = _HEADER.unpack(self._buffer[: _HEADER.size])
            del self._buffer[: _HEADER.size]
            self.ready.callback(self.dimension)
        size = 4 * self.dimension
        while len(self._buffer) >= size and self.waiting:
            vector = np.frombuffer(bytes(self._buffer[:size]), dtype="<f4").astype(np.float32)
            del self._buffer[:size]
            self.waiting.popleft().callback(vector)

    def errReceived(self, data: bytes) -> None:
        # Kept for the message if the worker dies (a traceback); otherwise nothing to say.
        self._errors.extend(data.decode("utf-8", errors="replace").splitlines())

    def processEnded(self, reason: Failure) -> None:
        self.running = False
        detail = " / ".join(self._errors) or reason.getErrorMessage()
        error = WorkerGone(f"the encoder worker ended: {detail}")
        if not self.ready.called:
            self.ready.errback(error)
        while self.waiting:
            self.waiting.popleft().errback(WorkerGone(str(error)))

    def stop(self) -> None:
        if self.running and self.transport is not None:
            self.pipes.closeStdin()


class EncoderProcesses:
    """``processes`` encoder workers for one model; :meth:`encode` never makes the caller wait.

    Parameters
    ----------
    folder : str or Path
        The model folder (:class:`~adaptive_spider.relevance.sentence_encoder.SentenceEncoder`'s).
    max_tokens : int
        Tokens of each text the model reads.
    processes : int
        Worker processes; each takes a core while it encodes.
    depth : int
        Texts that may wait on one worker; a text beyond that is not sent.
    runtime : str
        What runs the model in the workers: ``numpy`` or ``onnx`` (:mod:`~adaptive_spider.relevance.onnx_encoder`).
    """

    def __init__(
        self, folder: str | Path, max_tokens: int, processes: int, depth: int = 2, runtime: str = "numpy"
    ) -> None:
        if processes < 1:
            raise ValueError(f"processes must be at least 1, not {processes}")
        self.folder = str(folder)
        self.max_tokens = int(max_tokens)
        self.processes = processes
        self.depth = depth
        self.runtime = runtime
        self.workers: list[_Worker] = []
        #: Texts sent, and texts not sent because every worker was busy (or none was running).
        self.sent = 0
        self.declined = 0

    def start(self, reactor: Any = None) -> Deferred[Any]:
        """Start the workers; the Deferred fires once each has loaded the model (or failed to)."""
        if reactor is None:
            from twisted.internet import reactor
        env = {**os.environ, **_ONE_THREAD}
        # The crawl's own import path: the worker imports this package from where the crawl did
        # (a checkout, site-packages, or the egg Scrapyd put on sys.path).
        env["PYTHONPATH"] = os.pathsep.join(entry for entry in sys.path if entry)
        command = [sys.executable, "-m", "adaptive_spider.relevance.encoder_worker", self.folder,
                   str(self.max_tokens), self.runtime]  # fmt: skip
        for _ in range(self.processes):
            worker = _Worker()
            reactor.spawnProcess(worker, sys.executable, command, env=env)
            worker.ready.addErrback(self._failed_to_start)
            self.workers.append(worker)
        return DeferredList([worker.ready for worker in self.workers])

    @staticmethod
    def _failed_to_start(failure: Failure) -> None:
        logger.error("An encoder worker did not start; its pages are judged without the model: %s",
                     failure.getErrorMessage())  # fmt: skip

    def encode(self, text: str) -> Deferred[np.ndarray] | None:
        """The text's unit embedding, later; None when no worker can take it now."""
        ready = [worker for worker in self.workers if worker.running and worker.dimension]
        if ready:
            worker = min(ready, key=lambda candidate: len(candidate.waiting))
            if len(worker.waiting) < self.depth:
                self.sent += 1
                return worker.send(text)
        self.declined += 1
        return None

    def close(self) -> None:
        """Let the workers finish what they have and exit (they stop when their stdin closes)."""
        for worker in self.workers:
            worker.stop()
