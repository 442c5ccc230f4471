"""Turn one request frame into its encoded response: version checks, decode, handler call, encode (no I/O).

A handler that raises is answered UNKNOWN_SERVER_ERROR in its API's error shape (the connection stays
open, the traceback is logged once); a parked request is answered at its deadline if its completion
never comes (`parked_deadline.py`).
"""

from __future__ import annotations

import inspect
import struct
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import structlog

from kafkito.broker import logging_setup
from kafkito.broker.handlers import HANDLERS, KAFKA4_MINIMUMS, VERSIONS, api_versions
from kafkito.broker.handlers.registry import Handler
from kafkito.broker.parked_deadline import deadline_ms, timeout_error, with_deadline
from kafkito.broker.pinned_versions import PinnedVersions, pinned
from kafkito.broker.spliced import Spliced
from kafkito.broker.steering.intercept import Request, steer
from kafkito.protocol.codec import (
    MESSAGES,
    REQUESTS,
    MalformedRequest,
    RequestHeader,
    build_response,
    decode_request,
    encode_response,
    frame_body,
    frame_response_body,
    is_flexible,
    parse_request_header,
    response_header_v1,
)
from kafkito.protocol.error_response import error_response
from kafkito.protocol.errors import ErrorCode, NoErrorResponse

if TYPE_CHECKING:
    from kafkito.broker.app import Broker
    from kafkito.broker.context import RequestContext

log = structlog.get_logger("kafkito.dispatch")

API_VERSIONS_KEY = 18


class CloseConnection(Exception):
    """The request cannot be answered; Kafka closes the connection in this case too."""


# Spliced: a Fetch frame whose records are still in segment files (sent with sendfile).
Reply = bytes | Spliced | None


# (api_key, api_version) -> (handler, flexible request header, response header v1, the handler's own
# body decoder or None), once accepted. Versions that Kafka 4 removed (KIP-896) are not remembered
# here: whether a broker answers them is its own (`kafkito.api.versions.kafka4.minimums`).
_Route = tuple[Handler, bool, bool, Callable[[bytes, int, int], Any] | None]
_routes: dict[tuple[int, int], _Route] = {}
_PEEK = struct.Struct(">hhi")


class _Unserved:
    """The handler of an API Kafka has and kafkito does not serve: UNSUPPORTED_VERSION, not a close."""

    def __init__(self, api_key: int) -> None:
        self.API_KEY = api_key
        self.VERSIONS = (0, REQUESTS[api_key].max_version)

    def handle(self, ctx: RequestContext, request: Any) -> Any:
        message = f"kafkito does not serve {type(request).__name__} (API key {self.API_KEY})"
        return error_response(self.API_KEY, ctx.version, request, ErrorCode.UNSUPPORTED_VERSION, message)


def _route(broker: Broker, api_key: int, api_version: int) -> _Route | None:
    """Look up (and remember) how to answer one API version; None for ApiVersions at a version we lack.

    Raises CloseConnection where Kafka closes too: an unknown API key, an unsupported version of an
    API other than ApiVersions, a version Kafka 4 removed on a broker keeping Kafka 4's minimums.
    """
    release = broker.config.kafkito_as_version
    if release is not None:
        return _pinned_route(pinned(release), api_key, api_version)
    versions = VERSIONS.get(api_key)
    if versions is None:
        return _unserved(api_key, api_version)
    lo, hi = versions
    if not lo <= api_version <= hi:
        if api_key == API_VERSIONS_KEY:
            return None
        raise CloseConnection(f"unsupported version {api_version} of api key {api_key} (supported {lo}-{hi})")
    kafka4_min = KAFKA4_MINIMUMS.get(api_key, 0)
    if api_version < kafka4_min and broker.config.kafkito_api_versions_kafka4_minimums:
        raise CloseConnection(f"version {api_version} of api key {api_key} was removed in Kafka 4 (KIP-896)")
    return _accepted(api_key, api_version)


