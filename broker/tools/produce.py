"""`kafkito produce TOPIC`: one record per line of stdin, as kafka-console-producer.sh sends them.

`--key-separator SEP` reads `key SEP value` (Kafka's parse.key with key.separator); `--header K=V`
adds a header to every record; `--parse-headers` reads `k1:v1,k2:v2` and a tab before each line's
key and value (Kafka's parse.headers with its default delimiters).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TextIO

from kafkito.broker.tools.connect import kafka_errors, producer
from kafkito.broker.tools.output import ToolError

METADATA_WAIT_MS = 10_000  # max.block.ms: a topic that does not appear in this time does not exist
HEADERS_DELIMITER = "\t"
HEADERS_SEPARATOR = ","
HEADER_KEY_SEPARATOR = ":"


@dataclass(slots=True)
class Line:
    """One record to send, read from one line."""

    value: bytes
    key: bytes | None = None
    headers: list[tuple[str, bytes]] = field(default_factory=list)


def parse_header(text: str, sep: str, where: str) -> tuple[str, bytes]:
    name, found, value = text.partition(sep)
    if not found or not name:
        raise ToolError(f"{where}: header {text!r} is not NAME{sep}VALUE", 2)
    return name, value.encode()


def parse_line(text: str, lineno: int, args: argparse.Namespace) -> Line:
    headers = [parse_header(h, "=", "--header") for h in args.header]
    if args.parse_headers:
        head, found, text = text.partition(HEADERS_DELIMITER)
        if not found:
            raise ToolError(f"line {lineno}: no tab after the headers (expected k1:v1,k2:v2<TAB>...)")
        headers += [
            parse_header(h, HEADER_KEY_SEPARATOR, f"line {lineno}")
            for h in head.split(HEADERS_SEPARATOR)
            if h
        ]
    if args.key_separator is None:
        return Line(text.encode(), None, headers)
    key, found, value = text.partition(args.key_separator)
    if not found:
        raise ToolError(f"line {lineno}: no key separator {args.key_separator!r} in {text!r}")
    return Line(value.encode(), key.encode(), headers)


def read_lines(source: TextIO, args: argparse.Namespace) -> Iterable[Line]:
    for lineno, raw in enumerate(source, 1):
        text = raw.rstrip("\n").rstrip("\r")
        if text or not args.skip_empty:
            yield parse_line(text, lineno, args)


@contextmanager
def _no_topic_hint(topic: str) -> Iterator[None]:
    """The client waits for the topic's metadata until max.block.ms: say why it never came."""
    from kafka.errors import KafkaTimeoutError

    try:
        yield
    except KafkaTimeoutError as exc:
        if "metadata" not in str(exc):
            raise
        raise ToolError(
            f"topic {topic} is not available after {METADATA_WAIT_MS // 1000} s (the broker does not create "
            f"it on use?): create it with `kafkito topics create {topic}`"
        ) from None


def _check_partition(client: Any, topic: str, partition: int) -> None:
    """`--partition N` names one of the topic's partitions (the client would raise at the first send)."""
    partitions = client.partitions_for(topic)  # waits for the topic's metadata, up to max.block.ms
    if partition not in partitions:
        raise ToolError(f"topic {topic} has no partition {partition} (it has {len(partitions)})")


def run(args: argparse.Namespace, source: TextIO | None = None) -> int:
    acks = args.acks if args.acks == "all" else int(args.acks)
    if args.partition is not None and args.partition < 0:
        raise ToolError(f"--partition {args.partition} is not a partition: use a number >= 0", 2)
    client = producer(args, acks=acks, linger_ms=5, max_block_ms=METADATA_WAIT_MS)
    sent = 0
    try:
        with kafka_errors(), _no_topic_hint(args.topic):
            if args.partition is not None:
                _check_partition(client, args.topic, args.partition)
            futures = [
                client.send(
                    args.topic, value=line.value, key=line.key, headers=line.headers, partition=args.partition
                )
                for line in read_lines(source or sys.stdin, args)
            ]
            client.flush()
            for future in futures:
                future.get(timeout=30)
                sent += 1
    finally:
        client.close(timeout=5)
    if not args.quiet:
        print(f"Produced {sent} record{'s' if sent != 1 else ''} to {args.topic}.", file=sys.stderr)
    return 0
