"""Receiving request frames for one connection, within the memory pool (asyncio BufferedProtocol side).

Reads land in a scratch buffer shared by the broker's connections (reads are synchronous on the loop,
so one buffer serves all) and whole frames are copied out of it. Only a frame that spans reads gets
memory of its own: once its size prefix is read the pool must grant the whole size, then the body is
read straight into chunks that grow with what has arrived (twice at most), never the announced size up
front. A connection keeps no buffer between frames, so an idle connection costs a few hundred bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Callable

from kafkito.broker.memory_pool import MemoryPool

_SIZE = struct.Struct(">i")
SCRATCH_BYTES = 256 * 1024  # what asyncio and uvloop read at once by default
_MIN_CHUNK = 64 * 1024
_COPY_WHOLE_BYTES = 16 * 1024


class FrameError(Exception):
    """The stream cannot be framed (a negative or oversized size prefix): the connection must be closed."""


class FrameReceiver:
    """`buffer()` says where the next read goes; `received(n)` returns the frames it completed.

    Every frame returned is charged to the pool; the caller releases its length once it is handled.
    While `waiting` is true the pool has not granted the pending frame and reading must stay paused;
    `on_granted` is called when it is granted.
    """

    __slots__ = ("_chunks", "_granted", "_have", "_head", "_max_bytes", "_on_granted", "_pool", "_room",
                 "_scratch", "_size", "charged")  # fmt: skip

    def __init__(
        self, max_bytes: int, pool: MemoryPool, scratch: memoryview, on_granted: Callable[[], None]
    ) -> None:
        self._max_bytes = max_bytes
        self._pool = pool
        self._scratch = scratch
        self._on_granted = on_granted
        self._head = b""  # up to 3 bytes of a size prefix
        self._size = -1  # the pending frame's size once its prefix is read
        self._chunks: list[bytes | bytearray] = []  # the pending frame's body so far
        self._have = 0  # body bytes in _chunks
        self._room = 0  # free bytes at the end of the last chunk
        self._granted = False
        self.charged = 0  # bytes charged to the pool for the pending frame

    def limit(self, max_bytes: int) -> None:
        """Change the largest frame accepted (a SASL connection's before it authenticates)."""
        self._max_bytes = max_bytes

    @property
    def partial(self) -> bool:
        """A frame has begun and is not complete."""
        return self._size >= 0 or bool(self._head)

    @property
    def waiting(self) -> bool:
        return self._size >= 0 and not self._granted

    def buffer(self) -> memoryview:
        if self._size >= 0:
            if self._room == 0:
                size = min(self._size - self._have, max(_MIN_CHUNK, self._have))
                self._chunks.append(bytearray(size))
                self._room = size
            last = self._chunks[-1]
            return memoryview(last)[len(last) - self._room :]
        # Never read more than the pool has left (but enough for a size prefix): what is read is kept.
        return self._scratch[: min(len(self._scratch), max(self._pool.available, 4))]

    def received(self, nbytes: int) -> list[bytes]:
        if self._size >= 0:
            self._room -= nbytes
            self._have += nbytes
            if self._have < self._size:
                return []
            frame = b"".join(self._chunks)
            self._reset()
            self.charged = 0  # the frame's charge now goes with the frame
            return [frame]
        view = self._scratch[:nbytes]
        if self._head:
            view = memoryview(self._head + view)
            self._head = b""
        return self._split(view)

    def _split(self, view: memoryview) -> list[bytes]:
        # A small read is copied once and sliced (one allocation per frame); a big one is sliced as a
        # view, so its frames are copied once, not twice.
        data: bytes | memoryview = bytes(view) if len(view) <= _COPY_WHOLE_BYTES else view
        frames: list[bytes] = []
        end = len(data)
        pos = 0
        charged = 0
        while end - pos >= 4:
            (size,) = _SIZE.unpack_from(data, pos)
            self._check(size)
            if end - pos - 4 < size:
                self._begin(size, bytes(data[pos + 4 :]))
                break
            frames.append(bytes(data[pos + 4 : pos + 4 + size]))  # bytes() of a bytes slice is that slice
            charged += size
            pos += 4 + size
        else:
            self._head = bytes(data[pos:])
        self._pool.charge(charged)
        return frames

    def _check(self, size: int) -> None:
        if size < 0:
            raise FrameError(f"negative frame size {size}")
        if size > self._max_bytes:
            raise FrameError(f"frame of {size} bytes exceeds socket.request.max.bytes={self._max_bytes}")

    def _begin(self, size: int, body: bytes) -> None:
        """A frame spans reads: charge what came, and ask the pool for the rest before reading on."""
        self._size = size
        self._have = len(body)
        self._chunks = [body] if body else []
        self._room = 0
        self._pool.charge(len(body))
        self.charged = len(body)
        self._granted = False
        if self._pool.reserve(self, size - len(body), len(body), self._grant):
            self._granted = True
            self.charged = size

    def _grant(self) -> None:
        self._granted = True
        self.charged = self._size
        self._on_granted()

    def _reset(self) -> None:
        self._size = -1
        self._chunks = []
        self._have = 0
        self._room = 0
        self._granted = False

    def discard(self) -> None:
        """The connection is gone: give back what the pending frame held and drop its bytes."""
        self._pool.cancel(self)
        self._reset()
        self._head = b""
        charged, self.charged = self.charged, 0
        self._pool.release(charged)
