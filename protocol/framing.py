"""Size-prefixed framing: split a byte stream into Kafka request frames (sans-io)."""

from __future__ import annotations

import struct

_SIZE = struct.Struct(">i")


class FrameError(Exception):
    """The stream cannot be framed: the connection must be closed."""


class FrameDecoder:
    """Accumulates bytes and yields complete frames (the bytes after each 4-byte size prefix)."""

    __slots__ = ("_buf", "_max_bytes")

    def __init__(self, max_bytes: int) -> None:
        self._buf = bytearray()
        self._max_bytes = max_bytes

    def feed(self, data: bytes) -> list[bytes]:
        buf = self._buf
        buf += data
        frames: list[bytes] = []
        pos = 0
        end = len(buf)
        while end - pos >= 4:
            (size,) = _SIZE.unpack_from(buf, pos)
            if size < 0:
                raise FrameError(f"negative frame size {size}")
            if size > self._max_bytes:
                raise FrameError(f"frame of {size} bytes exceeds socket.request.max.bytes={self._max_bytes}")
            if end - pos - 4 < size:
                break
            frames.append(bytes(buf[pos + 4 : pos + 4 + size]))
            pos += 4 + size
        if pos:
            del buf[:pos]
        return frames

    @property
    def buffered(self) -> int:
        return len(self._buf)


def frame(payload: bytes) -> bytes:
    """Prefix a payload with its size."""
    return _SIZE.pack(len(payload)) + payload
