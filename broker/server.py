"""The asyncio TCP shell: one protocol object per connection, frames in, responses out, in order."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable
from typing import TYPE_CHECKING, cast

import structlog

from kafkito.broker.dispatch import CloseConnection, Reply, dispatch
from kafkito.protocol.framing import FrameDecoder, FrameError

if TYPE_CHECKING:
    from kafkito.broker.app import Broker

log = structlog.get_logger("kafkito.server")

# Stop reading from a client that has this many requests queued behind a slow one.
_MAX_QUEUED = 512
# Replies gathered into one transport write, up to about this many bytes.
_WRITE_BATCH_BYTES = 64 * 1024


class KafkaConnection(asyncio.Protocol):
    """Reads frames, answers them one at a time in arrival order (Kafka's one-in-flight rule)."""

    def __init__(self, broker: Broker) -> None:
        self._broker = broker
        self._decoder = FrameDecoder(broker.config.socket_request_max_bytes)
        self._queue: deque[bytes] = deque()
        self._transport: asyncio.Transport | None = None
        self._peer = "?"
        self._busy = False
        self._write_paused = False
        self._read_paused = False
        self._closed = False
        self._task: asyncio.Future[Reply] | None = None
        self._log = log

    # asyncio.Protocol callbacks -------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)
        peer = transport.get_extra_info("peername")
        self._peer = peer[0] if peer else "?"
        self._log = log.bind(peer=f"{peer[0]}:{peer[1]}" if peer else "?")
        self._broker.connections.add(self)

    def connection_lost(self, exc: Exception | None) -> None:
        self._closed = True
        self._queue.clear()
        if self._task is not None:
            self._task.cancel()  # a parked request (join, fetch) whose client is gone
        self._broker.connections.discard(self)

    def data_received(self, data: bytes) -> None:
        try:
            frames = self._decoder.feed(data)
        except FrameError as exc:
            self.abort(str(exc))
            return
        self._queue.extend(frames)
        if len(self._queue) > _MAX_QUEUED and not self._read_paused and self._transport is not None:
            self._read_paused = True
            self._transport.pause_reading()
        self._process()

    def pause_writing(self) -> None:
        self._write_paused = True

    def resume_writing(self) -> None:
        self._write_paused = False
        self._process()

    # ---------------------------------------------------------------------------
    def abort(self, reason: str) -> None:
        """Close this connection only, saying why."""
        if self._closed:
            return
        self._closed = True
        self._log.warning("connection.closed", reason=reason)
        if self._transport is not None:
            self._transport.abort()

    def close(self) -> None:
        if self._transport is not None and not self._closed:
            self._closed = True
            self._transport.close()

    def _process(self) -> None:
        # Replies to the frames of one read go out in one write: a syscall per reply cost more than
        # a small request's whole handling. The batch is flushed early once it is big (so the
        # transport's high-water mark still pauses us) and before a parked request or a close.
        queue = self._queue
        transport = self._transport
        broker = self._broker
        peer = self._peer
        out: list[bytes] = []
        pending = 0
        while queue and not self._busy and not self._write_paused and not self._closed:
            frame = queue.popleft()
            try:
                reply = dispatch(broker, frame, peer)
            except CloseConnection as exc:
                self._write(out)
                self.abort(str(exc))
                return
            except Exception:
                self._write(out)
                self._log.exception("request.failed")
                self.abort("internal error while handling a request")
                return
            if isinstance(reply, bytes):
                out.append(reply)
                pending += len(reply)
                if pending >= _WRITE_BATCH_BYTES:
                    self._write(out)
                    out = []
                    pending = 0
            elif reply is not None:
                self._write(out)
                self._busy = True
                task = self._task = asyncio.ensure_future(cast(Awaitable[Reply], reply))
                task.add_done_callback(self._on_reply)
                return
        if out:
            self._write(out)
        if self._read_paused and len(queue) < _MAX_QUEUED // 2 and transport is not None and not self._closed:
            self._read_paused = False
            transport.resume_reading()

    def _write(self, replies: list[bytes]) -> None:
        if not replies or self._closed or self._transport is None:
            return
        self._transport.write(replies[0] if len(replies) == 1 else b"".join(replies))

    def _on_reply(self, task: asyncio.Future[Reply]) -> None:
        self._busy = False
        self._task = None
        if self._closed:
            return
        if task.cancelled():
            self.abort("request cancelled")
            return
        exc = task.exception()
        if exc is not None:
            if isinstance(exc, CloseConnection):
                self.abort(str(exc))
            else:
                self._log.error("request.failed", exc_info=exc)
                self.abort("internal error while handling a request")
            return
        reply = task.result()
        if reply is not None and self._transport is not None:
            self._transport.write(reply)
        self._process()
