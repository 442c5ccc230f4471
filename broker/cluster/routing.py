"""A request sent to a node that cannot serve it, answered as Kafka's wrong node answers it.

Partition requests (Produce, Fetch, ListOffsets, DeleteRecords, OffsetForLeaderEpoch) get
NOT_LEADER_OR_FOLLOWER for each partition the node does not lead, and the rest are served; a group
request to a node that is not the group's coordinator (the leader of its `__consumer_offsets`
partition) and a transaction request to a node that is not the transactional id's coordinator (the
leader of its `__transaction_state` partition) get NOT_COORDINATOR. ListGroups and
ListTransactions list only what the node coordinates, as each Kafka broker does. Every other
request (Metadata, FindCoordinator, admin requests a Kafka broker forwards to its controller) is
served by any node. Only multi-node clusters take this path (through dispatch's steered branch).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from kafkito.broker.spliced import Spliced
from kafkito.broker.steering.shapes import (
    SHAPES,
    Shape,
    groups_of,
    partition_error_response,
    shape_for,
    topic_name,
)
from kafkito.protocol.codec import encode_response
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.cluster.topology import Topology
    from kafkito.broker.steering.intercept import Request

Reply = bytes | Spliced | None  # Spliced: a Fetch frame (it never reaches steering's own code)
Next = Callable[["Request"], Reply | Awaitable[Reply]]

_PRODUCE = 0
PARTITION_APIS = frozenset({0, 1, 2, 21, 23})
# APIs routed to the group coordinator (AddOffsetsToTxn names a group but goes to the transaction's).
GROUP_APIS = frozenset({8, 9, 11, 12, 13, 14, 15, 28, 42, 47, 68, 69})
TRANSACTION_APIS = frozenset({22, 24, 25, 26, 65})
_LIST_GROUPS, _LIST_TRANSACTIONS = 16, 66


def route(request: Request, then: Next) -> Reply | Awaitable[Reply]:
    """Answer what this node cannot serve; hand the rest of the request to `then`."""
    api = request.header.api_key
    cluster = request.context_type.cluster
    topology = cluster.topology
    node = cluster.node_id
    if api in PARTITION_APIS:
        return _partitions(request, topology, node, then)
    if api in GROUP_APIS:
        groups = groups_of(api, request.body)
        if any(topology.group_coordinator_of(g) != node for g in groups):
            return _not_coordinator(request)
    elif api in TRANSACTION_APIS:
        ids = transactional_ids(api, request.header.api_version, request.body)
        if any(topology.transaction_coordinator_of(t) != node for t in ids):
            return _not_coordinator(request)
    elif api == _LIST_GROUPS:
        return _listed(request, "groups", "group_id", lambda g: topology.group_coordinator_of(g) == node)
    elif api == _LIST_TRANSACTIONS:
        keep = lambda t: topology.transaction_coordinator_of(t) == node  # noqa: E731
        return _listed(request, "transaction_states", "transactional_id", keep)
    return then(request)


def transactional_ids(api: int, version: int, body: Any) -> list[str]:
    """The transactional ids a transaction request is for (none: InitProducerId of an idempotent producer)."""
    if api == 65:
        return list(body.transactional_ids or ())
    if api == 24:
        if version <= 3:
            return [body.v3_and_below_transactional_id]
        return [t.transactional_id for t in body.transactions or ()]
    txn_id = getattr(body, "transactional_id", None)
    return [] if txn_id is None else [txn_id]


def _partitions(request: Request, topology: Topology, node: int, then: Next) -> Reply | Awaitable[Reply]:
    header = request.header
    shape = shape_for(header.api_key, header.api_version)
    if shape is None:
        return then(request)
    misrouted = _take_misrouted(request, shape, topology, node)
    if not misrouted:
        return then(request)
    if not any(getattr(t, shape.partitions) for t in getattr(request.body, shape.topics)):
        if header.api_key == _PRODUCE and request.body.acks == 0:
            return None
        response = partition_error_response(header.api_key, header.api_version, shape, misrouted)
        return encode_response(response, header.correlation_id)
    from kafkito.broker.steering.intercept import serve_partly

    return serve_partly(request, shape, misrouted)


def _take_misrouted(request: Request, shape: Shape, topology: Topology, node: int) -> list[dict[str, Any]]:
    """Remove from the request the partitions another node leads; returns their error entries.

    The check is one dict lookup per partition (`Topology.leaders`); a partition not placed yet (a
    topic created since) is placed on first sight, an unknown one is left for the handler to refuse.
    """
    leaders = topology.leaders
    index_field = shape.index
    misrouted: list[dict[str, Any]] = []
    for topic in getattr(request.body, shape.topics, None) or ():
        name = topic_name(topic, shape, request.topic_name)
        parts = getattr(topic, shape.partitions) or ()
        hit: list[int] = []
        for part in parts:
            index = part if index_field is None else getattr(part, index_field)
            leader = leaders.get((name, index))  # type: ignore[arg-type]
            if leader is None and name is not None:
                leader = topology.leader_of(name, index)
            if leader is not None and leader != node:
                hit.append(index)
        if hit:
            keep = [p for p in parts if (p if index_field is None else getattr(p, index_field)) not in hit]
            setattr(topic, shape.partitions, keep)
            entries = [shape.entry(i, ErrorCode.NOT_LEADER_OR_FOLLOWER) for i in hit]
            misrouted.append(_out_topic(topic, shape.name, shape.out_partitions, entries))
    return misrouted


def _out_topic(topic: Any, name_field: str, parts_field: str, entries: list[Any]) -> dict[str, Any]:
    return {
        name_field: getattr(topic, name_field, None),
        "topic_id": getattr(topic, "topic_id", None),
        parts_field: entries,
    }


def _not_coordinator(request: Request) -> Reply:
    """The whole request answered NOT_COORDINATOR (per partition where the API answers per partition)."""
    from kafkito.broker.steering.shapes import request_error_response

    header = request.header
    api, version = header.api_key, header.api_version
    shape = shape_for(api, version) if api in SHAPES else None
    if shape is not None:
        everything: list[dict[str, Any]] = []
        for topic in getattr(request.body, shape.topics, None) or ():
            parts = getattr(topic, shape.partitions) or ()
            indexes = [p if shape.index is None else getattr(p, shape.index) for p in parts]
            entries = [shape.entry(i, ErrorCode.NOT_COORDINATOR) for i in indexes]
            everything.append(_out_topic(topic, shape.name, shape.out_partitions, entries))
        response = partition_error_response(api, version, shape, everything)
    else:
        response = request_error_response(api, version, request.body, ErrorCode.NOT_COORDINATOR)
    return encode_response(response, header.correlation_id)


def _listed(request: Request, field: str, key: str, keep: Callable[[str], bool]) -> Reply | Awaitable[Reply]:
    """The handler's listing with only the entries this node coordinates."""
    result = request.handle()

    def filtered(response: Any) -> Reply:
        setattr(response, field, [e for e in getattr(response, field) or () if keep(getattr(e, key))])
        return encode_response(response, request.header.correlation_id)

    if inspect.isawaitable(result):
        return _later(result, filtered)
    return filtered(result)


async def _later(pending: Awaitable[Any], then: Callable[[Any], Reply]) -> Reply:
    return then(await pending)
