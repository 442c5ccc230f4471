"""The console's newer `/api/` endpoints against a real `kafkito serve --http --http-write` (one per
module) and real clients: the message browser across partitions, producing, creating a topic,
editing its configs (overrides marked as DescribeConfigs reports them), resetting offsets per
partition with a preview, and the read-only cluster views (ACLs, SCRAM users, transactions,
broker configs, feature levels); each write refused while the console is read-only."""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.console.support import ConsoleBroker, produce
from tests.support.wire import WireClient


def _created(broker: ConsoleBroker, name: str, partitions: int, **configs: str) -> None:
    body = {"name": name, "partitions": partitions, "configs": configs}
    status, answer = broker.call("POST", "/api/topics", body)
    assert status == 201 and answer["partitions"] == partitions, answer


def _offsets(answer: dict[str, Any]) -> list[tuple[int, int]]:
    return [(r["partition"], r["offset"]) for r in answer["records"]]


def test_the_browser_reads_every_partition_newest_first_with_filters_and_a_limit(
    writable: ConsoleBroker,
) -> None:
    from kafka import KafkaProducer

    _created(writable, "search-a", 3)
    base = int(time.time() * 1000) - 100_000
    producer = KafkaProducer(bootstrap_servers=writable.bootstrap, linger_ms=0)
    for i in range(9):  # record i to partition i % 3, a second apart
        producer.send(
            "search-a",
            partition=i % 3,
            key=b"user-%d" % (i % 2),
            value=b"order %d" % i,
            headers=[("kind", b"big" if i >= 6 else b"small")],
            timestamp_ms=base + i * 1000,
        )
    producer.flush()
    producer.close()
    path = "/api/topics/search-a/messages"
    everything = writable.get(path)
    assert _offsets(everything) == [(2, 2), (1, 2), (0, 2), (2, 1), (1, 1), (0, 1), (2, 0), (1, 0), (0, 0)]
    assert everything["complete"] and everything["scanned"] == 9
    assert [r["value"]["text"] for r in writable.get(path + "?limit=2")["records"]] == ["order 8", "order 7"]
    # orders 7, 5, 3, 1
    assert _offsets(writable.get(path + "?key=user-1")) == [(1, 2), (2, 1), (0, 1), (1, 0)]
    assert _offsets(writable.get(path + "?value=order%204")) == [(1, 1)]
    assert _offsets(writable.get(path + "?header=kind=big")) == [(2, 2), (1, 2), (0, 2)]
    assert _offsets(writable.get(path + "?header=kind&limit=1")) == [(2, 2)]
    window = writable.get(path + f"?from={base + 2000}&to={base + 4000}")
    assert [r["value"]["text"] for r in window["records"]] == ["order 4", "order 3", "order 2"]
    assert _offsets(writable.get(path + "?partition=1")) == [(1, 2), (1, 1), (1, 0)]
    nothing = writable.get(path + "?value=no-such-thing")
    assert nothing["records"] == [] and nothing["complete"]
    assert writable.call("GET", path + "?partition=3")[0] == 404
    assert writable.call("GET", "/api/topics/no-such/messages")[0] == 404
    assert writable.call("GET", path + "?limit=x")[0] == 400


def test_a_record_produced_through_the_api_is_read_back(writable: ConsoleBroker) -> None:
    from kafka import KafkaConsumer, TopicPartition
    from kafka.partitioner.default import murmur2

    _created(writable, "produce-a", 4)
    body = {
        "key": "alice",
        "value": '{"n": 1}',
        "headers": [{"key": "trace", "value": "t-1"}],
        "partition": 2,
    }
    status, placed = writable.call("POST", "/api/topics/produce-a/records", body)
    assert status == 200 and (placed["partition"], placed["offset"]) == (2, 0)
    status, keyed = writable.call("POST", "/api/topics/produce-a/records", {"key": "bob", "value": "v"})
    assert keyed["partition"] == (murmur2(b"bob") & 0x7FFFFFFF) % 4  # as Kafka's default partitioner
    status, unkeyed = writable.call("POST", "/api/topics/produce-a/records", {"key": None, "value": None})
    assert status == 200
    consumer = KafkaConsumer(bootstrap_servers=writable.bootstrap, consumer_timeout_ms=5000)
    consumer.assign([TopicPartition("produce-a", 2)])
    consumer.seek_to_beginning()
    first = next(iter(consumer))
    consumer.close()
    assert (first.key, first.value, first.headers) == (b"alice", b'{"n": 1}', [("trace", b"t-1")])
    newest = writable.get("/api/topics/produce-a/messages?limit=1")["records"][0]
    assert (newest["partition"], newest["key"], newest["value"]) == (unkeyed["partition"], None, None)
    assert writable.call("POST", "/api/topics/produce-a/records", {"value": "x", "partition": 4})[0] == 404
    assert writable.call("POST", "/api/topics/no-such/records", {"value": "x"})[0] == 404
    status, refused = writable.call("POST", "/api/topics/produce-a/records", {"value": 5})
    assert status == 400 and "value" in refused["error"]


