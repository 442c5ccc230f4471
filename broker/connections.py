"""The broker's open connections and their limits: `max.connections`, `max.connections.per.ip`,
`connections.max.idle.ms` (idle connections and slow partial frames) and the request memory pool."""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, Protocol

import structlog

from kafkito.broker.heap import trim_after_burst
from kafkito.broker.memory_pool import MemoryPool
from kafkito.broker.receive import SCRATCH_BYTES

if TYPE_CHECKING:
    from kafkito.broker.config import Config

log = structlog.get_logger("kafkito.server")


class Connection(Protocol):
    peer_ip: str

    def idle_reason(self, now: float, max_idle: float) -> str | None: ...

    def abort(self, reason: str) -> None: ...

    def close(self) -> None: ...

    def kill(self) -> None: ...


class Connections:
    """Admits, counts and expires connections; owns the pool and the read buffer they share."""

    def __init__(self, config: Config) -> None:
        self._config = config  # max.connections and max.connections.per.ip are read at each admission:
        # they are dynamic broker configs (an admin may change them at run time, as in Kafka)
        self.max_idle_ms = config.connections_max_idle_ms
        self.pool = MemoryPool(config.queued_max_request_bytes)
        self.scratch = memoryview(bytearray(SCRATCH_BYTES))
        self._open: set[Connection] = set()
        self._per_ip: Counter[str] = Counter()
        self._drained: asyncio.Event | None = None  # set once the last connection is gone, while closing

    def __iter__(self) -> Iterator[Connection]:
        return iter(self._open)

    def __len__(self) -> int:
        return len(self._open)

    @property
    def max_connections(self) -> int:
        return self._config.max_connections

    @property
    def max_per_ip(self) -> int:
        return self._config.max_connections_per_ip

    def admit(self, conn: Connection) -> bool:
        """Count a new connection in, or say why it is refused (the caller closes it at once)."""
        ip = conn.peer_ip
        if len(self._open) >= self.max_connections:
            log.warning("connection.rejected", ip=ip, reason="max.connections", limit=self.max_connections)
            return False
        if self._per_ip[ip] >= self.max_per_ip:
            log.warning("connection.rejected", ip=ip, reason="max.connections.per.ip", limit=self.max_per_ip)
            return False
        self._open.add(conn)
        self._per_ip[ip] += 1
        return True

    def remove(self, conn: Connection) -> None:
        if conn in self._open:
            self._open.discard(conn)
            self._per_ip[conn.peer_ip] -= 1
            if self._per_ip[conn.peer_ip] <= 0:
                del self._per_ip[conn.peer_ip]
            if not self._open and self._drained is not None:
                self._drained.set()

    async def close_all(self, grace_s: float = 10.0) -> None:
        """Close every connection; each may take its last responses for up to `grace_s`, then is cut."""
        self._drained = asyncio.Event()
        for conn in list(self._open):
            conn.close()
        if not self._open:
            return
        log.info("connections.closing", open=len(self._open), grace_s=grace_s)
        try:
            await asyncio.wait_for(self._drained.wait(), grace_s)
        except TimeoutError:
            log.warning("connections.cut", open=len(self._open), reason="responses not taken in time")
            for conn in list(self._open):
                conn.kill()

    def housekeeping(self) -> None:
        """Run periodically: expire idle connections and give request memory freed since back to the OS."""
        if self.max_idle_ms >= 0:
            self.expire_idle()
        trim_after_burst(self.pool)

    def expire_idle(self) -> None:
        """Close connections idle, or stuck in a partial frame, for longer than connections.max.idle.ms."""
        now = time.monotonic()
        max_idle = self.max_idle_ms / 1000
        for conn in list(self._open):
            reason = conn.idle_reason(now, max_idle)
            if reason is not None:
                conn.abort(f"{reason} for more than connections.max.idle.ms={self.max_idle_ms}")

    @property
    def housekeeping_interval_ms(self) -> int:
        """A fraction of connections.max.idle.ms (a connection overstays by a little), 10 s at most."""
        if self.max_idle_ms < 0:
            return 10_000
        return max(10, min(self.max_idle_ms // 10, 10_000))
