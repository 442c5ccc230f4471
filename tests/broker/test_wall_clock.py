"""Stored and answered times are wall-clock epoch milliseconds, as Kafka's, on a machine just booted.

The broker here runs with a monotonic clock that starts near 0 (injected), as `time.monotonic()` does
after a boot: every time that reaches a record or an answer must still be epoch milliseconds, and an
old commit timestamp must be kept as the client gave it, not taken for "unset".
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from confluent_kafka import Producer

from kafkito.broker.offsets.dump import records
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import SteerableClock
from tests.conftest import make_config
from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

HOUR_MS = 3_600_000


def just_booted() -> SteerableClock:
    """A broker clock over a monotonic source that reads 5 ms at construction."""
    zero = time.monotonic_ns() - 5_000_000
    return SteerableClock(monotonic_ns=lambda: time.monotonic_ns() - zero)


def wall_ms() -> int:
    return time.time_ns() // 1_000_000


@pytest.fixture
def broker(tmp_path: Path) -> Iterator[ThreadBroker]:
    config = make_config(tmp_path / "data", **{"group.initial.rebalance.delay.ms": 0})
    b = ThreadBroker(config, clock=just_booted()).start()
    try:
        yield b
    finally:
        b.stop()


def committed(broker: ThreadBroker, group: str) -> list[dict[str, Any]]:
    assert broker.broker is not None
    return [
        r for r in records(broker.broker.config.data_dir, group) if "commit_timestamp" in r.get("value", {})
    ]


def test_the_injected_monotonic_clock_starts_near_zero_and_the_broker_clock_tells_epoch_ms() -> None:
    before = wall_ms()
    clock = just_booted()
    assert clock.now_ms() >= before  # not ~5
    assert clock.now_ms() <= wall_ms()


def test_the_clock_follows_the_wall_and_never_goes_back_when_the_wall_is_stepped_back() -> None:
    wall = [1_700_000_000_000_000_000]
    monotonic = [5_000_000]  # 5 ms after boot
    clock = SteerableClock(monotonic_ns=lambda: monotonic[0], wall_ns=lambda: wall[0])
    assert clock.now_ms() == 1_700_000_000_000
    wall[0] += 2_000_000_000  # 2 s of wall time (slewed: 1 s of monotonic time)
    monotonic[0] += 1_000_000_000
    assert clock.now_ms() == 1_700_000_002_000
    wall[0] -= 60_000_000_000  # stepped back a minute
    monotonic[0] += 500_000_000
    assert clock.now_ms() == 1_700_000_002_500  # on at the monotonic pace
    monotonic[0] += 500_000_000
    wall[0] += 500_000_000
    assert clock.now_ms() == 1_700_000_003_000
    wall[0] += 61_000_000_000  # caught up and past
    assert clock.now_ms() == 1_700_000_003_000 + 500
    clock.skip_to(clock.now_ms() + 10_000)
    assert clock.now_ms() == 1_700_000_013_500 and clock.offset_ms == 10_000


def test_an_old_v1_commit_timestamp_is_stored_as_given(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "oc")
    an_hour_ago = wall_ms() - HOUR_MS
    part = dict(partition_index=0, committed_offset=3, commit_timestamp=an_hour_ago, committed_metadata="m")
    with WireClient(broker.bootstrap) as client:
        v1 = client.request(8, 1, group_id="g", generation_id_or_member_epoch=-1, member_id="",
                            topics=[dict(name="oc", partitions=[part])])  # fmt: skip
        assert v1.topics[0].partitions[0].error_code == ErrorCode.NONE
    assert [r["value"]["commit_timestamp"] for r in committed(broker, "g")] == [an_hour_ago]


def test_commit_and_expiry_timestamps_are_epoch_ms(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "oc")
    retention = 10 * HOUR_MS
    before = wall_ms()
    part = dict(partition_index=0, committed_offset=7, committed_metadata="")
    with WireClient(broker.bootstrap) as client:
        topics = [dict(name="oc", partitions=[part])]
        v2 = client.request(8, 2, group_id="g2", generation_id_or_member_epoch=-1, member_id="",
                            retention_time_ms=retention, topics=topics)  # fmt: skip
        assert v2.topics[0].partitions[0].error_code == ErrorCode.NONE
        v8 = client.request(8, 8, group_id="g8", generation_id_or_member_epoch=-1, member_id="",
                            topics=[dict(name="oc", partitions=[part])])  # fmt: skip
        assert v8.topics[0].partitions[0].error_code == ErrorCode.NONE
    after = wall_ms()
    [v2_value] = [r["value"] for r in committed(broker, "g2")]
    assert before <= v2_value["commit_timestamp"] <= after
    assert v2_value["expire_timestamp"] == v2_value["commit_timestamp"] + retention
    [v8_value] = [r["value"] for r in committed(broker, "g8")]
    assert before <= v8_value["commit_timestamp"] <= after


def test_a_group_state_timestamp_is_epoch_ms(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "gt")
    before = wall_ms()
    protocol = dict(name="range", metadata=b"\x00\x01\x00\x00\x00\x01\x00\x02gt\x00\x00\x00\x00")
    with WireClient(broker.bootstrap) as client:
        joined = client.request(11, 5, group_id="grp", session_timeout_ms=10_000, rebalance_timeout_ms=10_000,
                                member_id="", group_instance_id=None, protocol_type="consumer",
                                protocols=[protocol])  # fmt: skip
        assert joined.error_code == ErrorCode.MEMBER_ID_REQUIRED
        joined = client.request(11, 5, group_id="grp", session_timeout_ms=10_000, rebalance_timeout_ms=10_000,
                                member_id=joined.member_id, group_instance_id=None, protocol_type="consumer",
                                protocols=[protocol])  # fmt: skip
        assert joined.error_code == ErrorCode.NONE
        left = client.request(
            13, 3, group_id="grp", members=[dict(member_id=joined.member_id, group_instance_id=None)]
        )
        assert left.error_code == ErrorCode.NONE
    after = wall_ms()
    assert broker.broker is not None
    stamps = [
        r["value"]["current_state_timestamp"]
        for r in records(broker.broker.config.data_dir, "grp")
        if "current_state_timestamp" in r.get("value", {})
    ]
    assert stamps and all(before <= ts <= after for ts in stamps if ts != -1)
    assert stamps[-1] != -1  # the group that became Empty says when


def test_a_transaction_start_time_is_epoch_ms(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "tx")
    before = wall_ms()
    producer = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "clock-txn"})
    producer.init_transactions(10)
    producer.begin_transaction()
    producer.produce("tx", b"v")
    producer.flush(10)
    with WireClient(broker.bootstrap) as client:
        described = client.request(65, 0, transactional_ids=["clock-txn"])
    after = wall_ms()
    [state] = described.transaction_states
    assert state.transaction_state == "Ongoing"
    assert before <= state.transaction_start_time_ms <= after
    producer.abort_transaction(10)


def test_advancing_the_broker_clock_moves_the_times_records_carry(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "oc")
    assert broker.broker is not None
    steering = broker.broker.steering
    broker.call(lambda: steering.advance(HOUR_MS))
    part = dict(partition_index=0, committed_offset=1, committed_metadata="")
    before = wall_ms()
    with WireClient(broker.bootstrap) as client:
        answer = client.request(8, 8, group_id="moved", generation_id_or_member_epoch=-1, member_id="",
                                topics=[dict(name="oc", partitions=[part])])  # fmt: skip
        assert answer.topics[0].partitions[0].error_code == ErrorCode.NONE
    after = wall_ms()
    [value] = [r["value"] for r in committed(broker, "moved")]
    assert before + HOUR_MS <= value["commit_timestamp"] <= after + HOUR_MS
