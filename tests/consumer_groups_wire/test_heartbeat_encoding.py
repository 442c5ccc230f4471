"""The ConsumerGroupHeartbeat handler encodes its response body itself (a hot path): it must be the
bytes the codec's schema encodes for the same answer, at both versions, for any result."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from kafkito.broker.coordinator.consumer.results import ConsumerHeartbeatResult
from kafkito.broker.handlers.consumer_group_heartbeat import encode_body
from kafkito.protocol.codec import RESPONSES, build_response
from kafkito.protocol.errors import ErrorCode

assignments = st.none() | st.lists(
    st.tuples(st.uuids(), st.lists(st.integers(0, 2**31 - 1), max_size=40).map(tuple)), max_size=6
).map(tuple)
results = st.builds(
    ConsumerHeartbeatResult,
    error=st.sampled_from([ErrorCode.NONE, ErrorCode.NONE, *ErrorCode]),
    error_message=st.none() | st.text(max_size=60),
    member_id=st.none() | st.text(max_size=40),
    member_epoch=st.integers(-(2**31), 2**31 - 1),
    heartbeat_interval_ms=st.integers(0, 2**31 - 1),
    assignment=assignments,
)


def codec_body(result: ConsumerHeartbeatResult, version: int) -> bytes:
    """What the schema encodes, with an error answered as Kafka does: code and message only."""
    ok = result.error == ErrorCode.NONE
    assignment = None
    if ok and result.assignment is not None:
        assignment = dict(
            topic_partitions=[dict(topic_id=t, partitions=list(p)) for t, p in result.assignment]
        )
    response = build_response(
        68,
        version,
        throttle_time_ms=0,
        error_code=result.error,
        error_message=result.error_message,
        member_id=result.member_id if ok else None,
        member_epoch=result.member_epoch if ok else 0,
        heartbeat_interval_ms=result.heartbeat_interval_ms if ok else 0,
        assignment=assignment,
    )
    return bytes(response.encode())


@given(results, st.sampled_from([0, 1]))
def test_hand_encoded_body_is_the_codecs(result: ConsumerHeartbeatResult, version: int) -> None:
    body = encode_body(result)
    assert body == codec_body(result, version)
    decoded = RESPONSES[68].decode(body, version=version)
    assert decoded.error_code == result.error


def test_an_error_answer_has_no_member_epoch_or_assignment() -> None:
    fenced = ConsumerHeartbeatResult(
        ErrorCode.FENCED_MEMBER_EPOCH, "fenced", "m", 7, 5000, ((uuid.uuid4(), (1,)),)
    )
    decoded = RESPONSES[68].decode(encode_body(fenced), version=1)
    assert (decoded.error_code, decoded.error_message) == (ErrorCode.FENCED_MEMBER_EPOCH, "fenced")
    assert (decoded.member_id, decoded.member_epoch, decoded.heartbeat_interval_ms) == (None, 0, 0)
    assert decoded.assignment is None
