"""Transaction error codes as each API version presents them.

The coordinator answers with today's codes; old request versions knew fewer, and Kafka's handlers
translate: PRODUCER_FENCED (KIP-588) became INVALID_PRODUCER_EPOCH before it existed, and
TRANSACTION_ABORTABLE (KIP-890) became INVALID_TXN_STATE for clients that cannot handle it.
"""

from __future__ import annotations

from kafkito.protocol.errors import ErrorCode

# The first version of each API whose clients understand PRODUCER_FENCED.
_PRODUCER_FENCED_SINCE = {
    "InitProducerId": 4,
    "AddPartitionsToTxn": 2,
    "AddOffsetsToTxn": 2,
    "EndTxn": 2,
    "TxnOffsetCommit": 3,
}
# The first version of each API whose clients understand TRANSACTION_ABORTABLE.
_ABORTABLE_SINCE = {
    "Produce": 11,
    "AddPartitionsToTxn": 5,
    "AddOffsetsToTxn": 4,
    "EndTxn": 4,
}


def for_version(api: str, version: int, error: ErrorCode) -> ErrorCode:
    """The code to send to a client speaking `version` of `api`."""
    if error is ErrorCode.PRODUCER_FENCED and version < _PRODUCER_FENCED_SINCE.get(api, 0):
        return ErrorCode.INVALID_PRODUCER_EPOCH
    if error is ErrorCode.TRANSACTION_ABORTABLE and version < _ABORTABLE_SINCE.get(api, 0):
        return ErrorCode.INVALID_TXN_STATE
    return error


def append_error(error: ErrorCode) -> ErrorCode:
    """What a client sees when its `__transaction_state` append failed (as Kafka maps it)."""
    if error is ErrorCode.NONE:
        return error
    if error in (ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.NOT_COORDINATOR):
        return ErrorCode.NOT_COORDINATOR
    if error in _UNAVAILABLE:
        return ErrorCode.COORDINATOR_NOT_AVAILABLE
    return ErrorCode.UNKNOWN_SERVER_ERROR


_UNAVAILABLE = frozenset(
    {
        ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
        ErrorCode.NOT_ENOUGH_REPLICAS,
        ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
        ErrorCode.REQUEST_TIMED_OUT,
        ErrorCode.KAFKA_STORAGE_ERROR,
        ErrorCode.COORDINATOR_NOT_AVAILABLE,
    }
)
