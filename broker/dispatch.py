"""Turn one request frame into its encoded response: version checks, decode, handler call, encode (no I/O)."""

from __future__ import annotations

import inspect
import struct
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import structlog

from kafkito.broker import logging_setup
from kafkito.broker.handlers import HANDLERS, VERSIONS, api_versions
from kafkito.broker.handlers.registry import Handler
from kafkito.broker.steering.intercept import Request, steer
from kafkito.protocol.codec import (
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
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.app import Broker

log = structlog.get_logger("kafkito.dispatch")

API_VERSIONS_KEY = 18


class CloseConnection(Exception):
    """The request cannot be answered; Kafka closes the connection in this case too."""


Reply = bytes | None


# (api_key, api_version) -> (handler, flexible request header, response header v1, the handler's own
# body decoder or None), once accepted.
_Route = tuple[Handler, bool, bool, Callable[[bytes, int, int], Any] | None]
_routes: dict[tuple[int, int], _Route] = {}
_PEEK = struct.Struct(">hhi")


def _route(api_key: int, api_version: int) -> _Route | None:
    """Look up and remember how to answer one API version; None for ApiVersions at a version we lack.

    Raises CloseConnection for an unknown API or an unsupported version of another API.
    """
    versions = VERSIONS.get(api_key)
    if versions is None:
        raise CloseConnection(f"unsupported api key {api_key}")
    lo, hi = versions
    if not lo <= api_version <= hi:
        if api_key == API_VERSIONS_KEY:
            return None
        raise CloseConnection(f"unsupported version {api_version} of api key {api_key} (supported {lo}-{hi})")
    handler = HANDLERS[api_key]  # imported on its API's first request
    route = _routes[api_key, api_version] = (
        handler,
        is_flexible(api_key, api_version),
        response_header_v1(api_key, api_version),
        getattr(handler, "decode", None),
    )
    return route


def dispatch(broker: Broker, frame: bytes, peer_host: str) -> Reply | Awaitable[Reply]:
    """Answer one request frame: encoded response bytes, None (no response), or an awaitable of either.

    A handler returns a response object, or `bytes` holding a body it encoded itself (hot paths), or None.
    A handler module that declares `decode(frame, offset, version)` reads its own request bodies.

    Raises CloseConnection for anything that must close the connection (malformed frame, unknown API,
    unsupported version of an API other than ApiVersions).
    """
    try:
        api_key, api_version, correlation_id = _PEEK.unpack_from(frame)
    except struct.error:
        raise CloseConnection(f"request frame of {len(frame)} bytes is shorter than a header") from None
    route = _routes.get((api_key, api_version))
    if route is None:
        route = _route(api_key, api_version)
        if route is None:
            # KIP-511: answer with v0 and our ranges so the client can downgrade.
            response = build_response(
                API_VERSIONS_KEY,
                0,
                error_code=ErrorCode.UNSUPPORTED_VERSION,
                api_keys=api_versions.api_keys(),
            )
            return encode_response(response, correlation_id)
    handler, flexible, header_v1, decode = route
    try:
        header = parse_request_header(frame, flexible)
        body_at = header.body_offset
        request = decode_request(frame, header) if decode is None else decode(frame, body_at, api_version)
    except MalformedRequest as exc:
        raise CloseConnection(str(exc)) from exc
    if logging_setup.debug_enabled:  # a filtered structlog call still costs ~0.9 µs: skip it on the hot path
        log.debug(
            "request",
            api=api_key,
            version=api_version,
            correlation_id=correlation_id,
            client_id=header.client_id,
            peer=peer_host,
        )
    if broker.steered:  # a test's fault rule or black hole is in force (kafkito.testing)
        return steer(Request(broker, handler, header, request, peer_host, header_v1))
    # `answer`, inlined: one call less per request on the hot path.
    result = handler.handle(broker.context_type(header, peer_host), request)
    if result is None:
        return None
    if isinstance(result, bytes):
        return frame_body(result, correlation_id, header_v1)
    if inspect.isawaitable(result):
        return _finish(result, header)
    return encode_response(result, correlation_id)


def answer(
    broker: Broker, handler: Handler, header: RequestHeader, request: Any, peer_host: str, header_v1: bool
) -> Reply | Awaitable[Reply]:
    """Call the handler on a decoded request and encode what it returns (the end of `dispatch`)."""
    result = handler.handle(broker.context_type(header, peer_host), request)
    if result is None:
        return None
    if isinstance(result, bytes):
        return frame_body(result, header.correlation_id, header_v1)
    if inspect.isawaitable(result):
        return _finish(result, header)
    return encode_response(result, header.correlation_id)


async def _finish(pending: Awaitable[Any], header: RequestHeader) -> Reply:
    response = await pending
    if response is None:
        return None
    if isinstance(response, bytes):
        return frame_response_body(response, header.correlation_id, header.api_key, header.api_version)
    return encode_response(response, header.correlation_id)
