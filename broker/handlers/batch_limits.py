"""How many partitions one CreateTopics or CreatePartitions may create, as Kafka's controller bounds it.

Kafka 4's controller refuses a CreateTopics whose topics ask for more than MAX_PARTITIONS_PER_BATCH
partitions in all (`ReplicationControlManager.validateTotalNumberOfPartitions`): POLICY_VIOLATION,
"Excessively large number of partitions per request.", for every topic of the request. Below that,
the records one request writes are bounded by MAX_RECORDS_PER_USER_OP (`QuorumController`): a
CreateTopics writes a TopicRecord, a ConfigRecord per config and a PartitionRecord per partition of
each topic it creates, and one that would write more is refused as a whole with POLICY_VIOLATION,
"Unable to perform excessively large batch operation." (the controller's answer to a
`BoundedListTooLongException`). So one topic of 10,000 partitions is refused, one of 9,999 is not.

A CreatePartitions writes a PartitionRecord per partition it adds; the topic whose partitions go past
the bound is answered UNKNOWN_SERVER_ERROR without a message (the controller catches the exception
per topic), and so is every later topic that adds any, the bound being reached. Kafka also keeps the
records written before the bound (the topic grows by part of what was asked); kafkito creates none of
that topic's partitions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

MAX_PARTITIONS_PER_BATCH = 10_000
MAX_RECORDS_PER_USER_OP = 10_000

TOO_MANY_PARTITIONS = "Excessively large number of partitions per request."
TOO_MANY_RECORDS = "Unable to perform excessively large batch operation."


class NewTopic(Protocol):
    name: str
    num_partitions: int

    @property
    def assignments(self) -> Sequence[object]: ...


def requested_partitions(topics: Iterable[NewTopic], default_partitions: int) -> int:
    """The partitions a CreateTopics asks for, counted as Kafka counts them (an upper bound)."""
    total = 0
    for t in topics:
        if t.assignments:
            total += len(t.assignments)
        elif t.num_partitions == -1:
            total += default_partitions
        elif t.num_partitions > 0:
            total += t.num_partitions
    return total


class RecordBudget:
    """The metadata records one request may still write."""

    __slots__ = ("left",)

    def __init__(self, limit: int = MAX_RECORDS_PER_USER_OP) -> None:
        self.left = limit

    def take(self, records: int) -> bool:
        """Spend `records`; False (and the budget used up, as Kafka's full list) when they do not fit."""
        if records > self.left:
            self.left = 0
            return False
        self.left -= records
        return True
