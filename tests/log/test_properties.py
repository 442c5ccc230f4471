"""Property: whatever is appended (any codec, sizes, segment sizes, reopenings) reads back the same."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafkito.broker.log.batch import iter_headers
from kafkito.broker.log.config import LogConfig
from kafkito.broker.log.partition_log import PartitionLog

from .helpers import CODECS, Rec, batch, decode

record = st.builds(
    Rec,
    key=st.one_of(st.none(), st.binary(max_size=8)),
    value=st.one_of(st.none(), st.binary(max_size=300)),
    timestamp=st.integers(min_value=0, max_value=2**41),
    headers=st.lists(st.tuples(st.text(max_size=4), st.binary(max_size=4)), max_size=2).map(tuple),
)
append_op = st.tuples(st.just("append"), st.lists(record, min_size=1, max_size=6), st.sampled_from(CODECS))
read_op = st.tuples(st.just("read"), st.integers(min_value=0, max_value=10_000), st.integers(1, 3000))
reopen_op = st.tuples(st.just("reopen"), st.booleans())
ops = st.lists(st.one_of(append_op, append_op, read_op, reopen_op), min_size=1, max_size=25)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=ops, segment_bytes=st.sampled_from([400, 1500, 1 << 20]), interval=st.sampled_from([0, 100, 4096]))
def test_append_read_reopen_matches_a_model(
    ops: list[tuple[object, ...]], segment_bytes: int, interval: int
) -> None:
    config = LogConfig(segment_bytes=segment_bytes, index_interval_bytes=interval)
    model: list[Rec] = []
    with tempfile.TemporaryDirectory() as d:
        plog = PartitionLog(Path(d), config, time_ms=lambda: 2**42)
        for op in ops:
            if op[0] == "append":
                recs, codec = op[1], op[2]
                assert isinstance(recs, list) and isinstance(codec, int)
                raw = batch(recs, compression=codec)
                if len(raw) > segment_bytes:
                    continue
                info = plog.append(raw)
                assert info.base_offset == len(model)
                model.extend(recs)
            elif op[0] == "read":
                offset, max_bytes = op[1], op[2]
                assert isinstance(offset, int) and isinstance(max_bytes, int)
                if not model:
                    continue
                offset %= len(model)
                data = plog.read(offset, max_bytes)
                sizes = [h.size for _, h in iter_headers(data)]
                assert sum(sizes) == len(data) and sizes
                assert len(sizes) == 1 or len(data) <= max_bytes
                got = decode(data)
                assert got[0][0] <= offset <= got[-1][0]
                for o, r in got:
                    assert r == model[o]
            else:
                if op[1]:
                    plog.close()
                plog = PartitionLog(Path(d), config, time_ms=lambda: 2**42)
                assert plog.log_end_offset == len(model)
        offset = 0
        while offset < len(model):
            got = decode(plog.read(offset, 5000))
            for o, r in got:
                assert r == model[o]
            offset = got[-1][0] + 1
        plog.close()
