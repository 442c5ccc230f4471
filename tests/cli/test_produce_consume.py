"""`kafkito produce` and `kafkito consume` round-trip keys, values and headers through a real broker."""

from __future__ import annotations

import json

from kafka import KafkaConsumer, TopicPartition

from tests.cli.conftest import Cli, kafkito


def test_keys_values_and_headers_round_trip(cli: Cli) -> None:
    cli.ok("topics", "create", "pc-round", "--partitions", "1")
    sent = cli(
        "produce", "pc-round", "--key-separator", ":", "--header", "source=cli", stdin="k1:v1\nk2:a:b\n"
    )
    assert sent.returncode == 0 and sent.stderr == "Produced 2 records to pc-round.\n"
    cli.ok("produce", "pc-round", "--parse-headers", "--key-separator", "=", stdin="h1:x,h2:y\tk3=v3\n")
    cli.ok("produce", "pc-round", "--quiet", stdin="no key here\n")

    done = cli("consume", "pc-round", "--from-beginning", "--max-messages", "4", "--json")
    assert done.returncode == 0 and done.stderr == "Processed a total of 4 messages\n"
    got = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r["key"], r["value"], r["headers"]) for r in got] == [
        ("k1", "v1", [["source", "cli"]]),
        ("k2", "a:b", [["source", "cli"]]),
        ("k3", "v3", [["h1", "x"], ["h2", "y"]]),
        (None, "no key here", []),
    ]
    assert [r["offset"] for r in got] == [0, 1, 2, 3] and all(
        r["timestamp_type"] == "CreateTime" for r in got
    )

    # The same records as another client reads them: what produce sent is what is stored.
    consumer = KafkaConsumer(bootstrap_servers=cli.bootstrap, auto_offset_reset="earliest")
    tp = TopicPartition("pc-round", 0)
    consumer.assign([tp])
    records = consumer.poll(10_000, max_records=4)[tp]
    consumer.close()
    assert [(r.key, r.value, r.headers) for r in records][2] == (b"k3", b"v3", [("h1", b"x"), ("h2", b"y")])

    text = cli.ok(
        "consume", "pc-round", "--from-beginning", "--max-messages", "4",
        "--print-key", "--print-headers", "--print-partition", "--print-offset", "--separator", "|",
    ).splitlines()  # fmt: skip
    assert text == [
        "Partition:0|Offset:0|source:cli|k1|v1",
        "Partition:0|Offset:1|source:cli|k2|a:b",
        "Partition:0|Offset:2|h1:x,h2:y|k3|v3",
        "Partition:0|Offset:3|NO_HEADERS|null|no key here",
    ]
    stamped = cli.ok("consume", "pc-round", "--from-beginning", "--max-messages", "1", "--print-timestamp")
    assert stamped.startswith("CreateTime:") and stamped.endswith("\tv1\n")
    hexed = cli.ok("consume", "pc-round", "--from-beginning", "--max-messages", "1", "--value-format", "hex")
    assert hexed == "7631\n"


def test_partition_offset_and_timeout(cli: Cli) -> None:
    cli.ok("topics", "create", "pc-parts", "--partitions", "3")
    cli.ok("produce", "pc-parts", "--partition", "2", stdin="a\nb\nc\n")
    out = cli.ok("consume", "pc-parts", "--partition", "2", "--offset", "1", "--timeout-ms", "2000")
    assert out == "b\nc\n"
    nothing = cli("consume", "pc-parts", "--partition", "0", "--from-beginning", "--timeout-ms", "500")
    assert nothing.returncode == 0 and nothing.stdout == ""
    assert nothing.stderr == "Processed a total of 0 messages\n"


def test_bad_input_is_one_line(cli: Cli) -> None:
    no_sep = cli("produce", "pc-bad", "--key-separator", ":", stdin="no separator\n")
    assert no_sep.returncode == 1
    assert no_sep.stderr == "kafkito produce: line 1: no key separator ':' in 'no separator'\n"
    cli.ok("topics", "create", "pc-one", "--partitions", "1")
    no_partition = cli("consume", "pc-one", "--partition", "5")
    assert no_partition.returncode == 1
    assert no_partition.stderr == "kafkito consume: topic pc-one has no partition 5 (it has 1)\n"
    refused = kafkito("consume", "pc-one", "--bootstrap-server", "127.0.0.1:1")
    assert refused.returncode == 1 and refused.stderr.startswith(
        "kafkito consume: no broker at 127.0.0.1:1 ("
    )
    assert refused.stderr.count("\n") == 1
