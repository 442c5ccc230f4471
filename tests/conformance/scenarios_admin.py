"""The admin surface and the data path: topics created (with configs, validate-only, refused),
described (every config of a topic and of the broker), produced to, fetched, listed by timestamp."""

# ruff: noqa: E501 - requests are written one per line, as tables of their fields

from __future__ import annotations

from tests.conformance.batches import BASE_TS, batch
from tests.conformance.framework import Side, scenario
from tests.conformance.readiness import config_shown, topic_served

CREATE_TOPICS, DELETE_TOPICS, CREATE_PARTITIONS = 19, 20, 37
METADATA, PRODUCE, FETCH, LIST_OFFSETS, DELETE_RECORDS = 3, 0, 1, 2, 21
DESCRIBE_CONFIGS, INCREMENTAL_ALTER, DESCRIBE_CLUSTER = 32, 44, 60
TOPIC, BROKER = 2, 4


def topic_ready(side: Side, name: str, partitions: int) -> bool:
    """Whether the broker serves every partition of `name` (readiness.topic_served: Kafka shows a
    created topic's leaders in Metadata a moment before its partitions answer)."""
    return topic_served(side.quietly, name, partitions)


def create(
    side: Side, name: str, label: str, partitions: int = 1, validate_only: bool = False, **configs: str
) -> None:
    """CreateTopics, and when it created the topic, wait until the broker serves it."""
    r = side.request(
        CREATE_TOPICS, 7, label, validate_only=validate_only, timeout_ms=10_000,
        topics=[{"name": name, "num_partitions": partitions, "replication_factor": 1, "assignments": [],
                 "configs": [{"name": k.replace("_", "."), "value": v} for k, v in configs.items()]}],
    )  # fmt: skip
    if r is not None and not validate_only and r.topics[0].error_code == 0:
        side.wait_for(f"topic {name}", lambda: topic_ready(side, name, partitions))


@scenario("admin")
def create_topics(side: Side) -> None:
    t = side.name()
    create(side, t, "validate only, with configs", 3, True, cleanup_policy="compact", retention_ms="60000")
    side.request(METADATA, 12, "after validate only", topics=[{"name": t}], allow_auto_topic_creation=False)
    create(
        side, t, "with configs", 3, cleanup_policy="compact", retention_ms="60000", max_message_bytes="2000"
    )
    create(side, t, "again (exists)")
    create(side, side.name("bad-config"), "unknown config", no_such_config="1")
    create(side, side.name("bad-value"), "invalid value", cleanup_policy="sometimes")
    create(side, side.name("bad-partitions"), "zero partitions", 0)
    create(side, "bad/name", "invalid name")
    side.request(
        CREATE_TOPICS, 7, "replication factor 3 on one broker", validate_only=False, timeout_ms=10_000,
        topics=[{"name": side.name("rf3"), "num_partitions": 1, "replication_factor": 3, "assignments": [], "configs": []}],
    )  # fmt: skip
    side.request(DESCRIBE_CONFIGS, 4, "the created topic", include_synonyms=True, include_documentation=False,
                 resources=[{"resource_type": TOPIC, "resource_name": t, "configuration_keys": None}])  # fmt: skip
    side.request(CREATE_PARTITIONS, 3, "to 5", timeout_ms=10_000, validate_only=False,
                 topics=[{"name": t, "count": 5, "assignments": None}])  # fmt: skip
    side.request(CREATE_PARTITIONS, 3, "to 2 (fewer)", timeout_ms=10_000, validate_only=False,
                 topics=[{"name": t, "count": 2, "assignments": None}])  # fmt: skip
    side.request(
        DELETE_TOPICS, 6, "unknown", timeout_ms=10_000, topics=[{"name": side.name("nope"), "topic_id": None}]
    )
    side.request(
        DELETE_TOPICS, 6, "the created topic", timeout_ms=10_000, topics=[{"name": t, "topic_id": None}]
    )


@scenario("admin")
def describe_configs_topic(side: Side) -> None:
    t = side.name()
    create(side, t, "plain")
    for v in (1, 4):
        side.request(DESCRIBE_CONFIGS, v, "every config of a topic", include_synonyms=True,
                     include_documentation=v >= 3,
                     resources=[{"resource_type": TOPIC, "resource_name": t, "configuration_keys": None}])  # fmt: skip
    side.request(DESCRIBE_CONFIGS, 4, "unknown topic", include_synonyms=True, include_documentation=False,
                 resources=[{"resource_type": TOPIC, "resource_name": side.name("nope"), "configuration_keys": None}])  # fmt: skip
    side.request(DESCRIBE_CONFIGS, 4, "named keys", include_synonyms=False, include_documentation=False,
                 resources=[{"resource_type": TOPIC, "resource_name": t,
                             "configuration_keys": ["retention.ms", "no.such.key"]}])  # fmt: skip


@scenario("admin")
def describe_configs_broker(side: Side) -> None:
    side.request(DESCRIBE_CONFIGS, 4, "every config of the broker", include_synonyms=True, include_documentation=False,
                 resources=[{"resource_type": BROKER, "resource_name": "1", "configuration_keys": None}])  # fmt: skip
    side.request(DESCRIBE_CONFIGS, 4, "another broker id", include_synonyms=False, include_documentation=False,
                 resources=[{"resource_type": BROKER, "resource_name": "7", "configuration_keys": None}])  # fmt: skip


