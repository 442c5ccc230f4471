"""The one registry of API handlers: dispatch and ApiVersions read it. Add a module here to add an API."""

from __future__ import annotations

from types import ModuleType
from typing import cast

from broker.handlers import (
    alter_configs,
    api_versions,
    create_partitions,
    create_topics,
    delete_groups,
    delete_records,
    delete_topics,
    describe_cluster,
    describe_configs,
    describe_groups,
    fetch,
    find_coordinator,
    heartbeat,
    incremental_alter_configs,
    init_producer_id,
    join_group,
    leave_group,
    list_groups,
    list_offsets,
    metadata,
    offset_commit,
    offset_delete,
    offset_fetch,
    offset_for_leader_epoch,
    produce,
    sync_group,
)
from broker.handlers.registry import Handler

_MODULES: list[ModuleType] = [
    alter_configs,
    api_versions,
    create_partitions,
    create_topics,
    delete_groups,
    delete_records,
    delete_topics,
    describe_cluster,
    describe_configs,
    describe_groups,
    fetch,
    find_coordinator,
    heartbeat,
    incremental_alter_configs,
    init_producer_id,
    join_group,
    leave_group,
    list_groups,
    list_offsets,
    metadata,
    offset_commit,
    offset_delete,
    offset_fetch,
    offset_for_leader_epoch,
    produce,
    sync_group,
]

HANDLERS: dict[int, Handler] = {m.API_KEY: cast(Handler, m) for m in _MODULES}


def supported_versions() -> list[tuple[int, int, int]]:
    """(api_key, min_version, max_version) for every API this broker answers, by key."""
    return [(key, h.VERSIONS[0], h.VERSIONS[1]) for key, h in sorted(HANDLERS.items())]
