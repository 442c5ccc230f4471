"""The message browser: records of one partition from an offset or a time, decoded for reading.

Values (and keys) are shown as text when they are UTF-8, as pretty-printed JSON when they parse as
JSON, and always available as hex. Control records (transaction markers) are left out.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from kafkito.broker.console.topics import check_partition

if TYPE_CHECKING:
    from kafkito.broker.app import Broker

MAX_LIMIT = 500
READ_BYTES = 1 << 20  # one read per page: enough for `limit` records of ordinary size
FORMATS = ("auto", "text", "json", "hex")


def render(data: bytes | None, fmt: str = "auto") -> dict[str, Any] | None:
    """A key or value as `{"text"|"json"|..., "hex", "size"}`; `shown` is what the page displays."""
    if data is None:
        return None
    out: dict[str, Any] = {
        "size": len(data),
        "hex": data.hex(" ") if len(data) <= 4096 else data[:4096].hex(" ") + " …",
    }
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = None
    out["text"] = text
    pretty = None
    if text is not None and text[:1] in '{["0123456789-tfn' and text:
        try:
            pretty = json.dumps(json.loads(text), indent=2, ensure_ascii=False)
        except ValueError:
            pretty = None
    out["json"] = pretty
    if fmt == "hex" or (fmt == "auto" and text is None) or (fmt == "text" and text is None):
        out["shown"], out["format"] = out["hex"], "hex"
    elif fmt in ("json", "auto") and pretty is not None:
        out["shown"], out["format"] = pretty, "json"
    elif fmt == "json" and pretty is None:
        out["shown"], out["format"] = text, "text"
    else:
        out["shown"], out["format"] = text, "text"
    return out


def _start_offset(broker: Broker, topic: str, partition: int, offset: int | None, time_ms: int | None) -> int:
    log = broker.logs.get_log(topic, partition)
    if time_ms is not None:
        found = log.offset_for_timestamp(time_ms)
        return log.high_watermark if found is None else found.offset
    if offset is None or offset < 0:
        return log.log_start_offset
    return max(offset, log.log_start_offset)


def records_between(log: Any, start: int, end: int) -> Iterator[Any]:
    """The records (kafka-python's, transaction markers left out) of `log` from `start` below `end`."""
    from kafka.record import MemoryRecords

    position = start
    while position < end:
        raw = log.read(position, READ_BYTES, end)
        if not raw:
            return
        batches = MemoryRecords(bytes(raw))
        next_position = position
        while (batch := batches.next_batch()) is not None:
            control = getattr(batch, "is_control_batch", False)
            for record in batch:
                next_position = max(next_position, record.offset + 1)
                if control or record.offset < start or record.offset >= end:
                    continue
                yield record
            next_position = max(next_position, getattr(batch, "next_offset", next_position))
        if next_position <= position:
            return
        position = next_position


def browse(
    broker: Broker,
    topic: str,
    partition: int,
    *,
    offset: int | None = None,
    time_ms: int | None = None,
    limit: int = 50,
    fmt: str = "auto",
) -> dict[str, Any]:
    """Up to `limit` records from `offset` (or the first at or after `time_ms`), below the high watermark."""
    check_partition(broker, topic, partition)
    limit = max(1, min(limit, MAX_LIMIT))
    log = broker.logs.get_log(topic, partition)
    start = _start_offset(broker, topic, partition, offset, time_ms)
    end = log.high_watermark
    records = [record_view(r, fmt) for r in itertools.islice(records_between(log, start, end), limit)]
    return {
        "topic": topic,
        "partition": partition,
        "start_offset": start,
        "log_start_offset": log.log_start_offset,
        "high_watermark": end,
        "next_offset": records[-1]["offset"] + 1 if records else start,
        "records": records,
    }


def record_view(record: Any, fmt: str) -> dict[str, Any]:
    headers = [
        {"key": key, "value": render(None if value is None else bytes(value), "auto")}
        for key, value in (record.headers or ())
    ]
    key = None if record.key is None else bytes(record.key)
    value = None if record.value is None else bytes(record.value)
    return {
        "offset": record.offset,
        "timestamp": record.timestamp,
        "key": render(key, "auto" if fmt == "json" else fmt),
        "value": render(value, fmt),
        "headers": headers,
    }
