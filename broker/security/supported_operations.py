"""The operations Kafka supports on each resource type that describing responses report (Kafka's
AclEntry.supportedOperations), as the int32 bit field those responses carry.

With no authorizer Kafka reports every supported operation of the resource; with one, those the
principal may do (`authorized_operations.py`). A field the request did not ask for is Kafka's
Integer.MIN_VALUE, `NOT_REQUESTED`.
"""

from __future__ import annotations

from collections.abc import Iterable

from kafkito.broker.security.acls import AclOperation as Op

TOPIC_OPERATIONS = frozenset({Op.READ, Op.WRITE, Op.CREATE, Op.DESCRIBE, Op.DELETE, Op.ALTER,
                              Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS})  # fmt: skip
# Kafka 4.0 added the group configs (KIP-848): DESCRIBE_CONFIGS and ALTER_CONFIGS on GROUP resources.
GROUP_OPERATIONS = frozenset({Op.READ, Op.DESCRIBE, Op.DELETE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS})
CLUSTER_OPERATIONS = frozenset({Op.CREATE, Op.CLUSTER_ACTION, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS,
                                Op.IDEMPOTENT_WRITE, Op.ALTER, Op.DESCRIBE})  # fmt: skip

NOT_REQUESTED = -(2**31)


def bits(operations: Iterable[int]) -> int:
    """The int32 bit field of `operations` (bit n set for operation code n)."""
    return sum(1 << op for op in set(operations))


TOPIC_OPERATIONS_BITS = bits(TOPIC_OPERATIONS)
GROUP_OPERATIONS_BITS = bits(GROUP_OPERATIONS)
CLUSTER_OPERATIONS_BITS = bits(CLUSTER_OPERATIONS)