@scenario("admin")
def alter_configs(side: Side) -> None:
    t = side.name()
    create(side, t, "plain")

    def alter(label: str, name: str, value: str | None, op: int = 0, validate: bool = False) -> None:
        r = side.request(INCREMENTAL_ALTER, 1, label, validate_only=validate,
                         resources=[{"resource_type": TOPIC, "resource_name": t,
                                     "configs": [{"name": name, "config_operation": op, "value": value}]}])  # fmt: skip
        if r is not None and not validate and r.responses[0].error_code == 0:
            side.wait_for(f"{label} applied", lambda: config_shown(side.quietly, TOPIC, t, name, value))

    alter("set retention.ms", "retention.ms", "12345")
    alter("invalid value", "retention.ms", "soon")
    alter("unknown name", "no.such.config", "1")
    alter("validate only", "segment.ms", "100000", validate=True)
    alter("delete retention.ms", "retention.ms", None, op=1)
    side.request(DESCRIBE_CONFIGS, 4, "after the changes", include_synonyms=True, include_documentation=False,
                 resources=[{"resource_type": TOPIC, "resource_name": t,
                             "configuration_keys": ["retention.ms", "segment.ms"]}])  # fmt: skip


@scenario("admin")
def describe_cluster(side: Side) -> None:
    for v in (0, 1):
        side.request(DESCRIBE_CLUSTER, v, "", include_cluster_authorized_operations=True,
                     **({"endpoint_type": 1} if v >= 1 else {}))  # fmt: skip
    side.request(
        DESCRIBE_CLUSTER,
        1,
        "controllers endpoint",
        include_cluster_authorized_operations=False,
        endpoint_type=2,
    )
    side.request(
        DESCRIBE_CLUSTER,
        1,
        "unknown endpoint type, operations asked for",
        include_cluster_authorized_operations=True,
        endpoint_type=7,
    )


def _produce(side: Side, t: str, label: str, records: bytes, partition: int = 0, acks: int = -1) -> None:
    side.request(PRODUCE, 9, label, transactional_id=None, acks=acks, timeout_ms=5000,
                 topic_data=[{"name": t, "partition_data": [{"index": partition, "records": records}]}])  # fmt: skip


@scenario("admin")
def produce_fetch_list_offsets(side: Side) -> None:
    t = side.name()
    create(side, t, "two partitions", 2)
    _produce(side, t, "three records", batch([b"a", b"b", b"c"]))
    _produce(side, t, "two more, later", batch([b"d", b"e"], ts=BASE_TS + 60_000))
    _produce(side, t, "unknown partition", batch([b"x"]), partition=9)
    _produce(side, side.name("auto"), "to an unknown topic (auto-created)", batch([b"x"]))
    _produce(side, t, "acks=2 (invalid)", batch([b"x"]), acks=2)
    side.request(FETCH, 12, "from 0", replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
                 isolation_level=0, session_id=0, session_epoch=-1, rack_id="", forgotten_topics_data=[],
                 topics=[{"topic": t, "partitions": [
                     {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
                      "log_start_offset": -1, "partition_max_bytes": 1 << 20},
                     {"partition": 1, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
                      "log_start_offset": -1, "partition_max_bytes": 1 << 20},
                     {"partition": 7, "current_leader_epoch": -1, "fetch_offset": 0, "last_fetched_epoch": -1,
                      "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}])  # fmt: skip
    side.request(FETCH, 12, "out of range", replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=1 << 20,
                 isolation_level=0, session_id=0, session_epoch=-1, rack_id="", forgotten_topics_data=[],
                 topics=[{"topic": t, "partitions": [
                     {"partition": 0, "current_leader_epoch": -1, "fetch_offset": 99, "last_fetched_epoch": -1,
                      "log_start_offset": -1, "partition_max_bytes": 1 << 20}]}])  # fmt: skip
    for ts, what in (
        (-2, "earliest"),
        (-1, "latest"),
        (-3, "max timestamp"),
        (BASE_TS + 1, "by timestamp"),
        (BASE_TS + 30_000, "by timestamp between batches"),
        (BASE_TS + 999_999, "after the last"),
    ):
        side.request(LIST_OFFSETS, 9, what, replica_id=-1, isolation_level=0,
                     topics=[{"name": t, "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                                         "timestamp": ts}]}])  # fmt: skip
    side.request(LIST_OFFSETS, 9, "unknown topic", replica_id=-1, isolation_level=0,
                 topics=[{"name": side.name("nope"), "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                                                     "timestamp": -1}]}])  # fmt: skip
    side.request(DELETE_RECORDS, 2, "before offset 2", timeout_ms=5000,
                 topics=[{"name": t, "partitions": [{"partition_index": 0, "offset": 2},
                                                    {"partition_index": 1, "offset": 5}]}])  # fmt: skip
    side.request(LIST_OFFSETS, 9, "earliest after DeleteRecords", replica_id=-1, isolation_level=0,
                 topics=[{"name": t, "partitions": [{"partition_index": 0, "current_leader_epoch": -1,
                                                     "timestamp": -2}]}])  # fmt: skip


@scenario("admin")
def metadata_topics(side: Side) -> None:
    t = side.name()
    create(side, t, "three partitions", 3)
    for v in (1, 9, 12):
        side.request(METADATA, v, "a topic and an unknown one",
                     topics=[{"name": t}, {"name": side.name(f"nope-v{v}")}],
                     **({"allow_auto_topic_creation": False} if v >= 4 else {}))  # fmt: skip
    side.request(METADATA, 12, "auto-creating", topics=[{"name": side.name("auto")}], allow_auto_topic_creation=True,
                 include_topic_authorized_operations=True)  # fmt: skip
    side.request(
        METADATA, 12, "an invalid name", topics=[{"name": "bad/name"}], allow_auto_topic_creation=True
    )