def test_creating_a_topic_and_editing_its_configs_with_kafkas_refusals(writable: ConsoleBroker) -> None:
    _created(writable, "configs-a", 2, **{"retention.ms": "60000"})
    configs = {c["name"]: c for c in writable.get("/api/topics/configs-a")["configs"]}
    assert configs["retention.ms"]["override"] and configs["retention.ms"]["source"] == "DYNAMIC_TOPIC_CONFIG"
    assert configs["retention.ms"]["value"] == "60000"
    assert not configs["cleanup.policy"]["override"] and configs["cleanup.policy"]["default"]
    assert configs["cleanup.policy"]["synonyms"][0]["name"] == "log.cleanup.policy"
    status, body = writable.call("POST", "/api/topics", {"name": "configs-a"})
    assert status == 400 and body["error"].startswith("TOPIC_ALREADY_EXISTS")
    status, body = writable.call(
        "POST", "/api/topics", {"name": "bad-config", "configs": {"retention.ms": "x"}}
    )
    assert status == 400 and body["error"].startswith("INVALID_CONFIG")
    assert writable.call("GET", "/api/topics/bad-config")[0] == 404
    status, body = writable.call(
        "POST",
        "/api/topics/configs-a/configs",
        {"set": {"cleanup.policy": "compact"}, "delete": ["retention.ms"]},
    )
    assert status == 200, body
    configs = {c["name"]: c for c in writable.get("/api/topics/configs-a")["configs"]}
    assert configs["cleanup.policy"]["override"] and configs["cleanup.policy"]["value"] == "compact"
    assert not configs["retention.ms"]["override"] and configs["retention.ms"]["value"] == "604800000"
    status, body = writable.call("POST", "/api/topics/configs-a/configs", {"set": {"retention.ms": "abc"}})
    assert status == 400 and body["error"].startswith("INVALID_CONFIG")
    status, body = writable.call("POST", "/api/topics/no-such/configs", {"set": {"retention.ms": "1"}})
    assert status == 404 and "UNKNOWN_TOPIC_OR_PARTITION" in body["error"]


def _commit(bootstrap: str, group: str, topic: str, offsets: dict[int, int]) -> None:
    from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        consumer.assign([TopicPartition(topic, p) for p in offsets])
        consumer.commit({TopicPartition(topic, p): OffsetAndMetadata(o, "", -1) for p, o in offsets.items()})
    finally:
        consumer.close()


def test_resetting_offsets_per_partition_to_an_offset_or_a_time_with_a_preview(
    writable: ConsoleBroker,
) -> None:
    from kafka import KafkaProducer

    _created(writable, "reset-a", 2)
    base = int(time.time() * 1000) - 50_000
    producer = KafkaProducer(bootstrap_servers=writable.bootstrap, linger_ms=0)
    for i in range(10):
        producer.send("reset-a", partition=i % 2, value=b"%d" % i, timestamp_ms=base + i * 1000)
    producer.flush()
    producer.close()
    _commit(writable.bootstrap, "resets", "reset-a", {0: 5, 1: 5})
    path = "/api/groups/resets/reset-offsets"
    status, preview = writable.call(
        "POST", path, {"topic": "reset-a", "partitions": [1], "to": "offset", "offset": 2, "preview": True}
    )
    assert status == 200 and preview["partitions"] == {
        "1": {"current": 5, "offset": 2, "lag_after": 3, "error": None}
    }
    committed = [o["committed_offset"] for o in writable.get("/api/groups/resets")["offsets"]]
    assert committed == [5, 5]  # a preview commits nothing
    status, done = writable.call(
        "POST", path, {"topic": "reset-a", "partitions": [1], "to": "offset", "offset": 2}
    )
    assert status == 200 and done["partitions"]["1"]["error"] == "NONE"
    assert [o["committed_offset"] for o in writable.get("/api/groups/resets")["offsets"]] == [5, 2]
    # records 0..9 alternate partitions: the first at or after base+4500 are record 5 (p1 offset 2)
    # and record 6 (p0 offset 3)
    status, done = writable.call("POST", path, {"topic": "reset-a", "to": "time", "time": base + 4500})
    assert {p: r["offset"] for p, r in done["partitions"].items()} == {"0": 3, "1": 2}
    status, done = writable.call("POST", path, {"topic": "reset-a", "to": "offset", "offset": 99})
    assert {p: r["offset"] for p, r in done["partitions"].items()} == {"0": 5, "1": 5}  # clamped to the end
    status, body = writable.call("POST", path, {"topic": "reset-a", "to": "offset"})
    assert status == 400 and "offset" in body["error"]
    status, body = writable.call("POST", path, {"topic": "reset-a", "to": "yesterday"})
    assert status == 400
    assert writable.call("POST", path, {"topic": "reset-a", "partitions": [7], "to": "earliest"})[0] == 404


