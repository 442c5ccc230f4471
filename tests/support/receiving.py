"""Feeding a byte stream to the broker's real FrameReceiver as a socket would, in chunks of any size."""

from __future__ import annotations

from kafkito.broker.memory_pool import MemoryPool
from kafkito.broker.receive import SCRATCH_BYTES, FrameReceiver


class Receiving:
    """A FrameReceiver on an unbounded pool and its own scratch buffer, fed like asyncio's
    BufferedProtocol: each chunk is written into `buffer()` (as many reads as it takes) and
    announced with `received(n)`. Frames returned stay charged to `pool` (nobody handles them)."""

    def __init__(self, max_bytes: int, scratch_bytes: int = SCRATCH_BYTES) -> None:
        self.pool = MemoryPool(-1)
        self.receiver = FrameReceiver(max_bytes, self.pool, memoryview(bytearray(scratch_bytes)), _never)

    def feed(self, data: bytes) -> list[bytes]:
        frames: list[bytes] = []
        pos = 0
        while pos < len(data):
            buffer = self.receiver.buffer()
            n = min(len(buffer), len(data) - pos)
            buffer[:n] = data[pos : pos + n]
            pos += n
            frames += self.receiver.received(n)
        return frames


def _never() -> None:
    raise AssertionError("an unbounded pool grants at once; nothing should wait for memory")