def _pinned_route(versions: PinnedVersions, api_key: int, api_version: int) -> _Route | None:
    """`_route` for a broker pinned to a Kafka release (`kafkito.as.version`): that release's ranges,
    and a close where that Kafka closes (an API it lacks, a version outside its range)."""
    accepted = versions.accepted.get(api_key)
    if accepted is None:
        kafka = versions.kafka.get(api_key)
        if kafka is None:
            raise CloseConnection(f"api key {api_key} is unknown to Kafka {versions.release}")
        if not kafka[0] <= api_version <= kafka[1]:
            raise CloseConnection(f"unsupported version {api_version} of api key {api_key}")
        return _unserved(api_key, api_version)
    lo, hi = accepted
    if not lo <= api_version <= hi:
        if api_key == API_VERSIONS_KEY and api_version > hi:
            return None
        raise CloseConnection(
            f"unsupported version {api_version} of api key {api_key} (Kafka {versions.release}: {lo}-{hi})"
        )
    return _routes.get((api_key, api_version)) or _accepted(api_key, api_version)


def _accepted(api_key: int, api_version: int) -> _Route:
    """The route of a version the broker accepts (remembered unless Kafka 4 removed it)."""
    handler = HANDLERS[api_key]  # imported on its API's first request
    select = getattr(handler, "handler_for_version", None)
    if select is not None:  # a module answering some versions with another handler (Produce v0-v2)
        handler = select(api_version)
    route = (
        handler,
        is_flexible(api_key, api_version),
        response_header_v1(api_key, api_version),
        getattr(handler, "decode", None),
    )
    if api_version >= KAFKA4_MINIMUMS.get(api_key, 0):
        _routes[api_key, api_version] = route
    return route


def _unserved(api_key: int, api_version: int) -> _Route:
    """A known API without a handler is answered UNSUPPORTED_VERSION; an unknown one closes."""
    if api_key not in MESSAGES or not 0 <= api_version <= REQUESTS[api_key].max_version:
        raise CloseConnection(f"unsupported api key {api_key} (version {api_version})")
    route = _routes[api_key, api_version] = (
        _Unserved(api_key),
        is_flexible(api_key, api_version),
        response_header_v1(api_key, api_version),
        None,
    )
    return route


def _api_versions_too_new(broker: Broker, correlation_id: int) -> bytes:
    """KIP-511: an ApiVersions request newer than ours is answered in v0 with UNSUPPORTED_VERSION and,
    as Kafka does, only ApiVersions' own range: the client retries with the newest version we take.
    A broker pinned to a release before 2.4 lists no APIs, as those did."""
    release = broker.config.kafkito_as_version
    if release is None:
        keys = api_versions.api_keys(broker.config.kafkito_api_versions_kafka4_minimums)
    else:
        versions = pinned(release)
        keys = api_versions.pinned_api_keys(versions) if versions.own_range_on_unsupported else []
    response = build_response(
        API_VERSIONS_KEY,
        0,
        error_code=ErrorCode.UNSUPPORTED_VERSION,
        api_keys=[key for key in keys if key["api_key"] == API_VERSIONS_KEY],
    )
    return encode_response(response, correlation_id)


