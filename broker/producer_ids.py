"""Producer ids for idempotent producers: unique across restarts, handed out from persisted blocks."""

from __future__ import annotations

import os
from pathlib import Path

BLOCK = 1000


class ProducerIdManager:
    """Allocates producer ids; a block's end is fsynced before any id in it is handed out."""

    def __init__(self, data_dir: Path) -> None:
        self._path = data_dir / "producer-ids"
        start = int(self._path.read_text().strip() or 0) if self._path.exists() else 0
        self._next = start
        self._block_end = start

    def next_id(self) -> int:
        if self._next >= self._block_end:
            self._block_end = self._next + BLOCK
            tmp = self._path.with_suffix(".tmp")
            with open(tmp, "w") as f:
                f.write(str(self._block_end))
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self._path)
        pid = self._next
        self._next += 1
        return pid
