"""Whether the broker serves transactions (issue 13's switch, TXN.md section 4).

Off: the transaction APIs are not registered (ApiVersions does not advertise them), InitProducerId
and Produce answer a transactional id with TRANSACTIONAL_ID_AUTHORIZATION_FAILED, as before. On once
the whole path (coordinator, markers, read_committed reads) works end to end with real clients.
"""

from __future__ import annotations

ENABLED = True

# The handler modules that exist only for transactions (registered when ENABLED).
TRANSACTION_HANDLERS = (
    "add_offsets_to_txn",
    "add_partitions_to_txn",
    "describe_producers",
    "describe_transactions",
    "end_txn",
    "list_transactions",
    "txn_offset_commit",
)
