"""Spliced: a response made of byte strings and segment-file regions, sent without copying the regions.

A Fetch response is nearly all record bytes. Rather than read them into Python and join them into
one frame (three copies of every byte), the Fetch encoder leaves each partition's records in their
segment file as a FileRegion and the connection sends the regions with `os.sendfile`
(`broker/zero_copy.py`), as Kafka does. Where sendfile cannot work (a TLS listener) or the reply
must be seen as bytes (the steered path), `materialize()` gives the same bytes, read and joined.
"""

from __future__ import annotations

import struct

from kafkito.broker.log.region import FileRegion

_HEADER_V0 = struct.Struct(">ii")  # size, correlation id
_HEADER_V1 = struct.Struct(">iib")  # + empty tagged fields

Piece = bytes | FileRegion


class Spliced:
    """An encoded body (or, once `framed`, a whole response frame) as pieces in order; `size` in bytes."""

    __slots__ = ("pieces", "size")

    def __init__(self, pieces: list[Piece], size: int) -> None:
        self.pieces = pieces
        self.size = size

    def __len__(self) -> int:
        return self.size

    def framed(self, correlation_id: int, header_v1: bool) -> Spliced:
        """This body as a response frame: the size prefix and the response header go first."""
        if header_v1:
            head = _HEADER_V1.pack(self.size + 5, correlation_id, 0)
        else:
            head = _HEADER_V0.pack(self.size + 4, correlation_id)
        pieces = self.pieces
        first = pieces[0] if pieces else b""
        if isinstance(first, bytes):  # the small head of the body: copied once, not sent alone
            pieces[0] = head + first
        else:
            pieces.insert(0, head)
        self.size += len(head)
        return self

    def materialize(self) -> bytes:
        """The same bytes, the regions read from their files (and closed)."""
        out = b"".join(p if isinstance(p, bytes) else p.read() for p in self.pieces)
        self.close()
        return out

    def close(self) -> None:
        """Give back the regions' descriptors (a reply that will not be sent)."""
        for piece in self.pieces:
            if not isinstance(piece, bytes):
                piece.close()