def dispatch(
    broker: Broker, frame: bytes, peer_host: str, context_type: type[RequestContext] | None = None
) -> Reply | Awaitable[Reply]:
    """Answer one request frame: encoded response bytes, None (no response), or an awaitable of either.

    `context_type` is the node's the frame came to (`broker.context_type` when None: the first node).

    A handler returns a response object, or `bytes` holding a body it encoded itself (hot paths), or a
    Spliced body (Fetch: records left in their files), or None.
    A handler module that declares `decode(frame, offset, version)` reads its own request bodies.

    Raises CloseConnection for anything that must close the connection (malformed frame, unknown API,
    unsupported version of an API other than ApiVersions). A known API without a handler is answered
    UNSUPPORTED_VERSION.
    """
    try:
        api_key, api_version, correlation_id = _PEEK.unpack_from(frame)
    except struct.error:
        raise CloseConnection(f"request frame of {len(frame)} bytes is shorter than a header") from None
    # A broker pinned to a Kafka release (`kafkito.as.version`) checks its ranges first (`_route`).
    unpinned = broker.config.kafkito_as_version is None
    route = (unpinned and _routes.get((api_key, api_version))) or _route(broker, api_key, api_version)
    if route is None:
        return _api_versions_too_new(broker, correlation_id)
    handler, flexible, header_v1, decode = route
    header, request = _read(frame, flexible, decode, api_version)
    if logging_setup.debug_enabled:  # a filtered structlog call still costs ~0.9 µs: skip it on the hot path
        log.debug(
            "request",
            api=api_key,
            version=api_version,
            correlation_id=correlation_id,
            client_id=header.client_id,
            peer=peer_host,
        )
    context_type = context_type or broker.context_type
    # A fault rule or black hole is in force (kafkito.testing), or several nodes; or ACLs are enforced.
    if broker.steered or context_type.authorizer is not None:
        return _steered(Request(broker, handler, header, request, peer_host, header_v1, context_type))
    # `answer`, inlined: one call less per request on the hot path.
    try:
        result = handler.handle(context_type(header, peer_host), request)
        if result is None:
            return None
        if isinstance(result, bytes):
            return frame_body(result, correlation_id, header_v1)
        if isinstance(result, Spliced):
            return result.framed(correlation_id, header_v1)
        if inspect.isawaitable(result):
            return _finish(parked(broker, result, header, request, peer_host), header, request, peer_host)
        return encode_response(result, correlation_id)
    except Exception as exc:
        return _failure_reply(exc, header, request, peer_host)


def _read(
    frame: bytes, flexible: bool, decode: Callable[[bytes, int, int], Any] | None, api_version: int
) -> tuple[RequestHeader, Any]:
    """The request's header and body; a malformed frame closes the connection (CloseConnection)."""
    try:
        header = parse_request_header(frame, flexible)
        if decode is None:
            return header, decode_request(frame, header)
        return header, decode(frame, header.body_offset, api_version)
    except MalformedRequest as exc:
        raise CloseConnection(str(exc)) from exc


def _steered(request: Request) -> Reply | Awaitable[Reply]:
    """The slower path: the API's authorization checks (when the broker has an authorizer), steering."""
    if request.context_type.authorizer is not None:
        from kafkito.broker.security.api_checks import guarded

        request.handler = guarded(request.handler)
    request.handler = _Answered(request.handler, request.broker)  # failures answered, parked ones timed
    header = request.header
    try:
        if request.broker.steered:
            request.handler = _Materialized(request.handler)  # steering reads a hand-encoded body as bytes
            return steer(request)
        return request.serve()
    except Exception as exc:  # the encoding of an answer, or steering itself
        return _failure_reply(exc, header, request.body, request.peer_host)


def answer(
    handler: Handler,
    header: RequestHeader,
    request: Any,
    peer_host: str,
    header_v1: bool,
    context_type: type[RequestContext],
) -> Reply | Awaitable[Reply]:
    """Call the handler on a decoded request and encode what it returns (the end of `dispatch`)."""
    result = handler.handle(context_type(header, peer_host), request)
    if result is None:
        return None
    if isinstance(result, bytes):
        return frame_body(result, header.correlation_id, header_v1)
    if isinstance(result, Spliced):
        return result.framed(header.correlation_id, header_v1)
    if inspect.isawaitable(result):
        return _finish(result, header, request, peer_host)
    return encode_response(result, header.correlation_id)


async def _finish(pending: Awaitable[Any], header: RequestHeader, request: Any, peer_host: str) -> Reply:
    response = await pending
    try:
        if response is None:
            return None
        if isinstance(response, bytes):
            return frame_response_body(response, header.correlation_id, header.api_key, header.api_version)
        if isinstance(response, Spliced):
            return response.framed(
                header.correlation_id, response_header_v1(header.api_key, header.api_version)
            )
        return encode_response(response, header.correlation_id)
    except Exception as exc:  # a response its API's codec cannot encode
        return _failure_reply(exc, header, request, peer_host)


