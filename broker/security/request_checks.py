"""The building blocks of the APIs' authorization checks (`api_checks` holds the table), around a handler.

A check refuses the whole request (the API's error response, every entry carrying the error), or takes
the entries the principal may not touch out of the request, lets the handler answer the rest and adds
the refused entries to its response with their error (TOPIC_AUTHORIZATION_FAILED...), or filters a
listing.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.security.acls import AclOperation as Op
from kafkito.broker.security.acls import ResourceType as Res
from kafkito.broker.security.authorizer import Authorizer
from kafkito.protocol.codec import build_response, response_class
from kafkito.protocol.error_response import error_response, mirror
from kafkito.protocol.errors import ErrorCode, NoErrorResponse


class Handler(Protocol):
    """What a check calls on to answer what it lets through: the API's handler, or the next check."""

    def handle(self, ctx: RequestContext, request: Any) -> Any: ...


Check = Callable[[RequestContext, Any, Handler], Any]
# An entry's refusal: its error, or None to let the handler answer it.
Decide = Callable[[Any], ErrorCode | None]

TOPIC_DENIED = ErrorCode.TOPIC_AUTHORIZATION_FAILED
GROUP_DENIED = ErrorCode.GROUP_AUTHORIZATION_FAILED
CLUSTER_DENIED = ErrorCode.CLUSTER_AUTHORIZATION_FAILED
TXN_DENIED = ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
DENIED_MESSAGE = "Authorization failed."


def auth(ctx: RequestContext) -> Authorizer:
    authorizer = ctx.authorizer
    assert authorizer is not None
    return authorizer


# -- building blocks -------------------------------------------------------------------------------


def refuse(ctx: RequestContext, request: Any, error: ErrorCode, message: str | None = None) -> Any:
    """The whole request answered with one error, as Kafka's getErrorResponse answers it; a request that
    takes no answer (Produce with acks=0) closes the connection, as in Kafka."""
    response = error_response(ctx.header.api_key, ctx.version, request, error, message)
    if response is None:
        raise NoErrorResponse(f"{error.name} for a request that takes no response")
    return response


def _mirrored(ctx: RequestContext, entry: Any, out: str, error: ErrorCode) -> Any:
    """The response entry (of `response.<out>`) answering one request entry with `error`."""
    api_key, version = ctx.header.api_key, ctx.version
    array = response_class(api_key, version)._struct.fields[out]
    mirrored = mirror(array, entry, version, error, None)
    _partitions_by_index(array, entry, mirrored, version, error)
    built = build_response(api_key, version, **{out: [mirrored]})
    return getattr(built, out)[0]


def _partitions_by_index(array: Any, entry: Any, mirrored: dict[str, Any], version: int, error: int) -> None:
    """A request entry naming its partitions by index (`partition_indexes: [0, 1]`) gets one response
    partition each, with the error (the generic mirror pairs struct arrays only)."""
    indexes = next(
        (v for n, v in _fields(entry, version) if "partition" in n and isinstance(v, list) and
         all(isinstance(i, int) for i in v)),
        None,
    )  # fmt: skip
    if not indexes:
        return
    for name, field in array.fields.items():
        if field.for_version_q(version) and field.is_struct_array() and not mirrored.get(name):
            inner = {n for n, f in field.fields.items() if f.for_version_q(version)}
            if {"partition_index", "error_code"} <= inner:
                mirrored[name] = [{"partition_index": i, "error_code": error} for i in indexes]


def _fields(entry: Any, version: int) -> list[tuple[str, Any]]:
    struct = getattr(type(entry), "_struct", None)
    if struct is None:
        return []
    return [(n, getattr(entry, n)) for n, f in struct.fields.items() if f.for_version_q(version)]


def split(ctx: RequestContext, request: Any, handler: Handler, field: str, out: str, decide: Decide) -> Any:
    """Answer the entries of `request.<field>` that `decide` refuses with their error (in `response.<out>`),
    and the others through the handler."""
    entries = list(getattr(request, field) or ())
    verdicts = [decide(entry) for entry in entries]
    if not any(v is not None for v in verdicts):
        return handler.handle(ctx, request)
    refused = [
        _mirrored(ctx, entry, out, error)
        for entry, error in zip(entries, verdicts, strict=True)
        if error is not None
    ]
    setattr(request, field, [e for e, v in zip(entries, verdicts, strict=True) if v is None])
    return then(handler.handle(ctx, request), lambda response: getattr(response, out).extend(refused))


def then(result: Any, change: Callable[[Any], object]) -> Any:
    """The handler's result, changed by `change` once it is there (an object response only)."""
    if result is None or isinstance(result, bytes):
        return result
    if inspect.isawaitable(result):
        return _later(result, change)
    change(result)
    return result


async def _later(pending: Awaitable[Any], change: Callable[[Any], object]) -> Any:
    response = await pending
    if response is not None and not isinstance(response, bytes):
        change(response)
    return response


