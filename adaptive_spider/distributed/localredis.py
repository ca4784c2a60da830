"""A throwaway ``redis-server`` on 127.0.0.1, for trying a distributed crawl on
one machine, for the tests and for the benchmark.

    with LocalRedis() as redis_server:
        print(redis_server.url)   # redis://127.0.0.1:<free port>/0

The server keeps its data in memory only (no RDB or AOF files), in a temporary
directory removed on exit. It needs Debian's ``redis-server`` package.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import time


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


class LocalRedis:
    """Start ``redis-server`` on ``host`` and a free port; stop it on exit."""

    def __init__(self, executable: str = "redis-server", host: str = "127.0.0.1", startup_timeout: float = 10.0):
        found = shutil.which(executable)
        if found is None:
            raise RuntimeError(f"{executable} not found; install it with: apt-get install -y redis-server")
        self.executable = found
        self.host = host
        self.startup_timeout = startup_timeout
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.directory: str | None = None

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}/0"

    def __enter__(self) -> LocalRedis:
        self.directory = tempfile.mkdtemp(prefix="adaptive-redis-")
        self.port = free_port(self.host)
        command = [
            self.executable,
            "--bind", self.host,
            "--port", str(self.port),
            "--dir", self.directory,
            "--save", "",
            "--appendonly", "no",
            "--protected-mode", "yes",
        ]  # fmt: skip
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self._wait_until_ready()
        return self

    def _wait_until_ready(self) -> None:
        assert self.process is not None and self.process.stderr is not None  # started with stderr=PIPE
        deadline = time.monotonic() + self.startup_timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                error = self.process.stderr.read().decode(errors="replace").strip()
                raise RuntimeError(f"redis-server exited at start: {error or self.process.returncode}")
            try:
                with socket.create_connection((self.host, self.port), timeout=0.5) as connection:
                    connection.sendall(b"PING\r\n")
                    if connection.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        self.__exit__(None, None, None)
        raise RuntimeError(f"redis-server did not answer on {self.host}:{self.port} within {self.startup_timeout} s")

    def __exit__(self, *exc_info: object) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process is not None and self.process.stderr is not None:
            self.process.stderr.close()
        if self.directory is not None:
            shutil.rmtree(self.directory, ignore_errors=True)
