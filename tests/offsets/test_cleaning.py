"""The background cleaner compacts `__consumer_offsets` (first) and other compacted topics off the loop."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from structlog.testing import capture_logs

from kafkito.broker.coordinator import TopicPartition
from kafkito.broker.offsets import OFFSETS_TOPIC
from kafkito.broker.offsets.batches import build_batch
from kafkito.broker.offsets.cleaning import BackgroundCleaner
from tests.offsets.harness import WALL_EPOCH, OffsetsHarness
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient


async def test_a_pass_compacts_offsets_first_then_other_compacted_topics(tmp_path: Path) -> None:
    o = OffsetsHarness(tmp_path, partitions=1)
    for i in range(100):
        o.h.commit(f"g{i % 4}", {TopicPartition("t", 0): i})
    o.logs.create_topic("a-table", 1, 1, {"cleanup.policy": "compact"})
    o.logs.create_topic("plain", 1, 1)
    table = o.logs.get_log("a-table", 0)
    for i in range(50):
        table.append(build_batch([(f"k{i % 5}".encode(), b"v")], WALL_EPOCH))
    o.logs.get_log("plain", 0).append(build_batch([(b"k", b"v")] * 3, WALL_EPOCH))
    for plog in o.logs.logs():
        plog.roll()
    cleaner = BackgroundCleaner(o.logs, o.wall)
    with capture_logs() as events:
        assert await cleaner.run_pass() == 2
    compacted = [
        (e["topic"], e["records_before"], e["records_after"]) for e in events if e["event"] == "log.compacted"
    ]
    assert compacted == [(OFFSETS_TOPIC, 100, 4), ("a-table", 50, 5)]
    # Nothing new is dirty: the next pass has nothing to do, and the groups reload the same.
    assert await cleaner.run_pass() == 0
    r = o.restart()
    assert {g.group_id: g.offsets[TopicPartition("t", 0)].offset for g in r.coordinator.groups()} == {
        "g0": 96,
        "g1": 97,
        "g2": 98,
        "g3": 99,
    }


def test_a_running_broker_compacts_its_offsets_log(
    broker_factory: Callable[..., ThreadBroker], tmp_path: Path
) -> None:
    data = tmp_path / "compacting"
    broker = broker_factory(data, offsets_topic_segment_bytes=2_000, log_cleaner_backoff_ms=50)
    assert broker.broker is not None
    offsets = broker.broker.offsets
    with WireClient(broker.bootstrap) as client:
        client.request(3, 4, topics=[dict(name="t")], allow_auto_topic_creation=True)
        for i in range(300):
            response = client.request(
                8,
                8,
                group_id="busy",
                generation_id_or_member_epoch=-1,
                member_id="",
                group_instance_id=None,
                topics=[
                    dict(
                        name="t",
                        partitions=[dict(partition_index=0, committed_offset=i, committed_metadata="")],
                    )
                ],
            )
            assert response.topics[0].partitions[0].error_code == 0
    # The commits created the topic (on first use, as in Kafka).
    plog = broker.broker.logs.get_log(OFFSETS_TOPIC, offsets.sink.partition_for("busy"))
    deadline = time.monotonic() + 30
    while broker.call(lambda: plog.cleaner_offset) == 0:
        assert time.monotonic() < deadline, "the offsets log was never compacted"
        time.sleep(0.05)
    assert broker.call(lambda: sum(h.record_count for h in plog.batch_headers())) < 300
    broker.stop()
    again = broker_factory(data)
    assert again.broker is not None
    group = again.call(lambda: again.broker.coordinator.get_group("busy"))  # type: ignore[union-attr]
    assert group.offsets[TopicPartition("t", 0)].offset == 299
