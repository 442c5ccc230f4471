"""The broker's frame receiver under any TCP segmentation: big produce requests arrive over many reads."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkito.broker.receive import FrameError
from tests.support.receiving import Receiving

MAX = 1 << 20


def framed(payloads: list[bytes]) -> bytes:
    return b"".join(struct.pack(">i", len(p)) + p for p in payloads)


@settings(max_examples=300, deadline=None)
@given(
    payloads=st.lists(
        st.one_of(st.binary(max_size=40), st.integers(0, 300_000).map(lambda n: bytes([n % 251]) * n)),
        max_size=8,
    ),
    cuts=st.lists(st.integers(1, 400_000), max_size=30),
)
def test_frames_come_out_whole_and_in_order_whatever_the_segmentation(
    payloads: list[bytes], cuts: list[int]
) -> None:
    stream = framed(payloads)
    feeding = Receiving(MAX)
    frames: list[bytes] = []
    pos = 0
    for cut in cuts:
        chunk = stream[pos : pos + cut]
        pos += len(chunk)
        frames += feeding.feed(chunk)
        pending = pos - sum(4 + len(f) for f in frames)
        assert feeding.receiver.partial == (pending > 0)
        # Frames out are charged to the pool, and so is the whole of a frame whose size is known.
        announced = struct.unpack_from(">i", stream, pos - pending)[0] if pending >= 4 else 0
        assert feeding.pool.used == sum(len(f) for f in frames) + announced
    frames += feeding.feed(stream[pos:])
    assert frames == payloads
    assert all(type(f) is bytes for f in frames)
    assert not feeding.receiver.partial
    assert feeding.pool.used == sum(len(f) for f in frames)


def test_byte_by_byte_feeding_of_a_megabyte_frame() -> None:
    payload = bytes(range(256)) * 4096
    stream = framed([payload, b"", b"x"])
    feeding = Receiving(MAX)
    frames: list[bytes] = []
    for i in range(10):  # the size prefix (and a little more) one byte at a time
        frames += feeding.feed(stream[i : i + 1])
    frames += feeding.feed(stream[10 : 10 + 70_000])
    frames += feeding.feed(stream[10 + 70_000 :])
    assert frames == [payload, b"", b"x"]


def test_reads_smaller_than_the_stream_chunks_lose_nothing() -> None:
    payloads = [bytes([i]) * (i * 37) for i in range(40)]
    feeding = Receiving(MAX, scratch_bytes=16)  # every chunk takes several reads of the scratch buffer
    assert feeding.feed(framed(payloads)) == payloads


@pytest.mark.parametrize("size", [-1, MAX + 1])
@pytest.mark.parametrize("split", [0, 2, 4])
def test_a_bad_size_prefix_is_refused_even_when_split(size: int, split: int) -> None:
    feeding = Receiving(MAX)
    stream = framed([b"ok"]) + struct.pack(">i", size) + b"zz"
    with pytest.raises(FrameError):
        feeding.feed(stream[: 6 + split])
        feeding.feed(stream[6 + split :])
