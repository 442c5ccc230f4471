"""`kafkito consume TOPIC`: records printed as kafka-console-consumer.sh prints them, or as JSON lines.

Without --group the partitions are assigned (no group is created or committed); with --group the
consumer joins it and commits what it printed. `--offset @TIME` starts each partition at its first
record at or after TIME (ListOffsets by timestamp); `--format` prints as kcat's `-f` does. It stops
after --max-messages, after --timeout-ms without a record, or on Ctrl-C or SIGTERM (leaving its group),
and says how many it processed, as Kafka's tool does.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import json
import signal
import sys
from dataclasses import dataclass
from datetime import datetime
from typing import Any, TextIO

from kafkito.broker.tools.connect import consumer, kafka_errors
from kafkito.broker.tools.output import ToolError

TIMESTAMP_TYPES = {0: "CreateTime", 1: "LogAppendTime"}
# --offset's words, as kafka-console-consumer.sh takes them, and ListOffsets' -2 and -1 for them.
EARLIEST, LATEST = "earliest", "latest"
OFFSET_WORDS = {EARLIEST: EARLIEST, LATEST: LATEST, "-2": EARLIEST, "-1": LATEST}


@dataclass(frozen=True, slots=True)
class AtTime:
    """`--offset @TIME`: each partition's first record at or after `ms` (epoch milliseconds)."""

    ms: int


def parse_time(text: str) -> int:
    """Epoch ms of `@TIME`: epoch milliseconds, or ISO 8601 (`2026-01-31T12:00:00.000Z`; local time
    without a zone)."""
    if text.isdigit():
        return int(text)
    try:
        return int(datetime.fromisoformat(text).timestamp() * 1000)
    except ValueError:
        raise ToolError(
            f"--offset @{text}: not a time: epoch milliseconds or ISO 8601 (e.g. @2026-01-31T12:00:00Z)", 2
        ) from None


def parse_offset(text: str) -> int | str | AtTime:
    """`--offset`: an offset (>= 0), EARLIEST / LATEST for `earliest`, `latest`, -2 and -1, or
    `@TIME`."""
    if text.strip().startswith("@"):
        return AtTime(parse_time(text.strip()[1:]))
    word = OFFSET_WORDS.get(text.strip().lower())
    if word is not None:
        return word
    try:
        offset = int(text)
    except ValueError:
        offset = -3
    if offset < 0:
        raise ToolError(f"--offset {text!r} is not an offset: a number >= 0, earliest (-2) or latest (-1)", 2)
    return offset


def decode(data: bytes | None, fmt: str) -> str | None:
    if data is None:
        return None
    if fmt == "hex":
        return data.hex()
    if fmt == "base64":
        return base64.b64encode(data).decode()
    return data.decode("utf-8", errors="replace")


def format_record(record: Any, args: argparse.Namespace) -> str:
    """Kafka's DefaultMessageFormatter order: timestamp, partition, offset, headers, key, value."""
    if getattr(args, "render", None) is not None:
        rendered: str = args.render(record)
        return rendered
    key = decode(record.key, args.key_format)
    value = decode(record.value, args.value_format)
    headers = [(k, decode(v, args.value_format)) for k, v in record.headers or []]
    if args.json:
        return json.dumps(
            {
                "topic": record.topic,
                "partition": record.partition,
                "offset": record.offset,
                "timestamp": record.timestamp,
                "timestamp_type": TIMESTAMP_TYPES.get(record.timestamp_type, "NoTimestampType"),
                "key": key,
                "value": value,
                "headers": [[k, v] for k, v in headers],
            }
        )
    parts = []
    if args.print_timestamp:
        parts.append(f"{TIMESTAMP_TYPES.get(record.timestamp_type, 'NoTimestampType')}:{record.timestamp}")
    if args.print_partition:
        parts.append(f"Partition:{record.partition}")
    if args.print_offset:
        parts.append(f"Offset:{record.offset}")
    if args.print_headers:
        parts.append(",".join(f"{k}:{'null' if v is None else v}" for k, v in headers) or "NO_HEADERS")
    if args.print_key:
        parts.append("null" if key is None else key)
    parts.append("null" if value is None else value)
    separator: str = args.separator
    return separator.join(parts)


