"""`kafkito offsets dump`: raw records of `__consumer_offsets` (one JSON line each), or with --latest
where each group stands: the last committed offset per group and partition, read from the data dir.

Transactional commits count once their COMMIT marker is read (an ABORT drops them), and a tombstone
removes an offset, as the broker's own loading does.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from kafkito.broker.tools.output import ToolError, emit

COLUMNS = ("GROUP", "TOPIC", "PARTITION", "OFFSET", "METADATA", "COMMITTED-AT")
Slot = tuple[str, str, int]  # group, topic, partition


def is_data_dir(path: Path) -> bool:
    """A kafkito (or Kafka) data dir: meta.properties, a metadata log or `__consumer_offsets` in it."""
    if not path.is_dir():
        return False
    if (path / "meta.properties").is_file() or (path / "topics.json").is_file():
        return True
    return any(path.glob("metadata-*")) or any(path.glob("__consumer_offsets-*"))


def check_data_dir(data_dir: Path) -> None:
    """Refuse, in one line, a path that is not a broker's data dir."""
    if not data_dir.exists():
        raise ToolError(f"{data_dir} does not exist: pass the broker's data dir with --data-dir (log.dirs)")
    if not is_data_dir(data_dir):
        raise ToolError(
            f"{data_dir} is not a kafkito data dir (no meta.properties, no __consumer_offsets): "
            "pass the broker's --data-dir (log.dirs)"
        )


class LatestOffsets:
    """Folds dumped records, oldest first, into the last committed offset of each group and partition."""

    def __init__(self) -> None:
        self.offsets: dict[Slot, dict[str, Any]] = {}
        self.groups: set[str] = set()
        self._pending: dict[tuple[int, int], dict[Slot, dict[str, Any] | None]] = {}  # (partition, pid)

    def add(self, line: dict[str, Any]) -> None:
        key = line["key"]
        if key.get("type") == "txn_marker":
            pending = self._pending.pop((line["partition"], line["value"]["producer_id"]), {})
            if key["result"] == "COMMIT":
                for slot, value in pending.items():
                    self._apply(slot, value)
            return
        if "group" in key:
            self.groups.add(key["group"])
        if key.get("type") != "offset":
            return
        slot = (key["group"], key["topic"], key["partition"])
        if "producer_id" in line:
            self._pending.setdefault((line["partition"], line["producer_id"]), {})[slot] = line["value"]
        else:
            self._apply(slot, line["value"])

    def _apply(self, slot: Slot, value: dict[str, Any] | None) -> None:
        if value is None:
            self.offsets.pop(slot, None)
        else:
            self.offsets[slot] = value

    def rows(self) -> list[tuple[Any, ...]]:
        return [
            (g, t, p, v["offset"], v["metadata"], _iso(v["commit_timestamp"]))
            for (g, t, p), v in sorted(self.offsets.items())
        ]


def _iso(ms: int | None) -> str | None:
    if ms is None or ms < 0:
        return None
    return datetime.fromtimestamp(ms / 1000, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def run(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from kafkito.broker.offsets.dump import dump, records

    data_dir = Path(args.data_dir)
    check_data_dir(data_dir)
    if not args.latest:
        if dump(data_dir, out or sys.stdout, args.group) == 0 and args.group is not None:
            raise ToolError(_unknown_group(args.group, data_dir))
        return 0
    latest = LatestOffsets()
    for line in records(data_dir, args.group):
        latest.add(line)
    if args.group is not None and args.group not in latest.groups:
        raise ToolError(_unknown_group(args.group, data_dir))
    emit(COLUMNS, latest.rows(), args.json, out)
    return 0


def _unknown_group(group: str, data_dir: Path) -> str:
    listing = f"kafkito offsets dump --latest --data-dir {data_dir}"
    return f"no group '{group}' in {data_dir}: `{listing}` lists the groups"
