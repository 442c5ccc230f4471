"""Sending a Spliced reply on a plaintext connection: its bytes with `send`, its regions with sendfile.

The bytes of a segment file go from the page cache to the socket without passing through Python, as
Kafka's FileRecords.writeTo does. The transport is bypassed while a reply is sent, so the sender
starts only once the transport has nothing buffered, and the connection writes nothing else until
the reply is out (one request at a time, in order). It works on a duplicate of the socket's
descriptor: the event loop watches that one for writability, since the transport owns the original.
"""

from __future__ import annotations

import asyncio
import os
import socket

from kafkito.broker.spliced import Spliced

_MORE = getattr(socket, "MSG_MORE", 0)  # Linux: hold a small head until the region's bytes follow


class ShortRegion(OSError):
    """A segment file ended inside a region being sent: the frame cannot be completed."""


class SendFailed(Exception):
    """Sending a reply failed midway (the peer went away, a file ended): the connection must close."""


class SplicedSender:
    """Sends one connection's Spliced replies, one at a time."""

    __slots__ = ("_done", "_index", "_loop", "_reply", "_sent", "_sock", "_transport", "_watching")

    def __init__(self, loop: asyncio.AbstractEventLoop, transport: asyncio.Transport, fd: int) -> None:
        self._loop = loop
        self._transport = transport
        self._sock = socket.socket(fileno=os.dup(fd))
        self._reply: Spliced | None = None
        self._index = 0  # the piece being sent
        self._sent = 0  # bytes of it already sent
        self._done: asyncio.Future[None] | None = None
        self._watching = False

    @classmethod
    def for_transport(cls, transport: asyncio.Transport) -> SplicedSender | None:
        """A sender for this transport, or None where sendfile cannot serve it (TLS, no socket)."""
        if transport.get_extra_info("sslcontext") is not None:
            return None
        sock = transport.get_extra_info("socket")
        if sock is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
            return None
        return cls(asyncio.get_running_loop(), transport, sock.fileno())

    def send(self, reply: Spliced) -> asyncio.Future[None] | None:
        """Send `reply`: None when it went out whole at once, else a future done once it has.

        Raises OSError when the socket or a segment file fails (the connection must be closed).
        """
        self._reply = reply
        self._index = self._sent = 0
        if self._transport.get_write_buffer_size() == 0 and self._push():
            return None
        done = self._done = self._loop.create_future()
        done.add_done_callback(self._on_done)
        self._watch()
        return done

    def close(self) -> None:
        """Stop, and give back the descriptors (the connection is gone)."""
        self._unwatch()
        if self._done is not None and not self._done.done():
            self._done.cancel()
        if self._reply is not None:
            self._reply.close()
            self._reply = None
        self._sock.close()

    def _push(self) -> bool:
        """Send what the socket takes now; True once the whole reply is sent."""
        reply = self._reply
        assert reply is not None
        pieces = reply.pieces
        last = len(pieces) - 1
        while self._index <= last:
            piece = pieces[self._index]
            try:
                if isinstance(piece, bytes):
                    size = len(piece)
                    n = self._sock.send(memoryview(piece)[self._sent :], _MORE if self._index < last else 0)
                else:
                    size = piece.size
                    n = os.sendfile(
                        self._sock.fileno(), piece.fd, piece.position + self._sent, size - self._sent
                    )
                    if n == 0:
                        raise ShortRegion(
                            f"{piece.path} ended {size - self._sent} bytes short of a fetch response"
                        )
            except (BlockingIOError, InterruptedError):
                return False
            self._sent += n
            if self._sent == size:
                if not isinstance(piece, bytes):
                    piece.close()
                self._index += 1
                self._sent = 0
        self._reply = None
        return True

    def _on_writable(self) -> None:
        done = self._done
        if done is None or done.done():
            self._unwatch()
            return
        if self._transport.get_write_buffer_size():
            return  # what the transport holds goes first
        try:
            finished = self._push()
        except OSError as exc:
            done.set_exception(SendFailed(f"sending a fetch response failed: {exc}"))
            return
        if finished:
            done.set_result(None)

    def _on_done(self, done: asyncio.Future[None]) -> None:
        self._unwatch()
        self._done = None
        if self._reply is not None and (done.cancelled() or done.exception() is not None):
            self._reply.close()
            self._reply = None

    def _watch(self) -> None:
        if not self._watching:
            self._loop.add_writer(self._sock.fileno(), self._on_writable)
            self._watching = True

    def _unwatch(self) -> None:
        if self._watching:
            self._watching = False
            if self._sock.fileno() >= 0:
                self._loop.remove_writer(self._sock.fileno())
