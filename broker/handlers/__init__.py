"""The one registry of API handlers: dispatch and ApiVersions read it. To add an API, add its module here."""

from __future__ import annotations

import importlib
from typing import cast

from kafkito.broker.handlers.registry import Handler

# One module per API, named after it (see DEVELOPERS.md, "Handler contract").
_NAMES = (
    "add_offsets_to_txn",
    "add_partitions_to_txn",
    "alter_configs",
    "api_versions",
    "create_partitions",
    "create_topics",
    "delete_groups",
    "delete_records",
    "delete_topics",
    "describe_cluster",
    "describe_configs",
    "describe_groups",
    "describe_producers",
    "describe_transactions",
    "end_txn",
    "fetch",
    "find_coordinator",
    "heartbeat",
    "incremental_alter_configs",
    "init_producer_id",
    "join_group",
    "leave_group",
    "list_groups",
    "list_offsets",
    "list_transactions",
    "metadata",
    "offset_commit",
    "offset_delete",
    "offset_fetch",
    "offset_for_leader_epoch",
    "produce",
    "sync_group",
    "txn_offset_commit",
)

HANDLERS: dict[int, Handler] = {
    h.API_KEY: h
    for h in (cast(Handler, importlib.import_module(f"kafkito.broker.handlers.{n}")) for n in _NAMES)
}


def supported_versions() -> list[tuple[int, int, int]]:
    """(api_key, min_version, max_version) for every API this broker answers, by key."""
    return [(key, h.VERSIONS[0], h.VERSIONS[1]) for key, h in sorted(HANDLERS.items())]
