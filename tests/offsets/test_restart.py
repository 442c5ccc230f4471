"""A broker process with a long `__consumer_offsets` history keeps serving while it replays it."""

from __future__ import annotations

from pathlib import Path

from kafkito.broker.offsets import OFFSETS_TOPIC, partition_for
from kafkito.broker.offsets.batches import build_batch
from kafkito.broker.offsets.records import OffsetValue, encode_offset_key, encode_offset_value
from kafkito.protocol.errors import ErrorCode
from tests.offsets.harness import WALL_EPOCH, OffsetsHarness
from tests.support.brokers import ProcessBroker
from tests.support.wire import WireClient

API_VERSIONS, METADATA, FETCH = 18, 3, 9
RECORDS = 200_000
BATCH = 20


def history(data_dir: Path) -> str:
    """RECORDS commit records spread over every partition; returns a group of the last partition."""
    o = OffsetsHarness(data_dir, partitions=50)
    groups = [f"history-{i}" for i in range(1_000)]
    probe = next(g for g in groups if partition_for(g, 50) == 49)
    for n in range(RECORDS // BATCH):
        group = groups[n % len(groups)]
        batch = [
            (encode_offset_key(group, "t", p), encode_offset_value(OffsetValue(n, "", WALL_EPOCH)))
            for p in range(BATCH)
        ]
        o.logs.get_log(OFFSETS_TOPIC, partition_for(group, 50)).append(build_batch(batch, WALL_EPOCH))
    o.close()
    return probe


def fetch_error(client: WireClient, group: str) -> tuple[int, int]:
    response = client.request(FETCH, 8, groups=[dict(group_id=group, topics=None)], require_stable=False)
    [g] = response.groups
    offsets = {p.committed_offset for t in g.topics for p in t.partitions}
    return g.error_code, max(offsets, default=-1)


def test_other_requests_are_served_while_offsets_load(tmp_path: Path) -> None:
    data = tmp_path / "data"
    probe = history(data)
    last_commit = max(n for n in range(RECORDS // BATCH) if f"history-{n % 1_000}" == probe)
    broker = ProcessBroker(
        data, props={"offsets.load.inline.bytes": "0", "offsets.load.chunk.records": "200"}
    )
    try:
        broker.start()
        with WireClient(broker.bootstrap) as client:
            assert fetch_error(client, probe)[0] == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
            assert (
                client.request(
                    API_VERSIONS, 3, client_software_name="t", client_software_version="1"
                ).error_code
                == 0
            )
            metadata = client.request(
                METADATA,
                9,
                topics=None,
                allow_auto_topic_creation=False,
                include_topic_authorized_operations=False,
            )
            assert [b.port for b in metadata.brokers] == [broker.port]
            # Still loading after those answers: they did not wait for the replay to finish.
            assert fetch_error(client, probe)[0] == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
            while (result := fetch_error(client, probe))[0] == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS:
                pass
            assert result == (ErrorCode.NONE, last_commit)
    finally:
        broker.kill()
