"""Real Go clients against kafkito, current ones from the Go module proxy (tests/go_clients/go.mod):
IBM/sarama, segmentio/kafka-go and franz-go's kadm, over real TCP and an on-disk log."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support.brokers import ThreadBroker

STANDARD_AUTHORIZER = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"

DEADLINE_S = 120  # a safety net for a hung client on a busy machine, never a performance threshold


def _run(program: Path, *args: str) -> Any:
    done = subprocess.run([str(program), *args], capture_output=True, text=True, timeout=DEADLINE_S)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_sarama_admin_idempotent_compressed_produce_and_a_group_of_two(
    broker: ThreadBroker, go_programs: dict[str, Path]
) -> None:
    """CreateTopic with a config, DescribeConfigs, an idempotent producer in each codec, a consumer
    group of two that commits as it goes, DescribeGroups, OffsetFetch, ListOffsets, DeleteTopics."""
    got = _run(go_programs["sarama_client"], broker.bootstrap, "sarama-topic", "sarama-group")
    assert got["partitions"] == 3
    assert got["topic_config"] == {"retention.ms": "3600000", "cleanup.policy": "delete"}
    assert (got["produced"], got["codecs"]) == (120, ["none", "gzip", "snappy", "lz4", "zstd"])
    assert (got["consumed"], got["duplicates"]) == (120, 0)
    assert sum(got["members"]) >= 3 and len(got["members"]) == 2  # both members claimed partitions
    assert got["group_state"] == "Empty"  # both left
    assert got["committed"] == got["end_offsets"]
    assert sum(got["end_offsets"].values()) == 120
    assert got["deleted"] is True


def test_kafka_go_group_reader_resumes_from_committed_offsets(
    broker: ThreadBroker, go_programs: dict[str, Path]
) -> None:
    """A group reader commits each message and leaves the group on Close; a second reader of the group,
    after more records, gets exactly the new ones."""
    got = _run(go_programs["kafkago_client"], broker.bootstrap, "kafka-go-topic", "kafka-go-group")
    assert got == {"produced": 60, "first": 40, "second": 20, "overlap": 0, "left": True}


def test_sarama_at_the_protocol_versions_of_kafka_0_8_to_2_0(
    broker: ThreadBroker, go_programs: dict[str, Path]
) -> None:
    """Each version: a snappy producer to an auto-created topic (message formats v0, v1 and v2), a
    partition consumer from the oldest offset, an offset commit with metadata read back."""
    got = _run(go_programs["sarama_versions"], broker.bootstrap)
    expected = {"produced": 10, "consumed": 10, "committed": 10, "metadata": "from sarama"}
    assert got == {version: expected for version in ("0.8.2.0", "0.10.0.0", "0.11.0.0", "1.0.0", "2.0.0")}


# What franz-go's kadm reads from a broker with Kafka's StandardAuthorizer (User:ANONYMOUS a super user):
# each value is what Apache Kafka 4.4 answers to the same program (tests/go_clients/franzgo_admin), but
# that Kafka may not list a topic yet right after creating it (its brokers learn of it asynchronously).
KADM_EXPECTED: dict[str, Any] = {
    "brokers": 1,
    "api.ConsumerGroupHeartbeat": True, "api.ShareGroupHeartbeat": True, "api.DescribeTransactions": True,
    "topics.create_b": "", "topics.create_existing": "TOPIC_ALREADY_EXISTS", "topics.validate_only": "",
    "topics.listed": [True, True, False], "topics.partitions": [5, 1], "topics.shrink": "INVALID_PARTITIONS",
    "configs.retention_created": ["3600000", "DYNAMIC_TOPIC_CONFIG"],
    "configs.cleanup_default": ["delete", "DEFAULT_CONFIG"],
    "configs.cleanup_altered": ["compact", "DYNAMIC_TOPIC_CONFIG"],
    "configs.retention_deleted": ["604800000", "DEFAULT_CONFIG"],
    "configs.invalid_value": "INVALID_CONFIG",
    "configs.broker.log.retention.hours": "168", "configs.broker.num.partitions": "1",
    "offsets.end": {"0": 10, "1": 10, "2": 10, "3": 0, "4": 0},
    "offsets.start": {"0": 4, "1": 0, "2": 0, "3": 0, "4": 0},
    "offsets.delete_beyond_end": "OFFSET_OUT_OF_RANGE",
    "groups.live": ["Stable", "consumer", "cooperative-sticky", 1], "groups.listed": ["Empty", "consumer"],
    "groups.committed": {"0": 10, "1": 10, "2": 10}, "groups.lag": 0,
    "groups.committed_after_alter": {"0": 10, "1": 2}, "groups.delete": "", "groups.after_delete": "Dead",
    "acls.created": 2, "acls.described": ["User:alice DESCRIBE ALLOW", "User:alice READ ALLOW"],
    "acls.deleted": 2, "acls.after_delete": 0,
    "scram.one_user_twice_in_a_request": "DUPLICATE_RESOURCE",
    "scram.upserted": ["SCRAM-SHA-256/4096", "SCRAM-SHA-512/8192"],
    "scram.after_delete": ["SCRAM-SHA-512/8192"],
    "scram.unknown_user": "RESOURCE_NOT_FOUND",
    "txn.open": ["Ongoing", "kadm-b"], "txn.listed_ongoing": True,
    "txn.producers": 1, "txn.producer_open": True,
    "txn.committed": "CompleteCommit", "txn.unknown": "TRANSACTIONAL_ID_NOT_FOUND",
    "share.live": ["Stable", 1, "simple"], "share.listed": "share",
    "share.offsets_described": True, "share.offsets_altered": {"0": 0}, "share.offsets_deleted": {},
    "topics.after_delete": False,
}  # fmt: skip


def test_franz_go_kadm_surface(
    broker_factory: Callable[..., ThreadBroker], go_programs: dict[str, Path]
) -> None:
    """Topics (create, validate-only, list, partitions), topic and broker configs (incremental alter,
    delete back to the default, an invalid value), records (end and start offsets, DeleteRecords),
    a group (describe live and empty, offsets, lag, alter and delete offsets, delete the group), ACLs,
    SCRAM credentials, an open and a committed transaction (describe, list, producers), a share group
    (describe, list by type, offsets described, altered, deleted): every answer as Kafka's."""
    broker = broker_factory(
        group_initial_rebalance_delay_ms=0,
        authorizer_class_name=STANDARD_AUTHORIZER,
        super_users="User:ANONYMOUS",
    )
    got = _run(go_programs["franzgo_admin"], broker.bootstrap, "kadm")
    assert {k: v for k, v in got.items() if KADM_EXPECTED.get(k) != v} == {}, f"expected {KADM_EXPECTED}"
    assert set(got) == set(KADM_EXPECTED)
