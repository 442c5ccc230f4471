"""Heartbeat's own decoder and struct-packed answers over TCP: every version, every outcome, pipelined."""

from __future__ import annotations

import struct
from typing import Any

from kafkito.protocol.codec import RESPONSES, build_request
from kafkito.protocol.errors import ErrorCode
from tests.coordinator.test_handlers_wire import HEARTBEAT, SYNC, join_until_member
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

METADATA = 3


def stable_group(client: WireClient, group: str, instance: str | None = None) -> tuple[str, int]:
    """A one-member Stable group: (member id, generation)."""
    joined = join_until_member(client, 9, group, instance=instance)
    member = joined.member_id
    synced = client.request(
        SYNC, 5, group_id=group, generation_id=joined.generation_id, member_id=member,
        group_instance_id=instance, protocol_type="consumer", protocol_name="range",
        assignments=[dict(member_id=member, assignment=b"")],
    )  # fmt: skip
    assert synced.error_code == ErrorCode.NONE
    return member, joined.generation_id


def framed(correlation_id: int, api_key: int, version: int, **fields: Any) -> bytes:
    request = build_request(api_key, version, **fields)
    request.with_header(correlation_id=correlation_id, client_id="pipelined")
    return bytes(request.encode(header=True, framed=True))


def test_pipelined_heartbeats_of_every_version_and_outcome_are_answered_in_order(
    broker: ThreadBroker,
) -> None:
    with WireClient(broker.bootstrap) as setup:
        dynamic, generation = stable_group(setup, "beats")
        static, static_generation = stable_group(setup, "static-beats", instance="instance-1")
    expected: list[tuple[int, int, int]] = []  # (api key, version, error) by correlation id - 1
    frames: list[bytes] = []

    def heartbeat(version: int, error: ErrorCode, **fields: Any) -> None:
        fields.setdefault("group_instance_id", None)
        frames.append(framed(len(frames) + 1, HEARTBEAT, version, **fields))
        expected.append((HEARTBEAT, version, error))

    for v in range(5):
        heartbeat(v, ErrorCode.NONE, group_id="beats", generation_id=generation, member_id=dynamic)
        heartbeat(
            v, ErrorCode.ILLEGAL_GENERATION, group_id="beats", generation_id=generation + 1, member_id=dynamic
        )
        heartbeat(
            v, ErrorCode.UNKNOWN_MEMBER_ID, group_id="beats", generation_id=generation, member_id="nobody"
        )
        heartbeat(v, ErrorCode.UNKNOWN_MEMBER_ID, group_id="beats", generation_id=generation, member_id="")
        heartbeat(v, ErrorCode.INVALID_GROUP_ID, group_id="", generation_id=generation, member_id=dynamic)
        heartbeat(
            v, ErrorCode.NONE, group_id="static-beats", generation_id=static_generation, member_id=static
        )
        if v >= 3:
            heartbeat(
                v, ErrorCode.NONE, group_id="static-beats", generation_id=static_generation,
                member_id=static, group_instance_id="instance-1",
            )  # fmt: skip
            heartbeat(
                v, ErrorCode.FENCED_INSTANCE_ID, group_id="static-beats", generation_id=static_generation,
                member_id=dynamic, group_instance_id="instance-1",
            )  # fmt: skip
            heartbeat(
                v, ErrorCode.UNKNOWN_MEMBER_ID, group_id="static-beats", generation_id=static_generation,
                member_id=static, group_instance_id="instance-2",
            )  # fmt: skip
        frames.append(framed(len(frames) + 1, METADATA, 12, topics=[], allow_auto_topic_creation=False))
        expected.append((METADATA, 12, ErrorCode.NONE))
    with WireClient(broker.bootstrap) as client:
        client.send_raw(b"".join(frames))  # one write: answered in one batch, in order
        for correlation_id, (api_key, version, error) in enumerate(expected, start=1):
            frame = client.recv_frame()
            assert frame is not None
            response = RESPONSES[api_key].decode(frame, version=version, header=True)
            assert response.header.correlation_id == correlation_id
            if api_key == HEARTBEAT:
                assert (version, response.error_code) == (version, error)
                if version >= 1:
                    assert response.throttle_time_ms == 0


def test_a_truncated_heartbeat_closes_the_connection_after_answering_the_ones_before_it(
    broker: ThreadBroker,
) -> None:
    with WireClient(broker.bootstrap) as setup:
        member, generation = stable_group(setup, "cut")
    good = framed(
        1, HEARTBEAT, 4, group_id="cut", generation_id=generation, member_id=member, group_instance_id=None
    )
    body = framed(
        2, HEARTBEAT, 4, group_id="cut", generation_id=generation, member_id=member, group_instance_id=None
    )
    cut = struct.pack(">i", len(body) - 6) + body[4:-2]  # its group_instance_id and tag section cut off
    with WireClient(broker.bootstrap) as client:
        client.send_raw(good + cut)
        frame = client.recv_frame()
        assert frame is not None
        response = RESPONSES[HEARTBEAT].decode(frame, version=4, header=True)
        assert (response.header.correlation_id, response.error_code) == (1, ErrorCode.NONE)
        assert client.is_closed_by_peer()
    with WireClient(broker.bootstrap) as other:
        beat = other.request(
            HEARTBEAT, 4, group_id="cut", generation_id=generation, member_id=member, group_instance_id=None
        )
        assert beat.error_code == ErrorCode.NONE  # only that connection was closed
