"""Real Go clients against kafkito: Sarama 1.22 and segmentio/kafka-go 0.2 (Debian's), both of an age
that negotiates old API versions, over real TCP and an on-disk log."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from tests.support.brokers import ThreadBroker

DEADLINE_S = 120  # a safety net for a hung client on a busy machine, never a performance threshold


def _run(program: Path, *args: str) -> dict[str, Any]:
    done = subprocess.run([str(program), *args], capture_output=True, text=True, timeout=DEADLINE_S)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout)
    return result


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
    """A group reader commits each message; a second reader of the group, after more records, gets
    exactly the new ones."""
    got = _run(go_programs["kafkago_client"], broker.bootstrap, "kafka-go-topic", "kafka-go-group")
    assert got == {"produced": 60, "first": 40, "second": 20, "overlap": 0}


def test_sarama_at_the_protocol_versions_of_kafka_0_8_to_2_0(
    broker: ThreadBroker, go_programs: dict[str, Path]
) -> None:
    """Each version: a snappy producer to an auto-created topic (message formats v0, v1 and v2), a
    partition consumer from the oldest offset, an offset commit with metadata read back."""
    got = _run(go_programs["sarama_versions"], broker.bootstrap)
    expected = {"produced": 10, "consumed": 10, "committed": 10, "metadata": "from sarama"}
    assert got == {version: expected for version in ("0.8.2.0", "0.10.0.0", "0.11.0.0", "1.0.0", "2.0.0")}
