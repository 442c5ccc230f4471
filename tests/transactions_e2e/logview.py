"""What the broker itself says about a partition, by raw requests (no client in between): its high
watermark and last stable offset (ListOffsets by isolation level), a group's committed offsets
(OffsetFetch, with and without require_stable), and records appended by a plain producer."""

from __future__ import annotations

from collections.abc import Iterable

from tests.compat import reference as ref
from tests.support.records import Rec
from tests.support.waiting import DEADLINE_S, wait_until
from tests.support.wire import WireClient

UNSTABLE_OFFSET_COMMIT = 88
READ_UNCOMMITTED, READ_COMMITTED = 0, 1


def high_watermarks(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    return ref.latest_offsets(bootstrap, topic, partitions, READ_UNCOMMITTED)


def stable_offsets(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    return ref.latest_offsets(bootstrap, topic, partitions, READ_COMMITTED)


def settled(bootstrap: str, topic: str, partitions: int) -> bool:
    """No open transaction on the topic: every partition's last stable offset is its high watermark."""
    return stable_offsets(bootstrap, topic, partitions) == high_watermarks(bootstrap, topic, partitions)


def wait_settled(bootstrap: str, topic: str, partitions: int) -> dict[int, int]:
    """Wait until no transaction is open on the topic (its markers may be written after EndTxn has
    answered, as in Kafka) and return the high watermarks."""
    wait_until(
        lambda: settled(bootstrap, topic, partitions), DEADLINE_S, f"every transaction on {topic} to end",
        detail=lambda: f"LSO {stable_offsets(bootstrap, topic, partitions)}, "
        f"HW {high_watermarks(bootstrap, topic, partitions)}",
    )  # fmt: skip
    return high_watermarks(bootstrap, topic, partitions)


def offset_fetch(
    bootstrap: str, group: str, topic: str, partitions: int, require_stable: bool
) -> dict[int, tuple[int, int]]:
    """OffsetFetch v7: partition -> (error code, committed offset); a top-level error is asserted 0."""
    with WireClient(bootstrap) as wire:
        response = wire.request(
            9, 7, group_id=group, require_stable=require_stable,
            topics=[dict(name=topic, partition_indexes=list(range(partitions)))],
        )  # fmt: skip
    assert response.error_code == 0, f"OffsetFetch {group}: error {response.error_code}"
    return {p.partition_index: (p.error_code, p.committed_offset) for p in response.topics[0].partitions}


def plain_produce(bootstrap: str, topic: str, recs: Iterable[Rec]) -> None:
    """Append `recs` with no producer id (acks=all), as a non-transactional producer would."""
    ref.produce(bootstrap, topic, list(recs))
