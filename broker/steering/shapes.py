"""Where each API keeps its partitions and groups, and the error answers a fault rule gives.

A partition-level API (Produce, Fetch, ListOffsets, OffsetCommit, ...) lists topics of partitions in
its request and answers per partition: a `Shape` says which fields hold them, so a rule can match,
remove and answer single partitions. Other APIs are answered whole, with their request-level error
(Kafka's getErrorResponse: a top-level error code, or one entry per group/topic/key asked for).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any
from uuid import UUID

from kafkito.broker.steering.rules import FaultRule
from kafkito.protocol.codec import build_response, response_class
from kafkito.protocol.errors import ErrorCode

Entry = Callable[[int, ErrorCode], dict[str, Any]]
TopicName = Callable[[UUID], str | None]  # a topic id's name (requests that name topics by id)


@dataclass(frozen=True, slots=True)
class Shape:
    """Fields of one partition-level API: request topics/partitions, response topics/partitions."""

    topics: str  # the request's list of topics
    partitions: str  # a request topic's list of partitions
    index: str | None  # a request partition's index field (None: the partitions are plain ints)
    name: str  # a topic's name field, in the request and the response alike
    out_topics: str
    out_partitions: str
    entry: Entry  # a partition's error entry in the response
    versions: tuple[int, int] = (0, 0x7FFF)


def _produce(p: int, e: ErrorCode) -> dict[str, Any]:
    return dict(index=p, error_code=e, base_offset=-1, log_append_time_ms=-1, log_start_offset=-1)


def _fetch(p: int, e: ErrorCode) -> dict[str, Any]:
    return dict(
        partition_index=p,
        error_code=e,
        high_watermark=-1,
        last_stable_offset=-1,
        log_start_offset=-1,
        aborted_transactions=None,
        preferred_read_replica=-1,
        records=b"",
    )


def _list_offsets(p: int, e: ErrorCode) -> dict[str, Any]:
    return dict(partition_index=p, error_code=e, timestamp=-1, offset=-1, leader_epoch=-1)


def _plain(p: int, e: ErrorCode) -> dict[str, Any]:
    return dict(partition_index=p, error_code=e)


def _offset_fetch(p: int, e: ErrorCode) -> dict[str, Any]:
    return dict(partition_index=p, committed_offset=-1, committed_leader_epoch=-1, metadata="", error_code=e)


def _delete_records(p: int, e: ErrorCode) -> dict[str, Any]:
    return dict(partition_index=p, low_watermark=-1, error_code=e)


def _leader_epoch(p: int, e: ErrorCode) -> dict[str, Any]:
    return dict(partition=p, error_code=e, leader_epoch=-1, end_offset=-1)


def _add_partitions(p: int, e: ErrorCode) -> dict[str, Any]:
    return dict(partition_index=p, partition_error_code=e)


SHAPES: dict[int, Shape] = {
    0: Shape("topic_data", "partition_data", "index", "name", "responses", "partition_responses", _produce),
    1: Shape("topics", "partitions", "partition", "topic", "responses", "partitions", _fetch),
    2: Shape("topics", "partitions", "partition_index", "name", "topics", "partitions", _list_offsets),
    8: Shape("topics", "partitions", "partition_index", "name", "topics", "partitions", _plain),
    9: Shape("topics", "partition_indexes", None, "name", "topics", "partitions", _offset_fetch, (0, 1)),
    21: Shape("topics", "partitions", "partition_index", "name", "topics", "partitions", _delete_records),
    23: Shape("topics", "partitions", "partition", "topic", "topics", "partitions", _leader_epoch),
    24: Shape(
        "v3_and_below_topics",
        "partitions",
        None,
        "name",
        "results_by_topic_v3_and_below",
        "results_by_partition",
        _add_partitions,
        (0, 3),
    ),
    28: Shape("topics", "partitions", "partition_index", "name", "topics", "partitions", _plain),
}

# APIs whose requests name groups: the group a rule's `group` is compared with.
_GROUP_FIELDS = {8: "group_id", 11: "group_id", 12: "group_id", 13: "group_id", 14: "group_id"}
_GROUP_FIELDS |= {25: "group_id", 28: "group_id", 47: "group_id", 68: "group_id"}
_GROUP_LISTS = {15: "groups", 42: "groups_names", 69: "group_ids"}
_OFFSET_FETCH, _FIND_COORDINATOR = 9, 10
METADATA = 3  # answered by topic: the handler's answer, with the error on the matching topics


def shape_for(api_key: int, version: int) -> Shape | None:
    shape = SHAPES.get(api_key)
    if shape is None or not shape.versions[0] <= version <= shape.versions[1]:
        return None
    return shape


def check_faultable(rule: FaultRule) -> None:
    """Refuse, when it is added, a rule that could never match or never be answered."""
    api = rule.api_key
    if rule.topic is not None and api not in SHAPES and api != METADATA:
        raise ValueError(f"{rule.api} has no partitions to match a topic against")
    if rule.group is not None and not (api in _GROUP_FIELDS or api in _GROUP_LISTS or api in (9, 10)):
        raise ValueError(f"{rule.api} names no group to match against")
    if rule.error is ErrorCode.NONE or api in SHAPES or api in _WHOLE or api == METADATA:
        return
    latest = response_class(api, _latest_version(api))
    if "error_code" not in latest._struct.fields:
        raise ValueError(f"{rule.api} has no request-level error to answer with (a delay is possible)")


def _latest_version(api_key: int) -> int:
    from kafkito.broker.handlers import HANDLERS

    handler = HANDLERS.get(api_key)
    return handler.VERSIONS[1] if handler is not None else 0


def groups_of(api_key: int, request: Any) -> list[str]:
    """The groups a request names (empty for an API that names none)."""
    fld = _GROUP_FIELDS.get(api_key)
    if fld is not None:
        return [getattr(request, fld, None) or ""]
    fld = _GROUP_LISTS.get(api_key)
    if fld is not None:
        return list(getattr(request, fld, None) or ())
    if api_key == _OFFSET_FETCH:
        groups = getattr(request, "groups", None)
        if groups:
            return [g.group_id for g in groups]
        return [getattr(request, "group_id", None) or ""]
    if api_key == _FIND_COORDINATOR and getattr(request, "key_type", 0) == 0:
        keys = getattr(request, "coordinator_keys", None)
        return list(keys) if keys else [getattr(request, "key", None) or ""]
    return []


def topic_name(topic: Any, shape: Shape, by_id: TopicName) -> str | None:
    name: str | None = getattr(topic, shape.name, None)
    if not name and (topic_id := getattr(topic, "topic_id", None)) is not None:
        name = by_id(topic_id)  # the versions that name topics by id leave the name empty
    return name


def partitions_of(request: Any, shape: Shape) -> Iterator[tuple[Any, Any, int]]:
    """(request topic, request partition, index) for every partition the request carries."""
    for topic in getattr(request, shape.topics, None) or ():
        for part in getattr(topic, shape.partitions) or ():
            yield topic, part, part if shape.index is None else getattr(part, shape.index)


def matches(rule: FaultRule, api_key: int, request: Any, shape: Shape | None, by_id: TopicName) -> bool:
    """Whether `request` is one the rule answers (its client id is checked by the caller)."""
    if rule.group is not None and rule.group not in groups_of(api_key, request):
        return False
    if rule.topic is None:
        return True
    if api_key == METADATA:
        asked = getattr(request, "topics", None)
        if asked is None:
            return True  # every topic
        return any((t.name or (by_id(t.topic_id) if t.topic_id else None)) == rule.topic for t in asked)
    if shape is None:
        return False
    carried = partitions_of(request, shape)
    return any(_selects(rule, topic, index, shape, by_id) for topic, _, index in carried)


def _selects(rule: FaultRule, topic: Any, index: int, shape: Shape, by_id: TopicName) -> bool:
    if rule.partition is not None and index != rule.partition:
        return False
    return topic_name(topic, shape, by_id) == rule.topic


def take_faulted(rule: FaultRule, request: Any, shape: Shape, by_id: TopicName) -> tuple[list[Any], bool]:
    """Remove the partitions the rule selects from `request`; returns their response topics and
    whether any partition is left to serve."""
    faulted: list[Any] = []
    left = False
    for topic in getattr(request, shape.topics, None) or ():
        keep: list[Any] = []
        hit: list[int] = []
        for part in getattr(topic, shape.partitions) or ():
            index = part if shape.index is None else getattr(part, shape.index)
            if rule.topic is None or _selects(rule, topic, index, shape, by_id):
                hit.append(index)
            else:
                keep.append(part)
        if hit:
            faulted.append(_out_topic(topic, shape, [shape.entry(i, rule.error) for i in hit]))
            setattr(topic, shape.partitions, keep)
        left = left or bool(keep)
    return faulted, left


def _out_topic(topic: Any, shape: Shape, entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        shape.name: getattr(topic, shape.name, None),
        "topic_id": getattr(topic, "topic_id", None),
        shape.out_partitions: entries,
    }


def merge(response: Any, shape: Shape, faulted: list[Any], api_key: int, version: int) -> Any:
    """Add the faulted partitions' error entries to a response the handler built for the others."""
    topic_cls = response_class(api_key, version)._struct.fields[shape.out_topics]
    topics = list(getattr(response, shape.out_topics) or ())
    for out in faulted:
        entries = out.pop(shape.out_partitions)
        parts_field = topic_cls.fields[shape.out_partitions]
        made = [parts_field.data_class(**e) for e in entries]
        same = next((t for t in topics if _same_topic(t, out, shape)), None)
        if same is not None:
            setattr(same, shape.out_partitions, list(getattr(same, shape.out_partitions)) + made)
        else:
            fitted = {k: v for k, v in out.items() if k in topic_cls.fields}
            topics.append(topic_cls.data_class(**fitted, **{shape.out_partitions: made}))
    setattr(response, shape.out_topics, topics)
    return response


