"""When a broker is ready for a scenario's next step: Kafka applies what a request changed after it
answers (a created topic's partitions, the coordinators of __consumer_offsets and __transaction_state),
so the framework waits for what a client would wait for before it compares anything.

- A topic is ready when Metadata names a leader for each partition *and* each partition answers
  ListOffsets without an error: Kafka's metadata cache shows the leader a moment before its replica
  manager serves the partition (Produce and Fetch then answer NOT_LEADER_OR_FOLLOWER), measured on
  the reference. Both probes change nothing on either broker.
- A config change is applied when DescribeConfigs shows it: Kafka answers IncrementalAlterConfigs once
  its controller committed the change, and its broker describes the old value until it applied it.
- The coordinators are ready when FindCoordinator finds one for a key of every partition of both
  internal topics, and every group partition answers OffsetFetch and every transaction partition
  DescribeTransactions without a loading error: nothing a scenario sends then lands on a
  coordinator that is still loading (the framework still retries those errors, see `Side`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kafkito.broker.offsets.partitioner import partition_for
from tests.support.wire import WireClient

METADATA, LIST_OFFSETS, OFFSET_FETCH, FIND_COORDINATOR, DESCRIBE_CONFIGS, DESCRIBE_TXNS = 3, 2, 9, 10, 32, 65
OVERRIDES = frozenset({1, 8})  # config sources: a topic's and a group's own value
NOT_LEADER_OR_FOLLOWER = 6
COORDINATOR_NOT_READY = frozenset({14, 15, 16})  # LOAD_IN_PROGRESS, NOT_AVAILABLE, NOT_COORDINATOR
# What a client retries on a coordinator or a partition leader that is not there yet.
RETRIED_AS_CLIENTS_DO = COORDINATOR_NOT_READY | {NOT_LEADER_OR_FOLLOWER}
INTERNAL = {0: "__consumer_offsets", 1: "__transaction_state"}  # FindCoordinator key type -> topic


def topic_served(request: Any, name: str, partitions: int) -> bool:
    """Whether every partition of `name` has a leader in Metadata and answers ListOffsets (latest).
    `request(api_key, version, **fields)` sends one unrecorded request (None: no answer)."""
    r = request(METADATA, 12, topics=[{"name": name}], allow_auto_topic_creation=False)
    if r is None or not r.topics or r.topics[0].error_code != 0:
        return False
    parts = r.topics[0].partitions
    if len(parts) != partitions or not all(p.error_code == 0 and p.leader_id >= 0 for p in parts):
        return False
    wanted = [{"partition_index": p, "current_leader_epoch": -1, "timestamp": -1} for p in range(partitions)]
    listed = request(LIST_OFFSETS, 9, replica_id=-1, isolation_level=0,
                     topics=[{"name": name, "partitions": wanted}])  # fmt: skip
    if listed is None or not listed.topics:
        return False
    answered = listed.topics[0].partitions
    return len(answered) == partitions and all(p.error_code == 0 for p in answered)


def config_shown(request: Any, resource_type: int, name: str, key: str, value: str | None) -> bool:
    """Whether DescribeConfigs shows `key` of the resource set to `value` by the resource itself, or
    (`value` None) no longer set by it."""
    resource = {"resource_type": resource_type, "resource_name": name, "configuration_keys": [key]}
    r = request(
        DESCRIBE_CONFIGS, 4, include_synonyms=False, include_documentation=False, resources=[resource]
    )
    if r is None or not r.results or r.results[0].error_code != 0 or not r.results[0].configs:
        return False
    config = r.results[0].configs[0]
    if value is None:
        return config.config_source not in OVERRIDES
    return config.config_source in OVERRIDES and config.value == value


def keys_of_every_partition(partitions: int, stem: str) -> list[str]:
    """One coordinator key per partition of an internal topic of `partitions` partitions."""
    found: dict[int, str] = {}
    for key in _names(stem):
        found.setdefault(partition_for(key, partitions), key)
        if len(found) == partitions:
            return [found[p] for p in range(partitions)]
    raise AssertionError("unreachable")


def _names(stem: str) -> Iterator[str]:
    i = 0
    while True:
        yield f"{stem}-{i}"
        i += 1


def coordinators_loaded(bootstrap: str) -> bool:
    """Whether both coordinators serve every partition of their internal topic (see the module)."""
    with WireClient(bootstrap, "conformance-warm-up") as c:
        for key_type, topic in INTERNAL.items():
            first = [f"conformance-warm-up-{key_type}"]
            found = c.request(FIND_COORDINATOR, 4, key_type=key_type, coordinator_keys=first)
            if found.coordinators[0].error_code != 0:
                return False  # the first FindCoordinator creates the internal topic
            md = c.request(METADATA, 12, topics=[{"name": topic}], allow_auto_topic_creation=False)
            parts = md.topics[0].partitions
            if md.topics[0].error_code != 0 or not parts or any(p.leader_id < 0 for p in parts):
                return False
            keys = keys_of_every_partition(len(parts), f"conformance-warm-up-{key_type}")
            found = c.request(FIND_COORDINATOR, 4, key_type=key_type, coordinator_keys=keys)
            if any(k.error_code != 0 for k in found.coordinators):
                return False
            if not _loaded(c, key_type, keys):
                return False
    return True


def _loaded(c: WireClient, key_type: int, keys: list[str]) -> bool:
    if key_type == 0:
        groups = [{"group_id": k, "member_id": None, "member_epoch": -1, "topics": None} for k in keys]
        r = c.request(OFFSET_FETCH, 9, require_stable=False, groups=groups)
        return all(g.error_code not in COORDINATOR_NOT_READY for g in r.groups)
    r = c.request(DESCRIBE_TXNS, 0, transactional_ids=keys)
    return all(s.error_code not in COORDINATOR_NOT_READY for s in r.transaction_states)
