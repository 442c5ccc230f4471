"""The frame decoder under any TCP segmentation: big produce requests arrive over many socket reads."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kafkito.protocol.framing import FrameDecoder, FrameError

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
    decoder = FrameDecoder(MAX)
    frames: list[bytes] = []
    pos = 0
    for cut in cuts:
        chunk = stream[pos : pos + cut]
        pos += len(chunk)
        frames += decoder.feed(chunk)
        assert decoder.buffered == _pending(stream, pos, frames)
    frames += decoder.feed(stream[pos:])
    assert frames == payloads
    assert all(type(f) is bytes for f in frames)
    assert decoder.buffered == 0


def _pending(stream: bytes, consumed: int, frames: list[bytes]) -> int:
    """Bytes fed but not returned, as `buffered` counts them (a partial size prefix counts too)."""
    returned = sum(4 + len(f) for f in frames)
    return consumed - returned


def test_byte_by_byte_feeding_of_a_megabyte_frame() -> None:
    payload = bytes(range(256)) * 4096
    stream = framed([payload, b"", b"x"])
    decoder = FrameDecoder(MAX)
    frames: list[bytes] = []
    for i in range(10):  # the size prefix (and a little more) one byte at a time
        frames += decoder.feed(stream[i : i + 1])
    frames += decoder.feed(stream[10 : 10 + 70_000])
    frames += decoder.feed(stream[10 + 70_000 :])
    assert frames == [payload, b"", b"x"]


@pytest.mark.parametrize("size", [-1, MAX + 1])
@pytest.mark.parametrize("split", [0, 2, 4])
def test_a_bad_size_prefix_is_refused_even_when_split(size: int, split: int) -> None:
    decoder = FrameDecoder(MAX)
    stream = framed([b"ok"]) + struct.pack(">i", size) + b"zz"
    with pytest.raises(FrameError):
        decoder.feed(stream[: 6 + split])
        decoder.feed(stream[6 + split :])
