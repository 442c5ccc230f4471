"""Each API's answer to a request failed as a whole, as Kafka's `AbstractRequest.getErrorResponse` of
that request class builds it (Kafka 4.x): which entries of the request get an entry in the response,
where the error code goes, which message goes with it, and the placeholder values of the other fields.

A builder returns the response's fields as plain values (nested structs as dicts), for every version
of its API: `error_response` keeps the fields the version has. None: no response at all (Produce with
acks=0). An API missing here is answered by the generic mirror in `error_response`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from kafkito.protocol.errors import DEFAULT_MESSAGES, ErrorCode

Fields = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Failure:
    """One error as Kafka's getErrorResponse sees it.

    `message` is what `ApiError.fromThrowable` keeps: None for UNKNOWN_SERVER_ERROR (never leak an
    internal message) or when the text is the error's own; `canned` is the error's own text
    (`Errors.message()`); `raw` is the exception's text (the canned one when none was given).
    """

    code: int
    message: str | None
    canned: str | None
    raw: str | None

    @classmethod
    def of(cls, error: int, message: str | None) -> Failure:
        code = ErrorCode(error) if error in ErrorCode._value2member_map_ else None
        canned = DEFAULT_MESSAGES.get(code) if code is not None else None
        kept = None if error == ErrorCode.UNKNOWN_SERVER_ERROR or message == canned else message
        return cls(error, kept, canned, message if message is not None else canned)


Builder = Callable[[Any, int, Failure], Fields | None]


def _each(request: Any, name: str) -> Iterable[Any]:
    return getattr(request, name, None) or ()


def _top(**extra: Any) -> Builder:
    """Only a top-level error code (and the given placeholders)."""
    return lambda request, version, f: {"error_code": f.code, **extra}


def _top_with_message(request: Any, version: int, f: Failure) -> Fields:
    return {"error_code": f.code, "error_message": f.message}


def _top_with_canned(request: Any, version: int, f: Failure) -> Fields:
    return {"error_code": f.code, "error_message": f.canned}


# -- data path -------------------------------------------------------------------------------------


def _produce(request: Any, version: int, f: Failure) -> Fields | None:
    if request.acks == 0:
        return None  # the producer asked for no answer
    topics: dict[tuple[Any, Any], Fields] = {}
    seen: set[tuple[Any, Any, int]] = set()
    for topic in _each(request, "topic_data"):
        key = (getattr(topic, "name", None), getattr(topic, "topic_id", None))
        out = topics.setdefault(key, {"name": key[0], "topic_id": key[1], "partition_responses": []})
        for part in _each(topic, "partition_data"):
            if (*key, part.index) in seen:  # Kafka keys the partitions by topic-partition
                continue
            seen.add((*key, part.index))
            out["partition_responses"].append(
                {
                    "index": part.index,
                    "error_code": f.code,
                    "base_offset": -1,
                    "log_append_time_ms": -1,
                    "log_start_offset": -1,
                    "record_errors": [],
                    "error_message": f.message,
                }
            )
    return {"responses": list(topics.values())}


def _fetch(request: Any, version: int, f: Failure) -> Fields:
    responses = []
    if version < 13:  # from v13 the top-level error code alone says it
        for topic in _each(request, "topics"):
            partitions = [
                {"partition_index": p.partition, "error_code": f.code, "high_watermark": -1, "records": b""}
                for p in _each(topic, "partitions")
            ]
            responses.append(
                {"topic": getattr(topic, "topic", None), "topic_id": getattr(topic, "topic_id", None),
                 "partitions": partitions}
            )  # fmt: skip
    session_id = getattr(request, "session_id", 0) if version >= 7 else 0
    return {"error_code": f.code, "session_id": session_id, "responses": responses}


def _list_offsets(request: Any, version: int, f: Failure) -> Fields:
    def partition(p: Any) -> Fields:
        if version == 0:
            return {"partition_index": p.partition_index, "error_code": f.code, "old_style_offsets": []}
        return {"partition_index": p.partition_index, "error_code": f.code, "offset": -1, "timestamp": -1}

    return {
        "topics": [
            {"name": t.name, "partitions": [partition(p) for p in _each(t, "partitions")]}
            for t in _each(request, "topics")
        ]
    }


def _metadata(request: Any, version: int, f: Failure) -> Fields:
    asked = request.topics if version > 0 or request.topics else None  # v0: [] means every topic
    return {
        "error_code": f.code,
        "topics": [
            {"name": t.name or "", "topic_id": getattr(t, "topic_id", None), "error_code": f.code,
             "is_internal": False, "partitions": []}
            for t in asked or ()
        ],
    }  # fmt: skip


def _by_topic_partition(
    topics: str, topic_key: str, partitions: str, index: str, out_partitions: str = "partitions", **extra: Any
) -> Builder:
    """Every partition of every topic of the request, with the error (and `extra` placeholders)."""

    def build(request: Any, version: int, f: Failure) -> Fields:
        out = []
        for topic in _each(request, topics):
            entry: Fields = {topic_key: getattr(topic, topic_key, None)}
            if hasattr(topic, "topic_id"):
                entry["topic_id"] = topic.topic_id
            entry[out_partitions] = [
                {index: getattr(p, index), "error_code": f.code, **extra} for p in _each(topic, partitions)
            ]
            out.append(entry)
        return {"topics": out}

    return build


def _offset_fetch(request: Any, version: int, f: Failure) -> Fields:
    if version >= 8:
        return {"groups": [{"group_id": g.group_id, "error_code": f.code, "topics": []}
                           for g in _each(request, "groups")]}  # fmt: skip
    if version >= 2:
        return {"error_code": f.code, "topics": []}
    return {
        "topics": [
            {"name": t.name, "partitions": [
                {"partition_index": i, "error_code": f.code, "committed_offset": -1, "metadata": "",
                 "committed_leader_epoch": -1}
                for i in t.partition_indexes or ()
            ]}
            for t in _each(request, "topics")
        ]
    }  # fmt: skip


def _find_coordinator(request: Any, version: int, f: Failure) -> Fields:
    if version < 4:
        return {"error_code": f.code, "error_message": f.canned, "node_id": -1, "host": "", "port": -1}
    return {
        "coordinators": [
            {
                "key": key,
                "node_id": -1,
                "host": "",
                "port": -1,
                "error_code": f.code,
                "error_message": f.canned,
            }
            for key in _each(request, "coordinator_keys")
        ]
    }


def _api_versions(request: Any, version: int, f: Failure) -> Fields:
    """An unsupported version names ApiVersions' own range, so a client can retry within it (KIP-511);
    Kafka's getErrorResponse gives its own range, which kafkito's registry serves too."""
    own = (
        [{"api_key": 18, "min_version": 0, "max_version": 5}]
        if f.code == ErrorCode.UNSUPPORTED_VERSION
        else []
    )
    return {"error_code": f.code, "api_keys": own}


# -- groups ----------------------------------------------------------------------------------------


def _join_group(request: Any, version: int, f: Failure) -> Fields:
    return {
        "error_code": f.code,
        "generation_id": -1,
        "protocol_type": None,
        "protocol_name": None if version >= 7 else "",
        "leader": "",
        "member_id": "",
        "members": [],
    }


def _describe_groups(request: Any, version: int, f: Failure) -> Fields:
    return {
        "groups": [
            {"group_id": g, "error_code": f.code, "group_state": "", "protocol_type": "", "protocol_data": "",
             "members": [], "authorized_operations": None}  # None: Kafka's INT32_MIN, "not asked for"
            for g in _each(request, "groups")
        ]
    }  # fmt: skip


def _groups_by_id(field: str, out: str) -> Builder:
    """One response group per group id the request lists, with only its id and the error."""
    return lambda request, version, f: {
        out: [{"group_id": g, "error_code": f.code} for g in _each(request, field)]
    }


def _describe_share_group_offsets(request: Any, version: int, f: Failure) -> Fields:
    message = f.canned if f.code == ErrorCode.UNKNOWN_SERVER_ERROR else f.raw
    return {
        "groups": [{"group_id": g.group_id, "error_code": f.code, "error_message": message, "topics": []}
                   for g in _each(request, "groups")]
    }  # fmt: skip


# -- topics, configs, ACLs, quotas, credentials ----------------------------------------------------


def _create_topics(request: Any, version: int, f: Failure) -> Fields:
    return {"topics": [{"name": t.name, "error_code": f.code, "error_message": f.message}
                       for t in _each(request, "topics")]}  # fmt: skip


def _delete_topics(request: Any, version: int, f: Failure) -> Fields:
    if version >= 6:
        named = [(t.name, t.topic_id) for t in _each(request, "topics")]
    else:
        named = [(name, None) for name in _each(request, "topic_names")]
    return {"responses": [{"name": n, "topic_id": i, "error_code": f.code} for n, i in named]}


def _add_partitions_to_txn(request: Any, version: int, f: Failure) -> Fields:
    if version >= 4:
        return {"error_code": f.code}
    return {
        "results_by_topic_v3_and_below": [
            {"name": t.name, "results_by_partition": [
                {"partition_index": p, "partition_error_code": f.code} for p in t.partitions or ()
            ]}
            for t in _each(request, "v3_and_below_topics")
        ]
    }  # fmt: skip


def _per_entry(field: str, out: str, message: str = "message", **extra: Any) -> Builder:
    """One response entry per request entry (ACL creations, filters), carrying only the error."""

    def build(request: Any, version: int, f: Failure) -> Fields:
        text = f.message if message == "message" else f.canned
        return {out: [{"error_code": f.code, "error_message": text, **extra} for _ in _each(request, field)]}

    return build


def _resources(out: str, message: str = "message") -> Builder:
    """One response entry per config resource asked for, naming it."""

    def build(request: Any, version: int, f: Failure) -> Fields:
        text = f.message if message == "message" else f.canned
        return {
            out: [
                {"error_code": f.code, "error_message": text, "resource_type": r.resource_type,
                 "resource_name": r.resource_name}
                for r in _each(request, "resources")
            ]
        }  # fmt: skip

    return build


def _alter_replica_log_dirs(request: Any, version: int, f: Failure) -> Fields:
    return {
        "results": [
            {"topic_name": t.name, "partitions": [{"partition_index": p, "error_code": f.code}
                                                  for p in t.partitions or ()]}
            for d in _each(request, "dirs")
            for t in _each(d, "topics")
        ]
    }  # fmt: skip


def _create_partitions(request: Any, version: int, f: Failure) -> Fields:
    return {"results": [{"name": t.name, "error_code": f.code, "error_message": f.message}
                        for t in _each(request, "topics")]}  # fmt: skip


def _elect_leaders(request: Any, version: int, f: Failure) -> Fields:
    return {
        "error_code": f.code,
        "replica_election_results": [
            {"topic": t.topic, "partition_result": [
                {"partition_id": i, "error_code": f.code, "error_message": f.message}
                for i in t.partitions or ()
            ]}
            for t in _each(request, "topic_partitions")
        ],
    }  # fmt: skip


def _alter_partition_reassignments(request: Any, version: int, f: Failure) -> Fields:
    return {
        "error_code": f.code,
        "error_message": f.message,
        "responses": [
            {"name": t.name, "partitions": [
                {"partition_index": p.partition_index, "error_code": f.code, "error_message": f.message}
                for p in _each(t, "partitions")
            ]}
            for t in _each(request, "topics")
        ],
    }  # fmt: skip


def _list_partition_reassignments(request: Any, version: int, f: Failure) -> Fields:
    return {
        "error_code": f.code,
        "error_message": f.message,
        "topics": [
            {"name": t.name, "partitions": [{"partition_index": i} for i in t.partition_indexes or ()]}
            for t in _each(request, "topics")
        ],
    }


def _alter_client_quotas(request: Any, version: int, f: Failure) -> Fields:
    return {
        "entries": [
            {"error_code": f.code, "error_message": f.canned, "entity": [
                {"entity_type": e.entity_type, "entity_name": e.entity_name} for e in _each(entry, "entity")
            ]}
            for entry in _each(request, "entries")
        ]
    }  # fmt: skip


def _describe_user_scram_credentials(request: Any, version: int, f: Failure) -> Fields:
    return {
        "error_code": f.code,
        "error_message": f.message,
        "results": [{"error_code": f.code, "error_message": f.message} for _ in _each(request, "users")],
    }


def _alter_user_scram_credentials(request: Any, version: int, f: Failure) -> Fields:
    users = {d.name for d in _each(request, "deletions")} | {u.name for u in _each(request, "upsertions")}
    return {"results": [{"user": u, "error_code": f.code, "error_message": f.message} for u in sorted(users)]}


def _describe_producers(request: Any, version: int, f: Failure) -> Fields:
    return {
        "topics": [
            {"name": t.name, "partitions": [{"partition_index": i, "error_code": f.code}
                                            for i in t.partition_indexes or ()]}
            for t in _each(request, "topics")
        ]
    }  # fmt: skip


def _describe_transactions(request: Any, version: int, f: Failure) -> Fields:
    return {"transaction_states": [{"transactional_id": i, "error_code": f.code}
                                   for i in _each(request, "transactional_ids")]}  # fmt: skip


def _write_txn_markers(request: Any, version: int, f: Failure) -> Fields:
    """Every partition of every marker, through Kafka's hash maps: one result per producer id (a
    repeated one keeps its first place and answers its last marker's partitions), each partition once,
    and the order those maps iterate in (producer ids, then topics, then partitions)."""
    markers = list(_each(request, "markers"))
    by_producer: dict[int, list[tuple[str, int]]] = {}
    for marker in markers:
        named = (
            (t.name, p) for t in _each(marker, "topics") for p in t.partition_indexes or ()
        )  # fmt: skip
        by_producer[marker.producer_id] = java_hash_order(list(dict.fromkeys(named)), _topic_partition_hash)
    results = []
    for producer_id in java_hash_order(list(by_producer), _long_hash, capacity=len(markers)):
        topics: dict[str, list[Fields]] = {}
        for name, index in by_producer[producer_id]:
            topics.setdefault(name, []).append({"partition_index": index, "error_code": f.code})
        ordered = java_hash_order(list(topics), _string_hash)
        results.append({"producer_id": producer_id, "topics": [{"name": n, "partitions": topics[n]}
                                                               for n in ordered]})  # fmt: skip
    return {"markers": results}


# -- Java's HashMap iteration order ------------------------------------------------------------------
# Some getErrorResponse implementations collect the request's entries in a java.util.HashMap and answer
# in the order it iterates: by bucket (the spread hash masked by the table size the map grew to), and
# in insertion order within a bucket. Bins turned into trees (nine or more keys in one bucket of a
# table of 64 or more) are not modelled: they never happen for the few entries of such requests.


def _int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def _string_hash(text: str) -> int:
    """java.lang.String.hashCode (over UTF-16 code units)."""
    h = 0
    units = text.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + int.from_bytes(units[i : i + 2], "big")) & 0xFFFFFFFF
    return _int32(h)


def _long_hash(value: int) -> int:
    """java.lang.Long.hashCode."""
    bits = value & 0xFFFFFFFFFFFFFFFF
    return _int32(bits ^ (bits >> 32))


def _topic_partition_hash(key: tuple[str, int]) -> int:
    """org.apache.kafka.common.TopicPartition.hashCode."""
    topic, partition = key
    return _int32(31 * (31 + partition) + _string_hash(topic))


def _table_size(initial: int) -> int:
    """HashMap.tableSizeFor: the power of two at least `initial` (1 for 0)."""
    size = 1
    while size < initial:
        size <<= 1
    return size


def java_hash_order(keys: list[Any], hash_of: Callable[[Any], int], capacity: int | None = None) -> list[Any]:
    """`keys` (distinct, in insertion order) in the order a java.util.HashMap iterates them, built by
    `new HashMap<>(capacity)` (None: `new HashMap<>()`) and one put per key."""
    hashes = [hash_of(k) & 0xFFFFFFFF for k in keys]
    spread = [h ^ (h >> 16) for h in hashes]
    table, threshold = 0, (16 if capacity is None else _table_size(capacity))
    bins: Counter[int] = Counter()
    for size, h in enumerate(spread, start=1):
        if table == 0:
            table, threshold = threshold, int(threshold * 0.75)
        bins[h & (table - 1)] += 1
        grow = bins[h & (table - 1)] > 8 and table < 64  # a long bin grows a small table
        if grow or size > threshold:
            threshold = threshold * 2 if table >= 16 else int(table * 2 * 0.75)
            table *= 2
            bins = Counter(s & (table - 1) for s in spread[:size])
            if grow and size > threshold:
                threshold = threshold * 2 if table >= 16 else int(table * 2 * 0.75)
                table *= 2
                bins = Counter(s & (table - 1) for s in spread[:size])
    order = sorted(range(len(keys)), key=lambda i: spread[i] & (table - 1) if table else 0)
    return [keys[i] for i in order]


def _describe_topic_partitions(request: Any, version: int, f: Failure) -> Fields:
    return {"topics": [{"name": t.name, "error_code": f.code, "is_internal": False, "partitions": []}
                       for t in _each(request, "topics")]}  # fmt: skip


# CreateDelegationToken's refusal: no token, owned and requested by User:ANONYMOUS.
_NO_TOKEN = {
    "principal_type": "User",
    "principal_name": "ANONYMOUS",
    "token_requester_principal_type": "User",
    "token_requester_principal_name": "ANONYMOUS",
    "issue_timestamp_ms": -1,
    "expiry_timestamp_ms": -1,
    "max_timestamp_ms": -1,
    "token_id": "",
    "hmac": b"",
}

BUILDERS: dict[int, Builder] = {
    0: _produce,
    1: _fetch,
    2: _list_offsets,
    3: _metadata,
    8: _by_topic_partition("topics", "name", "partitions", "partition_index"),  # OffsetCommit
    9: _offset_fetch,
    10: _find_coordinator,
    11: _join_group,
    12: _top(),  # Heartbeat
    13: _top(),  # LeaveGroup
    14: _top(assignment=b""),  # SyncGroup
    15: _describe_groups,
    16: _top(groups=[]),  # ListGroups
    17: _top(mechanisms=[]),  # SaslHandshake
    18: _api_versions,
    19: _create_topics,
    20: _delete_topics,
    21: _by_topic_partition("topics", "name", "partitions", "partition_index", low_watermark=-1),
    22: _top(producer_id=-1, producer_epoch=-1),  # InitProducerId
    23: _by_topic_partition("topics", "topic", "partitions", "partition", leader_epoch=-1, end_offset=-1),
    24: _add_partitions_to_txn,
    25: _top(),  # AddOffsetsToTxn
    26: _top(),  # EndTxn
    27: _write_txn_markers,
    28: _by_topic_partition("topics", "name", "partitions", "partition_index"),  # TxnOffsetCommit
    29: _top_with_message,  # DescribeAcls
    30: _per_entry("creations", "results"),  # CreateAcls
    31: _per_entry("filters", "filter_results", matching_acls=[]),  # DeleteAcls
    32: _resources("results", message="canned"),  # DescribeConfigs
    33: _resources("responses"),  # AlterConfigs
    34: _alter_replica_log_dirs,
    35: _top(),  # DescribeLogDirs (from v3; before, an empty answer)
    36: _top_with_message,  # SaslAuthenticate
    37: _create_partitions,
    38: _top(**_NO_TOKEN),  # CreateDelegationToken
    42: _groups_by_id("groups_names", "results"),  # DeleteGroups
    43: _elect_leaders,
    44: _resources("responses"),  # IncrementalAlterConfigs
    45: _alter_partition_reassignments,
    46: _list_partition_reassignments,
    47: _top(),  # OffsetDelete
    48: lambda request, version, f: {"error_code": f.code, "error_message": f.message, "entries": None},
    49: _alter_client_quotas,
    50: _describe_user_scram_credentials,
    51: _alter_user_scram_credentials,
    55: _top_with_canned,  # DescribeQuorum (the error's own text, whatever the failure's)
    57: _top_with_message,  # UpdateFeatures (no per-feature results)
    60: _top_with_message,  # DescribeCluster
    61: _describe_producers,
    65: _describe_transactions,
    66: _top(),  # ListTransactions
    68: _top(),  # ConsumerGroupHeartbeat
    69: _groups_by_id("group_ids", "groups"),  # ConsumerGroupDescribe
    71: _top(),  # GetTelemetrySubscriptions
    72: _top(),  # PushTelemetry
    75: _describe_topic_partitions,
    76: _top(),  # ShareGroupHeartbeat
    77: _groups_by_id("group_ids", "groups"),  # ShareGroupDescribe
    78: _top(acquisition_lock_timeout_ms=0),  # ShareFetch
    79: _top(),  # ShareAcknowledge
    88: _top(),  # StreamsGroupHeartbeat
    89: _groups_by_id("group_ids", "groups"),  # StreamsGroupDescribe
    90: _describe_share_group_offsets,
    91: _top_with_canned,  # AlterShareGroupOffsets
    92: _top_with_canned,  # DeleteShareGroupOffsets
    93: _top_with_message,  # StreamsGroupTopologyDescriptionUpdate
}
