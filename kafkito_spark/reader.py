"""Batch and streaming readers: plan one Spark partition per topic-partition range, read it in a task."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

import structlog
from confluent_kafka import KafkaException
from pyspark.sql.datasource import DataSourceReader, DataSourceStreamReader, InputPartition
from pyspark.sql.streaming.datasource import (
    ReadAllAvailable,
    ReadLimit,
    ReadMaxRows,
    SupportsTriggerAvailableNow,
)
from pyspark.sql.types import StructType

from kafkito_spark.client import KafkaView, RangeReader, commit_group_offsets, record_columns
from kafkito_spark.errors import KafkaDataLossError, KafkaOptionError
from kafkito_spark.offsets import (
    OffsetRange,
    Offsets,
    from_json,
    plan_ranges,
    rate_limit,
    resolve,
    to_json,
)
from kafkito_spark.options import ReadOptions

log = structlog.get_logger(__name__)

COMMIT_RETRY_AFTER_S = 60.0


def read_range(options: ReadOptions, schema: StructType, rng: OffsetRange | None) -> Iterator[Any]:
    """The records of one range as Arrow record batches of the source's schema."""
    if rng is None:  # Spark plans one `InputPartition(None)` when a batch read has no range
        return
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    arrow_schema = to_arrow_schema(schema, timezone="UTC")
    reader = RangeReader(
        options.client,
        rng,
        fail_on_data_loss=options.fail_on_data_loss,
        poll_timeout_ms=options.poll_timeout_ms,
    )
    for messages in reader.messages():
        cols = record_columns(messages, options.include_headers)
        arrays = [pa.array(cols[f.name], type=f.type) for f in arrow_schema]
        yield pa.RecordBatch.from_arrays(arrays, schema=arrow_schema)


class _Planner:
    """The driver-side half shared by both readers: a lazily created admin view of the cluster."""

    def __init__(self, options: ReadOptions, schema: StructType) -> None:
        self.options = options
        self.schema = schema
        self._view: KafkaView | None = None

    @property
    def view(self) -> KafkaView:
        if self._view is None:
            self._view = KafkaView(self.options.client)
        return self._view

    def __getstate__(self) -> dict[str, Any]:
        # Spark pickles readers to its workers; clients stay behind and are recreated there lazily.
        state = dict(self.__dict__)
        state["_view"] = None
        return state

    def _data_loss(self, message: str) -> None:
        if self.options.fail_on_data_loss:
            raise KafkaDataLossError(message)


class KafkaBatchReader(_Planner, DataSourceReader):
    """`spark.read`: the records between `startingOffsets` and `endingOffsets` at planning time."""

    def partitions(self) -> Sequence[InputPartition]:
        view = self.view
        tps = view.partitions(self.options.subscription)
        earliest, latest = view.earliest(tps), view.latest(tps)
        start = resolve(self.options.starting, tps, earliest, latest, "startingOffsets")
        end = resolve(self.options.ending, tps, earliest, latest, "endingOffsets")
        for tp, offset in start.items():
            if end[tp] < offset:
                raise KafkaOptionError(
                    f"ending offset {end[tp]} of {tp[0]}-{tp[1]} is before its starting offset {offset}"
                )
        return [InputPartition(rng) for rng in plan_ranges(start, end)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        return read_range(self.options, self.schema, partition.value)


class KafkaStreamReader(_Planner, DataSourceStreamReader, SupportsTriggerAvailableNow):
    """`spark.readStream`: micro-batches of offset ranges, `maxOffsetsPerTrigger` and availableNow."""

    def __init__(self, options: ReadOptions, schema: StructType) -> None:
        super().__init__(options, schema)
        self._target: Offsets | None = None  # availableNow: the latest offsets when the query began
        self._latest: Offsets | None = None
        self._committed: Offsets | None = None
        self._commit_retry_at = 0.0

    def initialOffset(self) -> dict[str, dict[str, int]]:
        view = self.view
        tps = view.partitions(self.options.subscription)
        start = resolve(self.options.starting, tps, view.earliest(tps), view.latest(tps), "startingOffsets")
        return to_json(start)

    def getDefaultReadLimit(self) -> ReadLimit:
        limit = self.options.max_offsets_per_trigger
        return ReadAllAvailable() if limit is None else ReadMaxRows(limit)

    def prepareForTriggerAvailableNow(self) -> None:
        view = self.view
        self._target = view.latest(view.partitions(self.options.subscription))

    def latestOffset(self, start: dict[str, Any], limit: ReadLimit) -> dict[str, dict[str, int]]:
        begin = from_json(start)
        # Spark asks from where the last batch ended once that batch is done: the only call after
        # the final batch of an availableNow run, for which `commit` never comes.
        self._commit_group(begin)
        view = self.view
        if self._target is not None:
            latest = dict(self._target)
        else:
            latest = view.latest(view.partitions(self.options.subscription))
        self._latest = latest
        gone = sorted(set(begin) - set(latest))
        if gone:
            self._data_loss(f"partitions {gone} are gone")
        new = sorted(set(latest) - set(begin))
        begin.update(view.earliest(new))
        begin = {tp: begin[tp] for tp in latest}
        end = rate_limit(begin, latest, limit.max_rows) if isinstance(limit, ReadMaxRows) else latest
        return to_json(end)

    def reportLatestOffset(self) -> dict[str, dict[str, int]] | None:
        return None if self._latest is None else to_json(self._latest)

    def partitions(self, start: dict[str, Any], end: dict[str, Any]) -> Sequence[InputPartition]:
        begin, until = from_json(start), from_json(end)
        new = sorted(set(until) - set(begin))
        if new:
            begin.update(self.view.earliest(new))
        for tp, offset in until.items():
            if offset < begin[tp]:
                # The partition restarted below where the query was (topic deleted and recreated).
                self._data_loss(f"{tp[0]}-{tp[1]} went back from offset {begin[tp]} to {offset}")
                begin[tp] = offset
        return [InputPartition(rng) for rng in plan_ranges(begin, until)]

    def read(self, partition: InputPartition) -> Iterator[Any]:
        return read_range(self.options, self.schema, partition.value)

    def commit(self, end: dict[str, Any]) -> None:
        self._commit_group(from_json(end))

    def _commit_group(self, offsets: Offsets) -> None:
        """Publish progress to `kafka.group.id` for lag tools; Spark resumes from its checkpoint."""
        if not self.options.group_id or not offsets or offsets == self._committed:
            return
        if time.monotonic() < self._commit_retry_at:
            return
        try:
            commit_group_offsets(self.options.client, self.options.group_id, offsets)
        except KafkaException as exc:
            # Only monitoring depends on it: warn, keep the query running, retry a while later.
            log.warning(
                "group_commit_failed",
                group_id=self.options.group_id,
                error=str(exc),
                retry_in_s=COMMIT_RETRY_AFTER_S,
            )
            self._commit_retry_at = time.monotonic() + COMMIT_RETRY_AFTER_S
            return
        self._committed = dict(offsets)

    def stop(self) -> None:
        self._view = None
