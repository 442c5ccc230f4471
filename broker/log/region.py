"""FileRegion: a byte range of a segment file, held open until a response sends it with sendfile.

A region keeps its own duplicate of the segment's descriptor, so a segment deleted or closed
(retention, compaction, topic deletion) between the read and the send still sends the bytes that
were read: the file's data lives as long as a descriptor does, as Kafka's open segments do.
"""

from __future__ import annotations

import os


class FileRegion:
    """`size` bytes of a segment file from `position`; `len()` is its size, `read()` its bytes."""

    __slots__ = ("fd", "path", "position", "size")

    def __init__(self, fd: int, path: str, position: int, size: int) -> None:
        self.fd = fd  # ours: closed by `close()` or when the region is dropped
        self.path = path
        self.position = position
        self.size = size

    def __len__(self) -> int:
        return self.size

    def read(self) -> bytes:
        """The region's bytes, copied (a TLS listener, the steered path, a small response)."""
        data = os.pread(self.fd, self.size, self.position)
        if len(data) != self.size:  # the file was cut short under the region (never by appends)
            raise OSError(f"{self.path}: {len(data)} of {self.size} bytes left at {self.position}")
        return data

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def __del__(self) -> None:
        if getattr(self, "fd", -1) >= 0:
            os.close(self.fd)

    def __repr__(self) -> str:
        return f"FileRegion({self.path!r}, {self.position}, {self.size})"
