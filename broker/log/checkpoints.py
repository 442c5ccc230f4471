"""Files beside a partition's segments: one offset each (replaced atomically), the clean-shutdown marker.

Kafka keeps these offsets in one checkpoint file per log dir (`log-start-offset-checkpoint`,
`cleaner-offset-checkpoint`, `recovery-point-offset-checkpoint`); kafkito keeps one small file per
partition, so a change costs O(1) and a deleted partition takes its offsets with it.
"""

from __future__ import annotations

import os
from collections.abc import Collection
from pathlib import Path

CLEAN_SHUTDOWN_FILE = ".clean-shutdown"
LOG_START_OFFSET_FILE = "log-start-offset"
CLEANER_OFFSET_FILE = "cleaner-offset"
RECOVERY_POINT_FILE = "recovery-point"


def read_offset(directory: Path, name: str, listing: Collection[str] | None = None) -> int | None:
    """The offset in `directory/name`, or None if the file is missing or unreadable (torn).

    `listing`, the directory's file names when the caller has them, spares opening a missing file."""
    if listing is not None and name not in listing:
        return None
    try:
        return int((directory / name).read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


def write_offset(directory: Path, name: str, offset: int) -> None:
    """Replace `directory/name` with `offset`: a crash leaves the old value or the new one."""
    path = directory / name
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(f"{offset}\n")
    os.replace(tmp, path)