def _consumer(args: argparse.Namespace) -> Any:
    if args.offset is not None:
        args.offset = parse_offset(args.offset)
    options: dict[str, Any] = {
        "auto_offset_reset": "earliest" if args.from_beginning or args.offset == EARLIEST else "latest",
        "consumer_timeout_ms": args.timeout_ms if args.timeout_ms is not None else float("inf"),
    }
    if args.group:
        options.update(group_id=args.group, enable_auto_commit=True)
    else:
        options.update(group_id=None, enable_auto_commit=False)
    client = consumer(args, **options)
    with kafka_errors():
        if args.group and args.partition is None and args.offset is None:
            client.subscribe([args.topic])
            return client
        _assign(client, args)
    return client


def _assign(client: Any, args: argparse.Namespace) -> None:
    from kafka import TopicPartition

    partitions = client.partitions_for_topic(args.topic)
    if not partitions:
        raise ToolError(f"no topic {args.topic}: `kafkito topics list` shows the topics")
    if args.partition is not None and args.partition not in partitions:
        raise ToolError(f"topic {args.topic} has no partition {args.partition} (it has {len(partitions)})")
    chosen = [TopicPartition(args.topic, p) for p in sorted(partitions) if args.partition in (None, p)]
    client.assign(chosen)
    if isinstance(args.offset, AtTime):
        _seek_to_time(client, chosen, args.offset.ms)
    elif isinstance(args.offset, int):
        for tp in chosen:
            client.seek(tp, args.offset)
    elif args.offset == EARLIEST or (args.offset is None and args.from_beginning):
        client.seek_to_beginning(*chosen)
    else:
        client.seek_to_end(*chosen)


def _seek_to_time(client: Any, chosen: list[Any], ms: int) -> None:
    """Each partition at its first record stamped at or after `ms`; at its end when there is none."""
    found = client.offsets_for_times(dict.fromkeys(chosen, ms))
    after = [tp for tp in chosen if found.get(tp) is None]
    for tp in chosen:
        if found.get(tp) is not None:
            client.seek(tp, found[tp].offset)
    if after:
        client.seek_to_end(*after)


class Terminated(Exception):
    """SIGTERM: stop as Ctrl-C stops (commit, leave the group, print the summary)."""


class _OnSigterm:
    """Raises Terminated in the main thread, though never between printing a record and counting it:
    a signal that arrives then is held until the record is counted."""

    def __init__(self) -> None:
        self.printing = False
        self.pending = False

    def __call__(self, signum: int, frame: Any) -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)  # a second one ends the process at once
        if self.printing:
            self.pending = True
        else:
            raise Terminated

    def printed(self) -> None:
        self.printing = False
        if self.pending:
            raise Terminated


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from kafkito.broker.tools.record_format import compile_format

    args.render = compile_format(args.format) if args.format is not None else None
    client = _consumer(args)
    count = 0
    end = "" if args.render is not None else "\n"
    on_sigterm = _OnSigterm()
    previous = signal.signal(signal.SIGTERM, on_sigterm)
    try:
        with kafka_errors():
            for record in client:
                on_sigterm.printing = True
                print(format_record(record, args), file=out, end=end, flush=True)
                count += 1
                on_sigterm.printed()
                if args.max_messages is not None and count >= args.max_messages:
                    break
    except (KeyboardInterrupt, Terminated):
        pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        if args.group:
            # Nothing consumed, or the group moved on: the printed records stay printed.
            with contextlib.suppress(Exception):
                client.commit()
        client.close()
    print(f"Processed a total of {count} messages", file=sys.stderr)
    return 0
