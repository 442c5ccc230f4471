"""Property: the bytes a CreateTime append writes are the request's batches stamped in a copy (offsets,
leader epoch), whatever the batches, requests and segment rolls; the in-memory index matches a reload's."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkito.broker.log.batch import split_batches
from kafkito.broker.log.config import LogConfig
from kafkito.broker.log.partition_log import PartitionLog
from kafkito.broker.log.stamp import stamp_batches

from .helpers import CODECS, Rec, batch

record = st.builds(
    Rec,
    key=st.one_of(st.none(), st.binary(max_size=8)),
    value=st.one_of(st.none(), st.binary(max_size=200)),
    timestamp=st.integers(min_value=0, max_value=2**41),
)
one_batch = st.tuples(st.lists(record, min_size=1, max_size=5), st.sampled_from(CODECS))
request = st.lists(one_batch, min_size=1, max_size=4)


def _stamped_copy(records: bytes, base: int, epoch: int) -> bytes:
    buf = bytearray(records)
    stamp_batches(buf, split_batches(buf), base, epoch, -1)
    return bytes(buf)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    requests=st.lists(request, min_size=1, max_size=8),
    epoch=st.integers(min_value=0, max_value=2**31 - 1),
    segment_bytes=st.sampled_from([600, 2000, 1 << 20]),
    interval=st.sampled_from([0, 100, 4096]),
)
def test_the_log_files_hold_the_stamped_batches(
    requests: list[list[tuple[list[Rec], int]]], epoch: int, segment_bytes: int, interval: int
) -> None:
    config = LogConfig(segment_bytes=segment_bytes, index_interval_bytes=interval)
    expected = b""
    with tempfile.TemporaryDirectory() as d:
        plog = PartitionLog(Path(d), config, time_ms=lambda: 2**42, leader_epoch=epoch)
        for batches in requests:
            records = b"".join(batch(recs, compression=codec) for recs, codec in batches)
            info = plog.append(records)
            expected += _stamped_copy(records, info.base_offset, epoch)
        files = sorted(Path(d).glob("*.log"))
        assert b"".join(f.read_bytes() for f in files) == expected
        live = [plog.batch_headers(o) for o in range(plog.log_end_offset)]
        reads = [plog.read(o, 1 << 20) for o in range(plog.log_end_offset)]
        plog.close()
        reloaded = PartitionLog(Path(d), config, time_ms=lambda: 2**42, leader_epoch=epoch)
        assert [reloaded.batch_headers(o) for o in range(reloaded.log_end_offset)] == live
        assert [reloaded.read(o, 1 << 20) for o in range(reloaded.log_end_offset)] == reads
        reloaded.close()
