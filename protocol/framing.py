"""Size-prefixed framing: split a byte stream into Kafka request frames (sans-io)."""

from __future__ import annotations

import struct

_SIZE = struct.Struct(">i")


class FrameError(Exception):
    """The stream cannot be framed: the connection must be closed."""


class FrameDecoder:
    """Accumulates bytes and yields complete frames (the bytes after each 4-byte size prefix).

    Each frame's bytes are copied once: frames whole inside one chunk are sliced out of it, and a
    frame spread over several chunks is joined from views of them when its last byte arrives (a
    produce request of a megabyte comes in a few socket reads).
    """

    __slots__ = ("_have", "_max_bytes", "_parts", "_size")

    def __init__(self, max_bytes: int) -> None:
        self._max_bytes = max_bytes
        self._parts: list[bytes | memoryview] = []  # the pending frame's body, or its partial size prefix
        self._have = 0  # bytes in _parts
        self._size = -1  # the pending frame's size once its prefix is complete

    def _check(self, size: int) -> int:
        if size < 0:
            raise FrameError(f"negative frame size {size}")
        if size > self._max_bytes:
            raise FrameError(f"frame of {size} bytes exceeds socket.request.max.bytes={self._max_bytes}")
        return size

    def feed(self, data: bytes) -> list[bytes]:
        frames: list[bytes] = []
        view = memoryview(data)
        end = len(data)
        pos = 0
        if self._parts or self._size >= 0:
            if self._size < 0:  # complete the size prefix first
                missing = 4 - self._have
                if end < missing:
                    self._parts.append(bytes(data))
                    self._have += end
                    return frames
                (size,) = _SIZE.unpack(b"".join(self._parts) + data[:missing])
                self._size = self._check(size)
                self._parts = []
                self._have = 0
                pos = missing
            missing = self._size - self._have
            if end - pos < missing:
                self._parts.append(view[pos:])
                self._have += end - pos
                return frames
            self._parts.append(view[pos : pos + missing])
            frames.append(b"".join(self._parts))
            self._parts = []
            self._have = 0
            self._size = -1
            pos += missing
        while end - pos >= 4:
            (size,) = _SIZE.unpack_from(data, pos)
            size = self._check(size)
            if end - pos - 4 < size:
                self._size = size
                self._parts = [view[pos + 4 :]]
                self._have = end - pos - 4
                return frames
            frames.append(data[pos + 4 : pos + 4 + size])
            pos += 4 + size
        if pos < end:
            self._parts = [data[pos:]]
            self._have = end - pos
        return frames

    @property
    def buffered(self) -> int:
        """Bytes received but not yet returned as a frame (a size prefix counts once complete)."""
        return self._have + (4 if self._size >= 0 else 0)


def frame(payload: bytes) -> bytes:
    """Prefix a payload with its size."""
    return _SIZE.pack(len(payload)) + payload
