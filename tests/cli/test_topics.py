"""`kafkito topics ...` against a real broker, as a subprocess."""

from __future__ import annotations

import json

from tests.cli.conftest import Cli


def test_create_list_describe_alter_delete(cli: Cli) -> None:
    assert cli.ok("topics", "create", "tp-a", "--partitions", "2", "--config", "retention.ms=60000") == (
        "Created topic tp-a.\n"
    )
    assert "tp-a" in cli.ok("topics", "list").split("\n")
    cli.ok("produce", "tp-a", "--partition", "1", stdin="x\ny\nz\n")

    (topic,) = json.loads(cli.ok("topics", "describe", "tp-a", "--json"))
    assert topic["partition_count"] == 2 and topic["replication_factor"] == 1
    assert topic["configs"] == {"retention.ms": "60000"}
    ends = [(p["partition"], p["log_start_offset"], p["log_end_offset"]) for p in topic["partitions"]]
    assert ends == [(0, 0, 0), (1, 0, 3)]

    text = cli.ok("topics", "describe", "tp-a").splitlines()
    assert text[0].startswith("Topic: tp-a\tTopicId: ") and "Configs: retention.ms=60000" in text[0]
    assert text[1].split() == ["PARTITION", "LEADER", "REPLICAS", "ISR", "LOG-START-OFFSET", "LOG-END-OFFSET"]
    assert text[3].split() == ["1", "1", "1", "1", "0", "3"]

    cli.ok("topics", "alter", "tp-a", "--partitions", "3", "--config", "cleanup.policy=compact")
    cli.ok("topics", "alter", "tp-a", "--delete-config", "retention.ms")
    (topic,) = json.loads(cli.ok("topics", "describe", "tp-a", "--json"))
    assert topic["partition_count"] == 3 and topic["configs"] == {"cleanup.policy": "compact"}

    assert cli.ok("topics", "delete", "tp-a") == "Deleted topic tp-a.\n"
    assert "tp-a" not in json.loads(cli.ok("topics", "list", "--json"))


def test_errors_are_one_line_with_the_kafka_error(cli: Cli) -> None:
    cli.ok("topics", "create", "tp-twice")
    again = cli("topics", "create", "tp-twice")
    assert again.returncode == 1
    assert again.stderr == "kafkito topics create: TopicAlreadyExistsError: topic 'tp-twice' already exists\n"
    missing = cli("topics", "describe", "tp-nowhere")
    assert (
        missing.returncode == 1
        and missing.stderr.count("\n") == 1
        and "no topic tp-nowhere" in missing.stderr
    )
    shrink = cli("topics", "alter", "tp-twice", "--partitions", "0")
    assert shrink.returncode == 1 and shrink.stderr.startswith("kafkito topics alter: InvalidPartitionsError")
    assert "Traceback" not in again.stderr + missing.stderr + shrink.stderr
