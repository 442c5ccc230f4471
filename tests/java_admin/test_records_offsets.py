"""Admin calls on records, offsets and log directories of kafka-clients 4.4: deleteRecords, listOffsets
(every OffsetSpec, both isolation levels), describeLogDirs, describeReplicaLogDirs."""

from __future__ import annotations

import base64
import time
import uuid

from tests.java_admin.conftest import JavaAdmin


def _records(n: int, partition: int = 0, base_ts: int | None = None) -> list[dict[str, object]]:
    ts = base_ts if base_ts is not None else int(time.time() * 1000) - 60_000
    return [
        dict(partition=partition, key=None, value=base64.b64encode(b"v%d" % i).decode(), headers=[],
             timestamp=ts + i * 10)
        for i in range(n)
    ]  # fmt: skip


def test_delete_records_moves_the_low_watermark(admin: JavaAdmin) -> None:
    topic = admin.topic(partitions=2)
    admin.client("produce", topic=topic, records=_records(10) + _records(4, partition=1), codec="none")
    deleted = admin("deleteRecords", topic=topic, offsets={"0": 6, "1": -1})  # -1: up to the high watermark
    assert deleted == {f"{topic}-0": {"lowWatermark": 6}, f"{topic}-1": {"lowWatermark": 4}}
    earliest = admin("listOffsets", topic=topic, specs={"0": "earliest"})
    assert earliest[f"{topic}-0"]["offset"] == 6
    beyond = admin("deleteRecords", topic=topic, offsets={"0": 11})[f"{topic}-0"]
    assert beyond["error"] == "OffsetOutOfRangeException"


def test_list_offsets_for_every_spec(admin: JavaAdmin) -> None:
    topic = admin.topic()
    base = int(time.time() * 1000) - 60_000
    admin.client("produce", topic=topic, records=_records(5, base_ts=base), codec="none")
    got = {}
    for spec in (
        "earliest",
        "latest",
        "maxTimestamp",
        "earliestLocal",
        "latestTiered",
        str(base + 15),
        str(base + 10_000),
    ):
        specs = {"0": spec}
        got[spec] = admin("listOffsets", topic=topic, specs=specs)[f"{topic}-0"]
    assert got["earliest"] == {"offset": 0, "timestamp": -1, "leaderEpoch": 0}
    assert got["latest"] == {"offset": 5, "timestamp": -1, "leaderEpoch": 0}
    assert got["maxTimestamp"] == {"offset": 4, "timestamp": base + 40, "leaderEpoch": 0}
    assert got["earliestLocal"] == {"offset": 0, "timestamp": -1, "leaderEpoch": 0}
    assert got["latestTiered"] == {"offset": -1, "timestamp": -1, "leaderEpoch": -1}
    assert got[str(base + 15)] == {"offset": 2, "timestamp": base + 20, "leaderEpoch": 0}
    assert got[str(base + 10_000)] == {"offset": -1, "timestamp": -1, "leaderEpoch": -1}


def test_list_offsets_read_committed_stops_at_an_open_transaction(admin: JavaAdmin) -> None:
    topic = admin.topic()
    admin.client("produce", topic=topic, records=_records(3), codec="none")
    key = f"open-{uuid.uuid4().hex[:8]}"
    admin.client("txn-open", key=key, transactionalId=key, topic=topic, records=_records(2))
    try:
        uncommitted = admin("listOffsets", topic=topic, specs={"0": "latest"})[f"{topic}-0"]
        committed = admin("listOffsets", topic=topic, specs={"0": "latest"}, readCommitted=True)[f"{topic}-0"]
    finally:
        admin.client("txn-close", key=key)
    assert (uncommitted["offset"], committed["offset"]) == (5, 3)


def test_describe_log_dirs_and_replica_log_dirs(admin: JavaAdmin) -> None:
    topic = admin.topic(partitions=2)
    admin.client("produce", topic=topic, records=_records(3), codec="none")
    (by_dir,) = admin("describeLogDirs", brokers=[1]).values()
    assert len(by_dir) == 1
    ((path, described),) = by_dir.items()
    assert described["error"] is None
    assert described["totalBytes"] > 0 and 0 < described["usableBytes"] <= described["totalBytes"]
    mine = {tp: r for tp, r in described["replicas"].items() if tp.startswith(topic)}
    assert sorted(mine) == [f"{topic}-0", f"{topic}-1"]
    assert mine[f"{topic}-0"]["size"] > 0 and mine[f"{topic}-1"]["size"] == 0
    assert {(r["offsetLag"], r["isFuture"]) for r in mine.values()} == {(0, False)}
    replicas = admin("describeReplicaLogDirs", topic=topic, partitions=[0], broker=1)
    assert replicas == {f"{topic}-0": {"currentReplicaLogDir": path, "futureReplicaLogDir": None}}
