"""A mistake with an everyday tool (an offset or partition that is not there, a config name the topic
does not have, no broker) is one line on stderr and a non-zero exit, never a traceback; `consume
--offset` takes what kafka-console-consumer.sh takes, and -2 and -1 for earliest and latest."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.cli.conftest import Cli, kafkito


def one_line(done: subprocess.CompletedProcess[str], status: int) -> str:
    assert done.returncode == status, done.stderr
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
    return done.stderr.rstrip("\n")


@pytest.fixture(scope="module")
def topic(cli: Cli) -> str:
    cli.ok("topics", "create", "tm-one", "--partitions", "1")
    cli.ok("produce", "tm-one", "--quiet", stdin="first\nsecond\n")
    return "tm-one"


@pytest.mark.parametrize("offset", ["earliest", "-2", "EARLIEST"])
def test_consume_from_the_earliest_offset(cli: Cli, topic: str, offset: str) -> None:
    out = cli.ok("consume", topic, "--offset", offset, "--max-messages", "2", "--timeout-ms", "10000")
    assert out == "first\nsecond\n"


@pytest.mark.parametrize("offset", ["latest", "-1"])
def test_consume_from_the_latest_offset_reads_nothing_older(cli: Cli, topic: str, offset: str) -> None:
    done = cli("consume", topic, "--offset", offset, "--timeout-ms", "500")
    assert done.returncode == 0 and done.stdout == ""
    assert done.stderr == "Processed a total of 0 messages\n"


@pytest.mark.parametrize("offset", ["-3", "first", "1.5"])
def test_consume_refuses_an_offset_that_is_not_one(cli: Cli, topic: str, offset: str) -> None:
    assert one_line(cli("consume", topic, "--offset", offset), 2) == (
        f"kafkito consume: --offset '{offset}' is not an offset: a number >= 0, earliest (-2) or latest (-1)"
    )


def test_produce_to_a_partition_the_topic_does_not_have(cli: Cli, topic: str) -> None:
    assert one_line(cli("produce", topic, "--partition", "7", stdin="x\n"), 1) == (
        f"kafkito produce: topic {topic} has no partition 7 (it has 1)"
    )
    assert one_line(cli("produce", topic, "--partition", "-1", stdin="x\n"), 2) == (
        "kafkito produce: --partition -1 is not a partition: use a number >= 0"
    )
    out = cli.ok("consume", topic, "--offset", "earliest", "--max-messages", "2", "--timeout-ms", "10000")
    assert out == "first\nsecond\n"  # nothing was sent


def test_reset_offsets_of_a_partition_the_topic_does_not_have(cli: Cli, topic: str) -> None:
    done = cli("groups", "reset-offsets", "tm-group", "--topic", f"{topic}:9", "--to-earliest", "--execute")
    assert one_line(done, 1) == f"kafkito groups reset-offsets: topic {topic} has no partition 9 (it has 1)"


def test_reset_offsets_of_a_group_never_seen_commits_them_as_kafkas_tool_does(cli: Cli, topic: str) -> None:
    """kafka-consumer-groups.sh resets a Dead (unknown) group as it resets an Empty one."""
    cli.ok("groups", "reset-offsets", "tm-new-group", "--topic", topic, "--to-latest", "--execute")
    described = cli.ok("groups", "describe", "tm-new-group", "--json")
    assert [(row["partition"], row["current_offset"]) for row in json.loads(described)["tm-new-group"]] == [
        (0, 2)
    ]


def test_deleting_a_config_the_topic_does_not_have(cli: Cli, topic: str) -> None:
    done = cli("topics", "alter", topic, "--delete-config", "no.such.config")
    assert one_line(done, 1) == (
        "kafkito topics alter: InvalidConfigurationError: unknown topic config name: no.such.config"
    )


@pytest.mark.parametrize(
    "verb",
    [
        ("topics", "list"),
        ("topics", "describe", "t"),
        ("topics", "create", "t"),
        ("topics", "delete", "t"),
        ("topics", "alter", "t", "--partitions", "2"),
        ("groups", "list"),
        ("groups", "describe", "g"),
        ("groups", "delete", "g"),
        ("groups", "reset-offsets", "g", "--topic", "t", "--to-earliest"),
        ("produce", "t"),
        ("consume", "t"),
    ],
)
def test_every_verb_says_in_one_line_that_no_broker_answers(verb: tuple[str, ...]) -> None:
    done = kafkito(*verb, "--bootstrap-server", "127.0.0.1:1", stdin="x\n")
    where = " ".join(verb[:2] if verb[0] in ("topics", "groups") else verb[:1])
    assert one_line(done, 1).startswith(f"kafkito {where}: no broker at 127.0.0.1:1 (")
