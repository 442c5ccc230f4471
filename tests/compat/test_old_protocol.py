"""Old protocol versions: each client pinned to a pre-0.11 broker's versions produces and consumes
through message format v0 or v1, and the broker stores the records as v2 batches, byte-identical."""

from __future__ import annotations

from tests.compat import reference as ref
from tests.compat.clients.base import Driver
from tests.compat.harness import run_for_clients
from tests.compat.matrix import Matrix
from tests.compat.naming import topic_for
from tests.compat.records import Rec, assert_exactly_once, by_partition
from tests.support.brokers import ProcessBroker

PARTITIONS = 3


def _by_value(record: tuple[int, bytes | None, bytes | None]) -> bytes:
    return record[2] or b""


def test_old_protocol_round_trip(matrix: Matrix, drivers: list[Driver], compat_broker: ProcessBroker) -> None:
    bootstrap = compat_broker.bootstrap

    def body(d: Driver) -> str | None:
        topic = topic_for("old", d)
        ref.create_topic(bootstrap, topic, PARTITIONS)
        sent = [
            Rec(i % PARTITIONS, None if i % 7 == 3 else b"k%d" % i, b"old-%d-" % i + b"x" * (i % 5))
            for i in range(30)
        ]
        got = d.old_protocol(bootstrap, topic, sent)
        assert_exactly_once(sent, got)
        for p, recs in by_partition(got).items():
            want = [(r.key, r.value) for r in by_partition(sent)[p]]
            assert [(g.key, g.value) for g in recs] == want, f"partition {p} read back out of order"
        stored = ref.read_all(bootstrap, topic, PARTITIONS)
        stored_records = sorted(((s.got.partition, s.got.key, s.got.value) for s in stored), key=_by_value)
        assert stored_records == sorted(((r.partition, r.key, r.value) for r in sent), key=_by_value)
        assert all(not s.got.headers for s in stored)
        return None

    run_for_clients(matrix, "old-protocol", drivers, body)
