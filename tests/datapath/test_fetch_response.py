"""The hand-written Fetch response encoder writes exactly the bytes of the generic codec, every version."""

from __future__ import annotations

import uuid

from hypothesis import given, settings
from hypothesis import strategies as st

from kafkito.broker.fetch_response import PartitionAnswer, TopicAnswer, encode_fetch_response
from kafkito.broker.handlers import fetch
from kafkito.protocol.codec import build_response, encode_response, frame_response_body

offsets = st.integers(-1, 2**63 - 1)
partitions = st.builds(
    PartitionAnswer,
    partition_index=st.integers(0, 2**31 - 1),
    error_code=st.sampled_from([0, 1, 3, 6, 100]),
    high_watermark=offsets,
    log_start_offset=offsets,
    records=st.one_of(st.just(b""), st.binary(max_size=300), st.binary(min_size=20_000, max_size=20_100)),
    last_stable_offset=offsets,
    aborted=st.one_of(st.none(), st.lists(st.tuples(offsets, offsets), max_size=3)),
)
topics = st.builds(
    TopicAnswer,
    name=st.text(min_size=1, max_size=30),
    topic_id=st.uuids(),
    partitions=st.lists(partitions, max_size=4),
)


def codec_body(version: int, session_id: int, answer: list[TopicAnswer]) -> bytes:
    response = build_response(
        1,
        version,
        throttle_time_ms=0,
        error_code=0,
        session_id=session_id,
        responses=[
            dict(
                topic=t.name,
                topic_id=t.topic_id,
                partitions=[
                    dict(
                        partition_index=p.partition_index,
                        error_code=p.error_code,
                        high_watermark=p.high_watermark,
                        last_stable_offset=p.high_watermark
                        if p.last_stable_offset < 0
                        else p.last_stable_offset,
                        log_start_offset=p.log_start_offset,
                        aborted_transactions=None
                        if p.aborted is None
                        else [dict(producer_id=pid, first_offset=first) for pid, first in p.aborted],
                        preferred_read_replica=-1,
                        records=p.records,
                    )
                    for p in t.partitions
                ],
            )
            for t in answer
        ],
    )
    return encode_response(response, 7)


@settings(max_examples=100, deadline=None)
@given(
    version=st.integers(fetch.FIRST_V2_FORMAT, fetch.VERSIONS[1]),  # v0-v3: fetch_legacy.py, the codec
    session_id=st.integers(0, 2**31 - 1),
    answer=st.lists(topics, max_size=4),
)
def test_hand_encoded_fetch_response_matches_the_codec(
    version: int, session_id: int, answer: list[TopicAnswer]
) -> None:
    body = encode_fetch_response(version, session_id, answer)
    assert frame_response_body(body, 7, 1, version) == codec_body(version, session_id, answer)


def test_a_missing_topic_id_is_written_as_zeros() -> None:
    answer = [TopicAnswer("t", None, [PartitionAnswer(0, 100, -1, -1, b"")])]
    body = encode_fetch_response(13, 0, answer)
    expected = codec_body(13, 0, [TopicAnswer("t", uuid.UUID(int=0), answer[0].partitions)])
    assert frame_response_body(body, 7, 1, 13) == expected