def test_acls_users_transactions_broker_configs_and_features(writable: ConsoleBroker) -> None:
    from confluent_kafka import Producer

    assert writable.get("/api/acls") == {"acls": []}
    assert writable.get("/api/users") == {"users": []}
    with WireClient(writable.bootstrap) as wire:
        wire.request(
            30,
            3,
            creations=[
                dict(
                    resource_type=2,
                    resource_name="orders",
                    resource_pattern_type=3,
                    principal="User:alice",
                    host="*",
                    operation=3,
                    permission_type=3,
                )
            ],
        )
        wire.request(
            51,
            0,
            deletions=[],
            upsertions=[
                dict(name="carol", mechanism=2, iterations=8192, salt=b"s", salted_password=b"k" * 64)
            ],
        )
    assert writable.get("/api/acls")["acls"] == [
        {
            "resource_type": "TOPIC",
            "resource_name": "orders",
            "pattern_type": "LITERAL",
            "principal": "User:alice",
            "host": "*",
            "operation": "READ",
            "permission_type": "ALLOW",
        }
    ]
    assert writable.get("/api/users")["users"] == [
        {"user": "carol", "credentials": [{"mechanism": "SCRAM-SHA-512", "iterations": 8192}]}
    ]
    produce(writable.bootstrap, "txn-a", [(None, b"x", [])])
    producers = []
    for tid in ("a-committed", "b-open"):
        producer = Producer({"bootstrap.servers": writable.bootstrap, "transactional.id": tid})
        producer.init_transactions(30)
        producer.begin_transaction()
        producer.produce("txn-a", b"in " + tid.encode())
        producer.flush(30)
        if tid == "a-committed":
            producer.commit_transaction(30)
        producers.append(producer)
    try:
        listed = writable.get("/api/transactions")["transactions"]
        assert [(t["transactional_id"], t["state"], t["open"]) for t in listed] == [
            ("b-open", "Ongoing", True),
            ("a-committed", "CompleteCommit", False),
        ]
        assert listed[0]["partitions"] == [{"topic": "txn-a", "partitions": [0]}]
    finally:
        producers[1].abort_transaction(30)
    broker = writable.get("/api/broker/configs")
    assert broker["broker"] == 1
    configs = {c["name"]: c for c in broker["configs"]}
    delay = configs["group.initial.rebalance.delay.ms"]  # given to serve: the broker's own value
    assert delay["override"] and delay["source"] == "STATIC_BROKER_CONFIG" and delay["value"] == "0"
    partitions = configs["num.partitions"]
    assert not partitions["override"] and partitions["source"] == "DEFAULT_CONFIG"
    features = {f["name"]: f for f in writable.get("/api/features")["features"]}
    assert features["metadata.version"]["finalized_level"] >= 1
    assert features["transaction.version"]["finalized_level"] == 2


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/api/topics", {"name": "ro-new"}),
        ("POST", "/api/topics/ro-b/records", {"value": "x"}),
        ("POST", "/api/topics/ro-b/configs", {"set": {"retention.ms": "1"}}),
        ("POST", "/api/groups/g/reset-offsets", {"topic": "ro-b", "to": "earliest", "preview": True}),
    ],
)
def test_every_write_is_refused_while_the_console_is_read_only(
    console: ConsoleBroker, method: str, path: str, body: dict[str, Any]
) -> None:
    produce(console.bootstrap, "ro-b", [(None, b"x", [])])
    status, answer = console.call(method, path, body)
    assert status == 403 and "--http-write" in answer["error"]
    assert console.call("GET", "/api/topics/ro-new")[0] == 404
    assert console.get("/api/topics/ro-b/messages")["records"][0]["value"]["text"] == "x"