def _failure_reply(exc: Exception, header: RequestHeader, request: Any, peer_host: str) -> bytes:
    """What a failure while answering a request ends in: a close where Kafka closes, else `failed`."""
    if isinstance(exc, CloseConnection):
        raise exc
    if isinstance(exc, NoErrorResponse | MalformedRequest):
        raise CloseConnection(str(exc)) from exc
    return encode_response(failed(header, request, peer_host, exc), header.correlation_id)


def failed(header: RequestHeader, request: Any, peer_host: str, exc: BaseException) -> Any:
    """The answer to a request whose handling raised: UNKNOWN_SERVER_ERROR in its API's error shape, as
    Kafka answers an unexpected exception; the traceback is logged once. A request that takes no
    answer (Produce with acks=0) closes the connection instead, as in Kafka."""
    log.error(
        "request.failed",
        api=header.api_key,
        version=header.api_version,
        correlation_id=header.correlation_id,
        client_id=header.client_id,
        peer=peer_host,
        exc_info=exc,
    )
    response = error_response(header.api_key, header.api_version, request, ErrorCode.UNKNOWN_SERVER_ERROR)
    if response is None:
        raise CloseConnection("internal error while handling a request that takes no response") from exc
    return response


def parked(
    broker: Broker, pending: Awaitable[Any], header: RequestHeader, request: Any, peer_host: str
) -> Any:
    """A parked request's answer: the handler's, UNKNOWN_SERVER_ERROR if it fails, or its API's timeout
    error once its deadline passes on the broker's timer (`parked_deadline.py`)."""
    api_key, version = header.api_key, header.api_version
    delay = deadline_ms(broker.config, api_key, version, request)

    def at_deadline() -> Any:
        log.warning(
            "request.deadline_passed",
            api=api_key,
            version=version,
            correlation_id=header.correlation_id,
            client_id=header.client_id,
            peer=peer_host,
            deadline_ms=delay,
        )
        response = error_response(api_key, version, request, timeout_error(api_key))
        if response is None:
            raise CloseConnection("a parked request that takes no response passed its deadline")
        return response

    def on_failure(exc: BaseException) -> Any:
        if isinstance(exc, CloseConnection):
            raise exc
        if isinstance(exc, NoErrorResponse | MalformedRequest):
            raise CloseConnection(str(exc)) from exc
        return failed(header, request, peer_host, exc)

    return with_deadline(broker.timer, delay, pending, at_deadline, on_failure)


class _Answered:
    """A handler whose failures are answered UNKNOWN_SERVER_ERROR and whose parked requests have a
    deadline (the steered path; the plain path does the same inline)."""

    __slots__ = ("API_KEY", "VERSIONS", "_broker", "_handler")

    def __init__(self, handler: Handler, broker: Broker) -> None:
        self._handler = handler
        self._broker = broker
        self.API_KEY = handler.API_KEY
        self.VERSIONS = handler.VERSIONS

    def handle(self, ctx: RequestContext, request: Any) -> Any:
        try:
            result = self._handler.handle(ctx, request)
        except CloseConnection:
            raise
        except (NoErrorResponse, MalformedRequest) as exc:
            raise CloseConnection(str(exc)) from exc
        except Exception as exc:
            return failed(ctx.header, request, ctx.peer_host, exc)
        if inspect.isawaitable(result):
            return parked(self._broker, result, ctx.header, request, ctx.peer_host)
        return result


class _Materialized:
    """A handler whose Spliced bodies come back as bytes (the steered path reads them)."""

    __slots__ = ("API_KEY", "VERSIONS", "_handler")

    def __init__(self, handler: Handler) -> None:
        self._handler = handler
        self.API_KEY = handler.API_KEY
        self.VERSIONS = handler.VERSIONS

    def handle(self, ctx: RequestContext, request: Any) -> Any:
        result = self._handler.handle(ctx, request)
        if isinstance(result, Spliced):
            return result.materialize()
        if inspect.isawaitable(result):
            return _materialize_later(result)
        return result


async def _materialize_later(pending: Awaitable[Any]) -> Any:
    result = await pending
    return result.materialize() if isinstance(result, Spliced) else result