def _same_topic(answered: Any, faulted: dict[str, Any], shape: Shape) -> bool:
    """Whether the handler's topic entry is the faulted partitions' topic: by id when the request named
    it by id (the handler's entry may hold the name it resolved, the request's is empty), else by name."""
    topic_id = faulted["topic_id"]
    if topic_id is not None:
        return bool(getattr(answered, "topic_id", None) == topic_id)
    return bool(getattr(answered, shape.name, None) == faulted[shape.name])


def partition_error_response(api_key: int, version: int, shape: Shape, faulted: list[Any]) -> Any:
    topic_fields = response_class(api_key, version)._struct.fields[shape.out_topics].fields
    fitted = [{k: v for k, v in out.items() if k in topic_fields} for out in faulted]  # ListOffsets: no id
    return build_response(api_key, version, **{shape.out_topics: fitted})


# -- request-level answers ---------------------------------------------------------------------


def _find_coordinator(request: Any, version: int, error: ErrorCode) -> dict[str, Any]:
    if version < 4:
        return dict(error_code=error, node_id=-1, host="", port=-1)
    keys = request.coordinator_keys or []
    return dict(coordinators=[dict(key=k, node_id=-1, host="", port=-1, error_code=error) for k in keys])


def _offset_fetch_whole(request: Any, version: int, error: ErrorCode) -> dict[str, Any]:
    if version >= 8:
        return dict(groups=[dict(group_id=g.group_id, topics=[], error_code=error) for g in request.groups])
    return dict(error_code=error, topics=[])


