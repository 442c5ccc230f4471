"""The transaction coordinator's typed requests and results (its boundary with the API handlers)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from kafkito.broker.coordinator.results import TopicPartition
from kafkito.broker.transactions.metadata import NO_PRODUCER_EPOCH, NO_PRODUCER_ID
from kafkito.protocol.errors import ErrorCode


@dataclass(slots=True, frozen=True)
class InitProducerIdRequest:
    """InitProducerId. `producer_id`/`producer_epoch` (v3+, KIP-360) name the producer recovering."""

    transactional_id: str | None
    transaction_timeout_ms: int
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH

    @property
    def expected(self) -> tuple[int, int] | None:
        """The (producer id, epoch) the client holds, when it sent one."""
        if self.producer_id == NO_PRODUCER_ID and self.producer_epoch == NO_PRODUCER_EPOCH:
            return None
        return self.producer_id, self.producer_epoch


@dataclass(slots=True, frozen=True)
class InitProducerIdResult:
    error: ErrorCode
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH


@dataclass(slots=True, frozen=True)
class AddPartitionsRequest:
    """`transaction_version`: the client's; 2 when a Produce v12 or TxnOffsetCommit v5 adds the
    partition itself (KIP-890 part 2), 0 for AddPartitionsToTxn/AddOffsetsToTxn from a client."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    partitions: frozenset[TopicPartition]
    transaction_version: int = 0


@dataclass(slots=True, frozen=True)
class AddOffsetsRequest:
    transactional_id: str
    producer_id: int
    producer_epoch: int
    group_id: str


@dataclass(slots=True, frozen=True)
class EndTxnRequest:
    """`transaction_version` 2 (EndTxn v5+): the epoch is bumped at the end of the transaction."""

    transactional_id: str
    producer_id: int
    producer_epoch: int
    commit: bool
    transaction_version: int = 0


@dataclass(slots=True, frozen=True)
class EndTxnResult:
    """EndTxn's answer; on success with transactions V2, the producer id and epoch to go on with."""

    error: ErrorCode
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH


@dataclass(slots=True, frozen=True)
class DescribedTransaction:
    """DescribeTransactions' entry for one id."""

    transactional_id: str
    error: ErrorCode
    state: str = ""
    producer_id: int = NO_PRODUCER_ID
    producer_epoch: int = NO_PRODUCER_EPOCH
    timeout_ms: int = 0
    start_ms: int = -1
    topics: tuple[tuple[str, tuple[int, ...]], ...] = ()


@dataclass(slots=True, frozen=True)
class TransactionListing:
    transactional_id: str
    producer_id: int
    state: str


@dataclass(slots=True, frozen=True)
class ListTransactionsResult:
    error: ErrorCode
    transactions: tuple[TransactionListing, ...] = ()
    unknown_state_filters: tuple[str, ...] = field(default_factory=tuple)


InitCallback = Callable[[InitProducerIdResult], None]
ErrorCallback = Callable[[ErrorCode], None]
EndCallback = Callable[[EndTxnResult], None]