def keep_only(response: Any, out: str, keep: Callable[[Any], bool]) -> None:
    setattr(response, out, [entry for entry in getattr(response, out) if keep(entry)])


def topic_check(op: Op, attr: str = "name") -> Callable[[RequestContext], Decide]:
    """A `decide` refusing the topics (named by each entry's `attr`) the principal may not `op`."""

    def for_request(ctx: RequestContext) -> Decide:
        authorizer = auth(ctx)

        def decide(entry: Any) -> ErrorCode | None:
            if isinstance(entry, str):
                name: str | None = entry
            elif names_topic_by_id(entry, ctx.version):
                name = topic_name(ctx, entry)  # None: no topic has the id, the handler says so
            else:
                name = getattr(entry, attr)
            if name is None or authorizer.authorize(ctx, op, Res.TOPIC, name):
                return None
            return TOPIC_DENIED

        return decide

    return for_request


def split_topics(field: str, out: str, op: Op, attr: str = "name") -> Check:
    decide = topic_check(op, attr)
    return lambda ctx, request, handler: split(ctx, request, handler, field, out, decide(ctx))


def whole(resource: Res, op: Op, attr: str, error: ErrorCode) -> Check:
    """Refuse the request unless the principal may `op` the resource named by `request.<attr>`."""

    def check(ctx: RequestContext, request: Any, handler: Handler) -> Any:
        name = getattr(request, attr)
        if name is not None and not auth(ctx).authorize(ctx, op, resource, name):
            return refuse(ctx, request, error)
        return handler.handle(ctx, request)

    return check


def cluster(op: Op) -> Check:
    """Refuse the request unless the principal may `op` the cluster."""

    def check(ctx: RequestContext, request: Any, handler: Handler) -> Any:
        if not auth(ctx).authorize_cluster(ctx, op):
            return refuse(ctx, request, CLUSTER_DENIED)
        return handler.handle(ctx, request)

    return check


def chain(*checks: Check) -> Check:
    """The checks in turn: the first refusal answers; the last check's handler is the real one."""
    if len(checks) == 1:
        return checks[0]
    first, rest = checks[0], chain(*checks[1:])

    class _Next:
        def __init__(self, handler: Handler) -> None:
            self.handler = handler

        def handle(self, ctx: RequestContext, request: Any) -> Any:
            return rest(ctx, request, self.handler)

    return lambda ctx, request, handler: first(ctx, request, _Next(handler))


def strings(field: str, out: str, resource: Res, op: Op, error: ErrorCode, key: str) -> Check:
    """Requests listing names (`request.<field>`: groups, transactional ids): each refused name gets a
    `response.<out>` entry `{key: name, error_code: error}`; the handler answers the others."""

    def check(ctx: RequestContext, request: Any, handler: Handler) -> Any:
        names = list(getattr(request, field) or ())
        authorizer = auth(ctx)
        refused = [n for n in names if not authorizer.authorize(ctx, op, resource, n)]
        if not refused:
            return handler.handle(ctx, request)
        setattr(request, field, [n for n in names if n not in refused])
        built = build_response(
            ctx.header.api_key, ctx.version, **{out: [{key: n, "error_code": error} for n in refused]}
        )
        extra = list(getattr(built, out))
        return then(handler.handle(ctx, request), lambda response: getattr(response, out).extend(extra))

    return check


def group_check(op: Op, attr: str = "group_id") -> Check:
    """Refuse the request unless the principal may `op` the group `request.<attr>`."""
    return whole(Res.GROUP, op, attr, GROUP_DENIED)


def txn_check(attr: str = "transactional_id") -> Check:
    """Refuse the request unless the principal may WRITE the transactional id `request.<attr>`."""
    return whole(Res.TRANSACTIONAL_ID, Op.WRITE, attr, TXN_DENIED)


def names_topic_by_id(entry: Any, version: int) -> bool:
    """Whether a request or response entry names its topic only by id at this version (Produce v13+,
    OffsetCommit/OffsetFetch v10+, TxnOffsetCommit v6+): its name is not on the wire and reads as ""."""
    struct = getattr(type(entry), "_struct", None)
    if struct is None:
        return False
    topic_id, name = struct.fields.get("topic_id"), struct.fields.get("name")
    return (
        topic_id is not None
        and topic_id.for_version_q(version)
        and (name is None or not name.for_version_q(version))
    )


def topic_name(ctx: RequestContext, entry: Any) -> str | None:
    """A request entry's topic name, or the name of its topic id (None: an id no topic has, or the zero
    id, which the codec reads as None). A check resolves ids through here before it authorizes, so an
    entry named by id is decided by its topic's name, as Kafka's handlers resolve ids first."""
    if isinstance(entry, str):
        return entry
    name: str | None = getattr(entry, "name", None)
    if name is None or (not name and names_topic_by_id(entry, ctx.version)):
        topic_id = getattr(entry, "topic_id", None)
        info = ctx.topics.get_by_id(topic_id) if topic_id is not None else None
        return info.name if info is not None else None
    return name
