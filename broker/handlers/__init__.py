"""The one registry of API handlers: dispatch and ApiVersions read it. To add an API, add its row here.

A handler module is imported on the first request of its API, not at start-up (33 modules and what
they import cost ~5 ms of every start). So the registry states each API's key and versions itself;
they must equal the module's `API_KEY` and `VERSIONS` (tests/broker/test_handler_registry.py).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import cast

from kafkito.broker.handlers.registry import Handler

# (module, API key, lowest version, highest version): one module per API, named after it (see
# DEVELOPERS.md, "Handler contract").
APIS: tuple[tuple[str, int, int, int], ...] = (
    ("add_offsets_to_txn", 25, 0, 4),
    ("add_partitions_to_txn", 24, 0, 5),
    ("alter_client_quotas", 49, 0, 1),
    ("alter_configs", 33, 0, 2),
    ("alter_partition_reassignments", 45, 0, 1),
    ("alter_replica_log_dirs", 34, 0, 2),
    ("alter_share_group_offsets", 91, 0, 0),
    ("alter_user_scram_credentials", 51, 0, 0),
    ("api_versions", 18, 0, 5),
    ("consumer_group_describe", 69, 0, 1),
    ("consumer_group_heartbeat", 68, 0, 1),
    ("create_acls", 30, 0, 3),
    ("create_delegation_token", 38, 1, 3),
    ("create_partitions", 37, 0, 3),
    ("create_topics", 19, 0, 7),
    ("delete_acls", 31, 0, 3),
    ("delete_groups", 42, 0, 3),
    ("delete_records", 21, 0, 2),
    ("delete_share_group_offsets", 92, 0, 0),
    ("delete_topics", 20, 0, 6),
    ("describe_acls", 29, 0, 3),
    ("describe_client_quotas", 48, 0, 1),
    ("describe_cluster", 60, 0, 2),
    ("describe_configs", 32, 0, 4),
    ("describe_delegation_token", 41, 1, 3),
    ("describe_groups", 15, 0, 6),
    ("describe_log_dirs", 35, 0, 5),
    ("describe_producers", 61, 0, 0),
    ("describe_quorum", 55, 0, 2),
    ("describe_share_group_offsets", 90, 0, 1),
    ("describe_topic_partitions", 75, 0, 0),
    ("describe_transactions", 65, 0, 0),
    ("describe_user_scram_credentials", 50, 0, 0),
    ("elect_leaders", 43, 0, 2),
    ("end_txn", 26, 0, 5),
    ("expire_delegation_token", 40, 1, 2),
    ("fetch", 1, 0, 18),
    ("find_coordinator", 10, 0, 6),
    ("get_telemetry_subscriptions", 71, 0, 0),
    ("heartbeat", 12, 0, 4),
    ("incremental_alter_configs", 44, 0, 1),
    ("init_producer_id", 22, 0, 5),
    ("join_group", 11, 0, 9),
    ("leave_group", 13, 0, 5),
    ("list_config_resources", 74, 0, 1),
    ("list_groups", 16, 0, 5),
    ("list_offsets", 2, 0, 11),
    ("list_partition_reassignments", 46, 0, 0),
    ("list_transactions", 66, 0, 2),
    ("metadata", 3, 0, 13),
    ("offset_commit", 8, 0, 10),
    ("offset_delete", 47, 0, 0),
    ("offset_fetch", 9, 0, 10),
    ("offset_for_leader_epoch", 23, 0, 4),
    ("produce", 0, 0, 13),
    ("push_telemetry", 72, 0, 0),
    ("renew_delegation_token", 39, 1, 2),
    ("sasl_authenticate", 36, 0, 2),
    ("sasl_handshake", 17, 0, 1),
    ("share_acknowledge", 79, 1, 2),
    ("share_fetch", 78, 1, 2),
    ("share_group_describe", 77, 1, 1),
    ("share_group_heartbeat", 76, 1, 1),
    ("streams_group_describe", 89, 0, 1),
    ("streams_group_heartbeat", 88, 0, 1),
    ("streams_group_topology_description_update", 93, 0, 0),
    ("sync_group", 14, 0, 5),
    ("txn_offset_commit", 28, 0, 6),
    ("update_features", 57, 0, 2),
    ("write_txn_markers", 27, 0, 2),
)

# Kafka 4 removed the oldest versions of some APIs (KIP-896): their new minimums, which a broker with
# `kafkito.api.versions.kafka4.minimums=true` advertises and accepts instead (Kafka 3.9's are above).
KAFKA4_MINIMUMS: dict[int, int] = {
    0: 3,  # Produce (still advertised from v0, as Kafka 4 does: see api_versions.py)
    1: 4,  # Fetch
    2: 1,  # ListOffsets
    8: 2,  # OffsetCommit
    9: 1,  # OffsetFetch
    19: 2,  # CreateTopics
    20: 1,  # DeleteTopics
    23: 2,  # OffsetForLeaderEpoch
    27: 1,  # WriteTxnMarkers
    29: 1,  # DescribeAcls
    30: 1,  # CreateAcls
    31: 1,  # DeleteAcls
    32: 1,  # DescribeConfigs
    34: 1,  # AlterReplicaLogDirs
    35: 1,  # DescribeLogDirs
}

_MODULES = {key: name for name, key, _, _ in APIS}
VERSIONS: dict[int, tuple[int, int]] = {key: (lo, hi) for _, key, lo, hi in APIS}
KAFKA4_VERSIONS: dict[int, tuple[int, int]] = {
    key: (max(lo, KAFKA4_MINIMUMS.get(key, 0)), hi) for key, (lo, hi) in VERSIONS.items()
}


class _Handlers(Mapping[int, Handler]):
    """API key -> its handler module, imported on first lookup."""

    def __getitem__(self, api_key: int) -> Handler:
        name = _MODULES[api_key]
        return cast(Handler, importlib.import_module(f"kafkito.broker.handlers.{name}"))

    def __iter__(self) -> Iterator[int]:
        return iter(_MODULES)

    def __len__(self) -> int:
        return len(_MODULES)


HANDLERS: Mapping[int, Handler] = _Handlers()


def served_versions(kafka4_minimums: bool = False) -> dict[int, tuple[int, int]]:
    """API key -> (lowest, highest) version answered: Kafka 3.9's minimums, or Kafka 4's."""
    return KAFKA4_VERSIONS if kafka4_minimums else VERSIONS


def supported_versions(kafka4_minimums: bool = False) -> list[tuple[int, int, int]]:
    """(api_key, min_version, max_version) for every API this broker answers, by key."""
    return [(key, lo, hi) for key, (lo, hi) in sorted(served_versions(kafka4_minimums).items())]
