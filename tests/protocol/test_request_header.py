"""Request header v2 (flexible versions): its tagged-field section is skipped, checking its bounds."""

from __future__ import annotations

import struct

import pytest

from kafkito.protocol.codec import MalformedRequest, parse_request_header
from kafkito.protocol.primitives import uvarint

HEAD = struct.pack(">hhih", 12, 4, 7, 3) + b"cid"


def test_an_empty_tagged_section_is_one_byte() -> None:
    header = parse_request_header(HEAD + b"\x00" + b"body", flexible=True)
    assert (header.api_key, header.api_version, header.correlation_id, header.client_id) == (12, 4, 7, "cid")
    assert header.body_offset == len(HEAD) + 1


def test_unknown_tagged_fields_are_skipped() -> None:
    tags = uvarint(2) + uvarint(0) + uvarint(3) + b"abc" + uvarint(300) + uvarint(0)
    header = parse_request_header(HEAD + tags + b"body", flexible=True)
    assert header.body_offset == len(HEAD) + len(tags)


@pytest.mark.parametrize(
    "tags",
    [
        b"",  # no section at all
        uvarint(1) + uvarint(0) + uvarint(9) + b"abc",  # a field past the end of the frame
        b"\x80\x80\x80\x80\x80\x01",  # a count longer than 5 bytes
        uvarint(1),  # a count, then nothing
    ],
)
def test_a_bad_tagged_section_is_malformed(tags: bytes) -> None:
    with pytest.raises(MalformedRequest):
        parse_request_header(HEAD + tags, flexible=True)


def test_classic_header_has_no_tagged_section() -> None:
    assert parse_request_header(HEAD + b"\x00", flexible=False).body_offset == len(HEAD)
