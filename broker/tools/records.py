"""`kafkito records delete TOPIC --partition P --before OFFSET`: DeleteRecords, as
kafka-delete-records.sh does: each partition's log start moves up to OFFSET (-1: its high watermark),
and the new low watermark is printed."""

from __future__ import annotations

import argparse

from kafkito.broker.tools.connect import admin, kafka_errors
from kafkito.broker.tools.output import ToolError, emit

COLUMNS = ("TOPIC", "PARTITION", "LOW-WATERMARK")
HIGH_WATERMARK = -1  # DeleteRecords' offset for "every record below the high watermark"


def run_delete(args: argparse.Namespace) -> int:
    from kafka import TopicPartition

    try:
        before = int(args.before)
    except ValueError:
        before = -2
    if before < HIGH_WATERMARK:
        raise ToolError(f"--before {args.before!r} is not an offset: a number >= 0, or -1 for all records", 2)
    client = admin(args)
    with kafka_errors():
        partitions = client.describe_topics([args.topic])[0]
    if partitions["error_code"]:
        raise ToolError(f"no topic {args.topic}: `kafkito topics list` shows the topics")
    present = {p["partition_index"] for p in partitions["partitions"]}
    for partition in args.partition:
        if partition not in present:
            raise ToolError(f"topic {args.topic} has no partition {partition} (it has {len(present)})")
    wanted = {TopicPartition(args.topic, p): before for p in sorted(set(args.partition))}
    with kafka_errors():
        results = client.delete_records(wanted)
    rows = [(tp.topic, tp.partition, results[tp]["low_watermark"]) for tp in wanted]
    emit(COLUMNS, rows, args.json)
    return 0
