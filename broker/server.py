"""The asyncio TCP shell: one protocol object per connection, frames in, responses out, in order."""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, cast

import structlog

from kafkito.broker import logging_setup
from kafkito.broker.dispatch import CloseConnection, Reply, dispatch
from kafkito.broker.receive import FrameError, FrameReceiver
from kafkito.broker.spliced import Spliced
from kafkito.broker.zero_copy import SendFailed, SplicedSender
from kafkito.protocol.codec import client_id_of

if TYPE_CHECKING:
    from kafkito.broker.app import Broker
    from kafkito.broker.auth.gate import SaslGate
    from kafkito.broker.auth.listener_security import ListenerSecurity
    from kafkito.broker.context import RequestContext

log = structlog.get_logger("kafkito.server")

_Dispatch = Callable[["Broker", bytes, str, "type[RequestContext]"], "Reply | Awaitable[Reply]"]
# Stop reading from a client that has this many requests queued behind a slow one.
_MAX_QUEUED = 512
# Replies gathered into one transport write, up to about this many bytes.
_WRITE_BATCH_BYTES = 64 * 1024


class KafkaConnection(asyncio.BufferedProtocol):
    """Reads frames, answers them one at a time in arrival order (Kafka's one-in-flight rule).

    Frames are read through a FrameReceiver within the broker's memory pool; reading pauses while
    too many requests are queued or the pool has no room for the frame being received.
    """

    def __init__(
        self,
        broker: Broker,
        context_type: type[RequestContext] | None = None,
        node_id: int | None = None,
        security: ListenerSecurity | None = None,
    ) -> None:
        self._broker = broker
        self._context_type = context_type or broker.context_type  # the node's, in a multi-node cluster
        self._security = security  # the listener's TLS/SASL settings; None on PLAINTEXT
        self._gate: SaslGate | None = None  # on a SASL listener: consulted for every frame
        self._dispatch: _Dispatch = dispatch  # or `_through_gate`, on a SASL listener
        self.node_id = broker.config.node_id if node_id is None else node_id
        connections = broker.connections
        self._pool = connections.pool
        self._receiver = FrameReceiver(
            broker.config.socket_request_max_bytes, connections.pool, connections.scratch, self._on_memory
        )
        self._queue: deque[bytes] = deque()
        self._transport: asyncio.Transport | None = None
        self.peer_ip = "?"
        self._busy = False
        self._write_paused = False
        self._read_paused = False  # by us, for either reason below
        self._queue_full = False
        self._closed = False
        self._admitted = False
        self._task: asyncio.Future[Reply] | asyncio.Future[None] | None = None
        self._sender: SplicedSender | None = None  # made at the first Spliced reply (plaintext only)
        self._can_splice = True  # until the first Spliced reply finds sendfile cannot serve (TLS)
        self._log = log
        self._last_active = time.monotonic()
        self._frame_started = 0.0  # when the partial frame being received began
        self.client_id: str | None = None  # from the first request's header (`Steering.disconnect`)

    # asyncio.Protocol callbacks -------------------------------------------------
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._transport = cast(asyncio.Transport, transport)
        peer = transport.get_extra_info("peername")
        self.peer_ip = peer[0] if peer else "?"
        self._log = log.bind(peer=f"{peer[0]}:{peer[1]}" if peer else "?")
        if not self._broker.connections.admit(self):
            self._closed = True
            self._transport.abort()
            return
        self._admitted = True
        if logging_setup.debug_enabled:
            self._log.debug("client.connected")
        if self._security is not None:
            self._authenticate_transport(transport)

    def _authenticate_transport(self, transport: asyncio.BaseTransport) -> None:
        """TLS: the client certificate's principal; SASL: the gate its requests pass until authenticated."""
        security = self._security
        assert security is not None
        try:
            principal = security.certificate_principal(transport.get_extra_info("peercert"))
        except ValueError as exc:
            self.abort(str(exc))
            return
        if security.listener.protocol.sasl:
            from kafkito.broker.auth.gate import SaslGate

            self._gate = SaslGate(security, self._authenticated, self.peer_ip)
            self._dispatch = self._through_gate
            # Kafka's sasl.server.max.receive.size: no big frame from a client not yet known.
            self._receiver.limit(security.max_receive_size)
        elif principal is not None:
            self._authenticated(principal)

    @property
    def principal(self) -> str:
        """Who this connection authenticated as (`User:ANONYMOUS` when it did not)."""
        return self._context_type.principal

    def _authenticated(self, principal: str) -> None:
        self._receiver.limit(self._broker.config.socket_request_max_bytes)
        token = self._gate is not None and self._gate.token_authenticated
        self._context_type = self._context_type.for_principal(principal, token)
        self._log = self._log.bind(principal=principal)

    def connection_lost(self, exc: Exception | None) -> None:
        if logging_setup.debug_enabled and self._admitted:
            self._log.debug("client.disconnected", client_id=self.client_id, error=str(exc) if exc else None)
        self._closed = True
        self._release_queue()
        self._receiver.discard()
        if self._task is not None:
            self._task.cancel()  # a parked request (join, fetch) whose client is gone
        if self._sender is not None:
            self._sender.close()
            self._sender = None
        if self._admitted:
            self._admitted = False
            self._broker.connections.remove(self)

    def get_buffer(self, sizehint: int) -> memoryview:
        return self._receiver.buffer()

    def buffer_updated(self, nbytes: int) -> None:
        receiver = self._receiver
        was_partial = receiver.partial
        try:
            frames = receiver.received(nbytes)
        except FrameError as exc:
            self.abort(str(exc))
            return
        now = self._last_active = time.monotonic()
        if receiver.partial and (frames or not was_partial):
            self._frame_started = now
        if frames:
            if self.client_id is None:
                self.client_id = client_id_of(frames[0])
            self._queue.extend(frames)
            if len(self._queue) > _MAX_QUEUED:
                self._queue_full = True
        self._update_reading()
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

    def kill(self) -> None:
        """Drop the connection now, even when a graceful close is waiting for writes to drain."""
        self._closed = True
        if self._transport is not None:
            self._transport.abort()

    def idle_reason(self, now: float, max_idle: float) -> str | None:
        """Why connections.max.idle.ms expires this connection now, if it does."""
        if self._receiver.partial:
            return "partial request" if now - self._frame_started > max_idle else None
        if self._busy or self._queue or now - self._last_active <= max_idle:
            return None
        return "idle"

    def _on_memory(self) -> None:
        """The pool granted the frame being received: read its body."""
        self._update_reading()

    def _update_reading(self) -> None:
        transport = self._transport
        if transport is None or self._closed:
            return
        pause = self._queue_full or self._receiver.waiting
        if pause and not self._read_paused:
            self._read_paused = True
            transport.pause_reading()
        elif not pause and self._read_paused:
            self._read_paused = False
            transport.resume_reading()

    def _release_queue(self) -> None:
        if self._queue:
            self._pool.release(sum(len(frame) for frame in self._queue))
            self._queue.clear()

    def _process(self) -> None:
        # Replies to the frames of one read go out in one write: a syscall per reply cost more than
        # a small request's whole handling. The batch is flushed early once it is big (so the
        # transport's high-water mark still pauses us) and before a parked request or a close.
        queue = self._queue
        broker = self._broker
        peer = self.peer_ip
        context = self._context_type
        out: list[bytes] = []
        pending = 0
        taken = 0  # bytes of the frames taken off the queue, given back to the pool once per call
        try:
            while queue and not self._busy and not self._write_paused and not self._closed:
                frame = queue.popleft()
                taken += len(frame)
                try:
                    reply = self._dispatch(broker, frame, peer, context)
                except CloseConnection as exc:
                    self._close_after(out, exc)
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
                elif reply is not None:  # a Spliced reply, or one still to come: what is ready goes first
                    self._write(out)
                    out = []
                    pending = 0
                    self._send_or_park(reply)  # busy until it is out, unless it went at once
        finally:
            if taken:
                self._pool.release(taken)
        if out:
            self._write(out)
        if self._queue_full and len(queue) < _MAX_QUEUED // 2:
            self._queue_full = False
            self._update_reading()

    def _close_after(self, replies: list[bytes], exc: CloseConnection) -> None:
        """Send what was answered (and the reply that ends the connection, if any), then close."""
        last: bytes | None = getattr(exc, "reply", None)
        if last is None:
            self._write(replies)
            self.abort(str(exc))
            return
        self._write([*replies, last])
        self._log.info("connection.closed", reason=str(exc))
        # Kafka closes a failed login after connection.failed.authentication.delay.ms (KIP-306): the
        # client reads the answer first, and a password guesser is slowed down. Nothing more is read.
        self._busy = True
        self._release_queue()
        if self._transport is not None:
            self._transport.pause_reading()
        delay = self._broker.config.connection_failed_authentication_delay_ms
        asyncio.get_running_loop().call_later(delay / 1000, self.close)

    def _through_gate(
        self, broker: Broker, frame: bytes, peer: str, context: type[RequestContext]
    ) -> Reply | Awaitable[Reply]:
        """`dispatch` on a SASL listener: the SASL exchange first, then requests as the principal."""
        assert self._gate is not None
        reply = self._gate.frame(frame)
        if reply is None:
            return dispatch(broker, frame, peer, self._context_type)
        return reply

    def _write(self, replies: list[bytes]) -> None:
        if not replies or self._closed or self._transport is None:
            return
        self._transport.write(replies[0] if len(replies) == 1 else b"".join(replies))

    def _on_reply(self, task: asyncio.Future[Reply] | asyncio.Future[None]) -> None:
        self._busy = False
        self._task = None
        if self._closed:
            return
        if task.cancelled():
            self.abort("request cancelled")
            return
        exc = task.exception()
        if exc is not None:
            if isinstance(exc, CloseConnection | SendFailed):
                self.abort(str(exc))
            else:
                self._log.error("request.failed", exc_info=exc)
                self.abort("internal error while handling a request")
            return
        reply = task.result()
        self._last_active = time.monotonic()
        if isinstance(reply, Spliced):
            self._send_spliced(reply)
        elif reply is not None and self._transport is not None:
            self._transport.write(reply)
        self._process()

    def _send_or_park(self, reply: Spliced | Awaitable[Reply]) -> None:
        """Send a Spliced reply, or wait for one still to come (the connection is busy meanwhile)."""
        if isinstance(reply, Spliced):
            self._send_spliced(reply)
            return
        self._busy = True
        task = self._task = asyncio.ensure_future(reply)
        task.add_done_callback(self._on_reply)

    def _send_spliced(self, reply: Spliced) -> None:
        """Send a reply whose records are in segment files; the connection is busy until it is out
        when the socket does not take it at once."""
        if self._closed or self._transport is None:
            reply.close()
            return
        try:
            if self._can_splice and self._sender is None:
                self._sender = SplicedSender.for_transport(self._transport)
                self._can_splice = self._sender is not None
            if self._sender is None:  # TLS: the bytes must pass through the transport
                self._transport.write(reply.materialize())
                return
            waiting = self._sender.send(reply)
        except OSError as exc:
            reply.close()
            self.abort(f"sending a fetch response failed: {exc}")
            return
        if waiting is not None:
            self._busy = True
            self._task = waiting
            waiting.add_done_callback(self._on_reply)  # its result is None: nothing more to write
