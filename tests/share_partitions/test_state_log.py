"""`__share_group_state` on a real on-disk log: Kafka's record formats, a snapshot every N updates, and
a ShareManager restarted from the log with records in every state."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkito.broker.log.manager import LogManager, TopicInfo
from kafkito.broker.offsets.batches import build_batch
from kafkito.broker.share.manager import FetchParams, ShareManager
from kafkito.broker.share.partition import ShareLimits
from kafkito.broker.share.state_codec import (
    SHARE_STATE_TOPIC,
    SNAPSHOT,
    UPDATE,
    ShareStateKey,
    ShareStateValue,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
    kafka_uuid,
    state_partition,
)
from kafkito.broker.share.state_log import StateLogConfig
from kafkito.broker.share.states import RecordState, StateBatch
from kafkito.protocol.errors import ErrorCode
from kafkito.purgatory import ManualClock, Timer

TOPIC_ID = uuid.UUID("6f1d8a3e-2b1c-4e9a-9d7f-0a1b2c3d4e5f")


def test_keys_and_values_round_trip_in_kafkas_layout() -> None:
    key = ShareStateKey("group-1", TOPIC_ID, 3)
    raw = encode_key(SNAPSHOT, key)
    assert raw[:2] == b"\x00\x00" and raw[2:4] == b"\x00\x07" and raw[4:11] == b"group-1"
    assert raw[11:27] == TOPIC_ID.bytes and raw[27:] == b"\x00\x00\x00\x03"
    assert decode_key(raw) == (SNAPSHOT, key)
    assert decode_key(encode_key(UPDATE, key)) == (UPDATE, key)
    snap = ShareStateValue(
        SNAPSHOT, 2, 10, [StateBatch(10, 12, 2, 1), StateBatch(13, 13, 4, 5)], 1, 0, 111, 222
    )
    raw_value = encode_value(snap)
    assert raw_value[:2] == b"\x00\x00"  # value version 0
    assert decode_value(SNAPSHOT, raw_value) == snap
    update = ShareStateValue(UPDATE, 2, -1, [StateBatch(14, 14, 0, 2)], delivery_complete_count=3)
    assert decode_value(UPDATE, encode_value(update)) == update


def test_the_state_partition_is_the_hash_of_group_topic_id_and_partition() -> None:
    # Kafka: Utils.abs("g:<topic id as Uuid.toString()>:0".hashCode()) % 50
    assert kafka_uuid(TOPIC_ID) == "bx2KPiscTpqdfwobLD1OXw"
    from kafkito.broker.offsets.partitioner import java_abs, java_string_hash

    expected = java_abs(java_string_hash("g:bx2KPiscTpqdfwobLD1OXw:0")) % 50
    assert state_partition("g", TOPIC_ID, 0, 50) == expected


@pytest.fixture
def logs(tmp_path: Path) -> Iterator[LogManager]:
    manager = LogManager(tmp_path)
    yield manager
    manager.close()


def _manager(logs: LogManager, clock: ManualClock, per_snapshot: int = 500) -> ShareManager:
    timer = Timer(clock)
    manager = ShareManager(
        logs, timer, ShareLimits(1000, 3, 2000), StateLogConfig(5, 1 << 20, per_snapshot), lambda: 1
    )
    manager.timer_keepalive = timer  # type: ignore[attr-defined]
    manager.start_offset = lambda _group, offsets: offsets[0]  # earliest
    manager.load()
    return manager


def _produce(logs: LogManager, topic: str, count: int) -> None:
    plog = logs.get_log(topic, 0)
    for i in range(count):
        plog.append(build_batch([(b"k", b"v%d" % i)], 1))


def _state_records(logs: LogManager) -> list[tuple[int, ShareStateValue | None]]:
    from kafkito.broker.offsets.batches import batch_records, iter_batches

    out: list[tuple[int, ShareStateValue | None]] = []
    for partition in range(logs.topic(SHARE_STATE_TOPIC).partitions):  # type: ignore[union-attr]
        plog = logs.get_log(SHARE_STATE_TOPIC, partition)
        for header, batch in iter_batches(plog.read(0, 1 << 20)):
            for record in batch_records(batch, header):
                assert record.key is not None
                kind, _ = decode_key(record.key)
                out.append((kind, None if record.value is None else decode_value(kind, record.value)))
    return out


def test_a_snapshot_is_written_every_n_updates(logs: LogManager) -> None:
    info = logs.create_topic("t", 1)
    _produce(logs, "t", 10)
    clock = ManualClock()
    manager = _manager(logs, clock, per_snapshot=2)
    sp = manager.partition("g", info.topic_id, 0)
    for offset in range(5):
        sp.acquire("m", [offset])
        assert sp.acknowledge("m", [(offset, offset, (1,))]) is ErrorCode.NONE
    kinds = [kind for kind, _ in _state_records(logs)]
    assert kinds == [SNAPSHOT, UPDATE, UPDATE, SNAPSHOT, UPDATE, UPDATE]
    last_snapshot = [v for k, v in _state_records(logs) if k == SNAPSHOT][-1]
    # Written by the third acknowledgement (offset 2) with the start offset before it moved, as Kafka's.
    assert last_snapshot is not None and last_snapshot.snapshot_epoch == 1 and last_snapshot.start_offset == 2


def test_a_restart_restores_every_acknowledged_state_and_redelivers_the_rest(logs: LogManager) -> None:
    info = logs.create_topic("t", 1)
    _produce(logs, "t", 8)
    clock = ManualClock()
    manager = _manager(logs, clock)
    got = manager.fetch_now("g", "m1", [(info.topic_id, 0)], FetchParams(max_records=8))
    assert [(r.first_offset, r.last_offset, r.delivery_count) for r in got[0].ranges] == [(0, 7, 1)]
    # 0 accepted, 1 and 3 released, 2 rejected, 4-7 still held; then m2 acquires 1 again (never written)
    assert manager.acknowledge("g", "m1", info.topic_id, 0, [(0, 3, (1, 2, 3, 2))]) is ErrorCode.NONE
    again = manager.fetch_now("g", "m2", [(info.topic_id, 0)], FetchParams(max_records=1))
    assert [(r.first_offset, r.delivery_count) for r in again[0].ranges] == [(1, 2)]
    manager.close()

    restarted = _manager(logs, ManualClock())
    sp = restarted.partition("g", info.topic_id, 0)
    states = {o: (r.state, r.delivery_count) for o, r in sp.records.items()}
    assert sp.start_offset == 1
    assert states == {
        1: (RecordState.AVAILABLE, 1),
        2: (RecordState.ARCHIVED, 1),
        3: (RecordState.AVAILABLE, 1),
    }
    got = restarted.fetch_now("g", "m3", [(info.topic_id, 0)], FetchParams(max_records=100))
    ranges = [(r.first_offset, r.last_offset, r.delivery_count) for r in got[0].ranges]
    assert ranges == [(1, 1, 2), (3, 3, 2), (4, 7, 1)]  # 0 and 2 never again
    records = got[0].records
    assert records  # the batches carrying offsets 1 and 3-7


def test_the_delivery_complete_count_is_kept_as_kafkas_share_coordinator_merges_it(logs: LogManager) -> None:
    info = logs.create_topic("t", 1)
    manager = _manager(logs, ManualClock())
    key = ShareStateKey("g", info.topic_id, 0)
    manager.state.initialize(key, 0)
    assert manager.state.states[key].delivery_complete == 0
    counts = []
    for start, complete in [(0, 2), (0, 1), (5, 0), (3, 9), (5, 4)]:
        manager.state.write(key, start, complete, [])
        state = manager.state.states[key]
        counts.append((state.start_offset, state.delivery_complete))
    # the same start: the larger count; a start ahead: its count; one behind: the persisted start and count
    assert counts == [(0, 2), (0, 2), (5, 0), (5, 0), (5, 4)]
    written = [(v.start_offset, v.delivery_complete_count) for _, v in _state_records(logs) if v is not None]
    assert written == [(0, 0), (0, 2), (0, 2), (5, 0), (5, 0), (5, 4)]  # the snapshot, then the updates
    manager.close()
    restarted = _manager(logs, ManualClock())
    assert restarted.state.states[key].delivery_complete == 4


# -- pruning (share.coordinator.state.topic.prune.interval.ms, cold snapshots) -----------------


def _acknowledged(manager: ShareManager, group: str, topic_id: uuid.UUID, offsets: range) -> None:
    sp = manager.partition(group, topic_id, 0)
    for offset in offsets:
        sp.acquire("m", [offset])
        assert sp.acknowledge("m", [(offset, offset, (1,))]) is ErrorCode.NONE


def _pruning_manager(logs: LogManager, wall: list[int]) -> ShareManager:
    """One state partition (every key shares it), a snapshot every 2 updates, the wall clock `wall[0]`."""
    timer = Timer(ManualClock())
    config = StateLogConfig(1, 1 << 20, 2, prune_interval_ms=1_000, cold_snapshot_interval_ms=60_000)
    manager = ShareManager(logs, timer, ShareLimits(1000, 3, 2000), config, lambda: wall[0])
    manager.timer_keepalive = timer  # type: ignore[attr-defined]
    manager.start_offset = lambda _group, offsets: offsets[0]  # earliest
    manager.load()
    return manager


def _pruning_setup(logs: LogManager) -> tuple[TopicInfo, list[int], ShareManager]:
    """A topic `t` of 10 records, the wall clock at 1 s, and a pruning manager over them."""
    info = logs.create_topic("t", 1)
    _produce(logs, "t", 10)
    wall = [1_000]
    return info, wall, _pruning_manager(logs, wall)


def _states(manager: ShareManager) -> dict[ShareStateKey, tuple[int, dict[int, tuple[int, int]]]]:
    return {key: (s.start_offset, dict(s.states)) for key, s in manager.state.states.items()}


def test_pruning_drops_what_precedes_the_oldest_latest_snapshot_and_a_restart_sees_the_same(
    logs: LogManager,
) -> None:
    info, wall, manager = _pruning_setup(logs)
    _acknowledged(manager, "busy", info.topic_id, range(7))  # S U U S U U S U: its snapshot at 6
    _acknowledged(manager, "idle", info.topic_id, range(1))  # S U: its snapshot at 8
    state_log = logs.get_log(SHARE_STATE_TOPIC, 0)
    assert state_log.log_end_offset == 10
    before = _states(manager)

    assert manager.state.prune() == 6
    assert state_log.log_start_offset == 6
    assert manager.state.prune() == 0  # nothing more is redundant
    manager.close()
    assert _states(_pruning_manager(logs, wall)) == before


def test_an_idle_key_is_snapshotted_again_once_cold_so_that_it_no_longer_holds_pruning_back(
    logs: LogManager,
) -> None:
    info, wall, manager = _pruning_setup(logs)
    _acknowledged(manager, "idle", info.topic_id, range(1))  # S U: its snapshot at 0
    _acknowledged(manager, "busy", info.topic_id, range(5))  # S U U S U U at 2-7: its snapshot at 5
    state_log = logs.get_log(SHARE_STATE_TOPIC, 0)
    assert manager.state.prune() == 0  # the idle key's snapshot at 0 holds everything
    wall[0] += 59_999
    assert manager.state.snapshot_cold() == 0  # not cold yet
    wall[0] += 1
    before = _states(manager)
    assert manager.state.snapshot_cold() == 2  # both: each has records after its snapshot (at 8, 9)
    assert manager.state.snapshot_cold() == 0  # both fresh now
    assert manager.state.prune() == 8  # up to the older of the two latest snapshots (idle's)
    assert state_log.log_start_offset == 8
    manager.close()
    assert _states(_pruning_manager(logs, wall)) == before


def test_a_partition_whose_states_were_all_deleted_is_pruned_to_its_end(logs: LogManager) -> None:
    info, wall, manager = _pruning_setup(logs)
    _acknowledged(manager, "gone", info.topic_id, range(3))
    manager.state.delete(ShareStateKey("gone", info.topic_id, 0))
    state_log = logs.get_log(SHARE_STATE_TOPIC, 0)
    assert manager.state.prune() == state_log.log_end_offset
    manager.close()
    assert _states(_pruning_manager(logs, wall)) == {}


def test_the_broker_prunes_on_its_clock(tmp_path: Path) -> None:
    """`share.coordinator.state.topic.prune.interval.ms` on the broker's clock: a test moving the
    clock sees the state topic's redundant records go."""
    from kafkito.testing import start

    with start(
        {
            "share.coordinator.snapshot.update.records.per.snapshot": 2,
            "share.coordinator.state.topic.num.partitions": 1,
            "share.coordinator.state.topic.prune.interval.ms": 60_000,
        },
        data_dir=tmp_path,
    ) as kafkito:
        kafkito.create_topic("jobs")
        broker = kafkito.broker
        info = broker.logs.topic("jobs")
        assert info is not None
        kafkito.call(_produce, broker.logs, "jobs", 6)
        configs = broker.coordinator.all_group_configs
        kafkito.call(configs.alter, "g", {"share.auto.offset.reset": "earliest"}, (), False)
        manager = kafkito.call(broker._share)
        kafkito.call(_acknowledged, manager, "g", info.topic_id, range(5))  # S U U S U U: snapshot at 3
        state_log = broker.logs.get_log(SHARE_STATE_TOPIC, 0)
        assert state_log.log_start_offset == 0
        kafkito.advance(60_000)
        assert kafkito.call(lambda: state_log.log_start_offset) == 3


def test_a_key_whose_snapshot_is_its_partitions_last_record_is_not_snapshotted_again(
    logs: LogManager,
) -> None:
    info, wall, manager = _pruning_setup(logs)
    _acknowledged(manager, "alone", info.topic_id, range(1))  # S U
    wall[0] += 60_000
    assert manager.state.snapshot_cold() == 1
    wall[0] += 60_000
    assert manager.state.snapshot_cold() == 0  # idle, and nothing after its snapshot: it holds nothing back