def _describe_groups(request: Any, version: int, error: ErrorCode) -> dict[str, Any]:
    return dict(groups=[dict(group_id=g, error_code=error, members=[]) for g in request.groups])


def _consumer_group_describe(request: Any, version: int, error: ErrorCode) -> dict[str, Any]:
    return dict(groups=[dict(group_id=g, error_code=error, members=[]) for g in request.group_ids])


def _delete_groups(request: Any, version: int, error: ErrorCode) -> dict[str, Any]:
    return dict(results=[dict(group_id=g, error_code=error) for g in request.groups_names])


def _create_topics(request: Any, version: int, error: ErrorCode) -> dict[str, Any]:
    return dict(topics=[dict(name=t.name, error_code=error) for t in request.topics])


def _delete_topics(request: Any, version: int, error: ErrorCode) -> dict[str, Any]:
    names = request.topic_names if version < 6 else [t.name for t in request.topics]
    return dict(responses=[dict(name=n, error_code=error) for n in names])


def _join_group(request: Any, version: int, error: ErrorCode) -> dict[str, Any]:
    return dict(error_code=error, generation_id=-1, member_id=request.member_id, leader="")


def _resources(field: str, with_configs: bool) -> Callable[[Any, int, ErrorCode], dict[str, Any]]:
    def build(request: Any, version: int, error: ErrorCode) -> dict[str, Any]:
        extra: dict[str, Any] = {"configs": []} if with_configs else {}
        return {
            field: [
                dict(error_code=error, resource_type=r.resource_type, resource_name=r.resource_name, **extra)
                for r in request.resources
            ]
        }

    return build


def _create_partitions(request: Any, version: int, error: ErrorCode) -> dict[str, Any]:
    return dict(results=[dict(name=t.name, error_code=error) for t in request.topics])


def _describe_transactions(request: Any, version: int, error: ErrorCode) -> dict[str, Any]:
    ids = request.transactional_ids
    return dict(transaction_states=[dict(transactional_id=i, error_code=error, topics=[]) for i in ids])


_WHOLE: dict[int, Callable[[Any, int, ErrorCode], dict[str, Any]]] = {
    9: _offset_fetch_whole,
    10: _find_coordinator,
    11: _join_group,
    15: _describe_groups,
    19: _create_topics,
    20: _delete_topics,
    32: _resources("results", with_configs=True),
    33: _resources("responses", with_configs=False),
    37: _create_partitions,
    42: _delete_groups,
    44: _resources("responses", with_configs=False),
    65: _describe_transactions,
    69: _consumer_group_describe,
}


def request_error_response(api_key: int, version: int, request: Any, error: ErrorCode) -> Any:
    """The whole request answered with `error` (an API without partitions, or a rule without a topic)."""
    builder = _WHOLE.get(api_key)
    if builder is not None:
        return build_response(api_key, version, **builder(request, version, error))
    fields = response_class(api_key, version)._struct.fields
    err = fields.get("error_code")
    if err is None or not err.for_version_q(version):
        raise ValueError(f"api {api_key} v{version} has no request-level error code")
    return build_response(api_key, version, error_code=error)


def fault_metadata(response: Any, rule: FaultRule) -> Any:
    """The handler's Metadata answer with the rule's error on the matching topics (all without a topic),
    listed without partitions, as Kafka lists a topic it cannot serve."""
    for topic in response.topics or ():
        if rule.topic is None or topic.name == rule.topic:
            topic.error_code = rule.error
            topic.partitions = []
    return response
