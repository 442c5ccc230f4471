"""The vocabulary of a share partition: record states, acknowledge types, in-flight records and the
state batches persisted for them (Kafka's ids: they are written to `__share_group_state`)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import NamedTuple

from kafkito.purgatory import TimerTask


class RecordState(IntEnum):
    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4

    @property
    def terminal(self) -> bool:
        return self in (RecordState.ACKNOWLEDGED, RecordState.ARCHIVED)


class AckType(IntEnum):
    """AcknowledgeTypes of ShareFetch/ShareAcknowledge (RENEW from v2, KIP-1222)."""

    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3
    RENEW = 4


@dataclass(slots=True)
class InFlight:
    """One record at or past the share-partition start offset that a member was given at least once
    (or that recovery restored): its state, how often it was delivered, who holds it and until when."""

    state: RecordState
    delivery_count: int = 0
    member_id: str | None = None
    lock: TimerTask | None = None


class StateBatch(NamedTuple):
    """A run of offsets in one persisted state (AVAILABLE, ACKNOWLEDGED or ARCHIVED) and delivery count."""

    first_offset: int
    last_offset: int
    delivery_state: int
    delivery_count: int


class AcquiredRange(NamedTuple):
    """AcquiredRecords of a ShareFetch response: consecutive offsets with one delivery count."""

    first_offset: int
    last_offset: int
    delivery_count: int


def runs(items: list[tuple[int, int, int]]) -> list[StateBatch]:
    """(offset, state, count) sorted by offset -> StateBatches of consecutive offsets alike."""
    out: list[StateBatch] = []
    for offset, state, count in items:
        if out:
            last = out[-1]
            if (
                last.last_offset + 1 == offset
                and last.delivery_state == state
                and last.delivery_count == count
            ):
                out[-1] = last._replace(last_offset=offset)
                continue
        out.append(StateBatch(offset, offset, state, count))
    return out
