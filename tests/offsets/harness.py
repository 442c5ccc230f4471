"""A coordinator whose record sink is the real `__consumer_offsets` log, in virtual time, that can restart."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kafkito.broker.coordinator import CoordinatorConfig, GroupCoordinator
from kafkito.broker.log.manager import LogManager
from kafkito.broker.offsets import OFFSETS_TOPIC, OffsetsConfig, OffsetsManager
from kafkito.broker.offsets.batches import batch_records, iter_batches
from kafkito.broker.offsets.consumer_records import ConsumerGroupKey, decode_consumer_value
from kafkito.broker.offsets.records import decode_group_value, decode_key, decode_offset_value
from tests.coordinator.harness import Harness

WALL_EPOCH = 1_700_000_000_000
RETENTION_MS = 7 * 24 * 3_600_000


class OffsetsHarness:
    """`h` is a coordinator Harness (join/sync/commit shorthands) writing through an OffsetsManager.

    The ManualClock tells epoch milliseconds, as a broker's clock does: it starts at `wall_start`,
    and a restart starts a new clock where the old one left off (plus a gap).
    """

    def __init__(
        self,
        data_dir: Path,
        *,
        partitions: int = 5,
        retention_ms: int = RETENTION_MS,
        wall_start: int = WALL_EPOCH,
        coordinator: CoordinatorConfig | None = None,
        log_props: dict[str, Any] | None = None,
        load: bool = True,
        chunk: int = 5_000,
        inline_bytes: int = 0,
    ) -> None:
        self.data_dir = data_dir
        self.wall_start = wall_start
        self.options = dict(
            partitions=partitions,
            retention_ms=retention_ms,
            coordinator=coordinator,
            log_props=log_props,
            chunk=chunk,
            inline_bytes=inline_bytes,
        )
        self.h = Harness(config=coordinator or CoordinatorConfig(), start_ms=wall_start)
        self.logs = LogManager(data_dir, dict(log_props or {}), time_ms=self.wall)
        self.manager = OffsetsManager(
            self.logs,
            OffsetsConfig(
                num_partitions=partitions,
                retention_ms=retention_ms,
                load_chunk_records=chunk,
                load_inline_bytes=inline_bytes,
            ),
            self.h.clock,
        )
        self.manager.ensure_topic()  # the broker creates it on first use; tests write to it directly
        self.h.sink = self.manager.sink  # type: ignore[assignment]
        self.h.coordinator = GroupCoordinator(self.h.config, self.h.clock, self.h.timer, self.manager.sink)
        self.coordinator = self.h.coordinator
        if load:
            self.manager.load_now(self.coordinator)

    def wall(self) -> int:
        return self.h.clock.now_ms()

    def restart(self, *, crash: bool = False, gap_ms: int = 1_000, **overrides: Any) -> OffsetsHarness:
        """A new broker on the same directory (`crash`: without closing the logs first)."""
        if not crash:
            self.logs.close()
        options = {**self.options, **overrides}
        return OffsetsHarness(self.data_dir, wall_start=self.wall() + gap_ms, **options)

    def partition_of(self, group: str) -> int:
        return self.manager.sink.partition_for(group)

    def records(self, group: str) -> list[tuple[Any, Any]]:
        """Every (key, value) in the group's offsets partition, decoded; value None for tombstones."""
        plog = self.logs.get_log(OFFSETS_TOPIC, self.partition_of(group))
        out: list[tuple[Any, Any]] = []
        position = plog.log_start_offset
        while position < plog.log_end_offset:
            chunk = plog.read(position, 1 << 20)
            if not chunk:
                break  # the rest was compacted away
            for header, batch in iter_batches(chunk):
                position = header.next_offset
                for r in batch_records(batch, header):
                    assert r.key is not None
                    key = decode_key(r.key)
                    value: Any = r.value
                    if value is not None and isinstance(key, ConsumerGroupKey):
                        value = decode_consumer_value(key.record_type, value)
                    elif value is not None:
                        kind = type(key).__name__
                        value = (
                            decode_offset_value(value) if kind == "OffsetKey" else decode_group_value(value)
                        )
                    out.append((key, value))
        return out

    def close(self) -> None:
        self.logs.close()
