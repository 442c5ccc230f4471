"""Turn one request frame into its encoded response: version checks, decode, handler call, encode (no I/O)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

import structlog

from broker import logs
from broker.context import RequestContext
from broker.handlers import HANDLERS, api_versions
from protocol.codec import (
    MalformedRequest,
    RequestHeader,
    build_response,
    decode_request,
    encode_response,
    frame_response_body,
    is_flexible,
    parse_request_header,
    peek_key_version,
)
from protocol.errors import ErrorCode

if TYPE_CHECKING:
    from broker.app import Broker

log = structlog.get_logger("kafkito.dispatch")

API_VERSIONS_KEY = 18


class CloseConnection(Exception):
    """The request cannot be answered; Kafka closes the connection in this case too."""


Reply = bytes | None


def dispatch(broker: Broker, frame: bytes, peer_host: str) -> Reply | Awaitable[Reply]:
    """Answer one request frame: encoded response bytes, None (no response), or an awaitable of either.

    A handler returns a response object, or `bytes` holding a body it encoded itself (hot paths), or None.

    Raises CloseConnection for anything that must close the connection (malformed frame, unknown API,
    unsupported version of an API other than ApiVersions).
    """
    try:
        api_key, api_version, correlation_id = peek_key_version(frame)
    except MalformedRequest as exc:
        raise CloseConnection(str(exc)) from exc
    handler = HANDLERS.get(api_key)
    if handler is None:
        raise CloseConnection(f"unsupported api key {api_key}")
    lo, hi = handler.VERSIONS
    if not lo <= api_version <= hi:
        if api_key == API_VERSIONS_KEY:
            # KIP-511: answer with v0 and our ranges so the client can downgrade.
            response = build_response(
                API_VERSIONS_KEY,
                0,
                error_code=ErrorCode.UNSUPPORTED_VERSION,
                api_keys=api_versions.api_keys(),
            )
            return encode_response(response, correlation_id)
        raise CloseConnection(f"unsupported version {api_version} of api key {api_key} (supported {lo}-{hi})")
    try:
        header = parse_request_header(frame, is_flexible(api_key, api_version))
        request = decode_request(frame, header)
    except MalformedRequest as exc:
        raise CloseConnection(str(exc)) from exc
    if logs.debug_enabled:  # a filtered structlog call still costs ~0.9 µs: skip it on the hot path
        log.debug(
            "request",
            api=api_key,
            version=api_version,
            correlation_id=correlation_id,
            client_id=header.client_id,
            peer=peer_host,
        )
    ctx = RequestContext(broker, header, peer_host)
    result = handler.handle(ctx, request)
    if result is None:
        return None
    if isinstance(result, bytes):
        return frame_response_body(result, correlation_id, api_key, api_version)
    if inspect.isawaitable(result):
        return _finish(result, header)
    return encode_response(result, correlation_id)


async def _finish(pending: Awaitable[Any], header: RequestHeader) -> Reply:
    response = await pending
    if response is None:
        return None
    if isinstance(response, bytes):
        return frame_response_body(response, header.correlation_id, header.api_key, header.api_version)
    return encode_response(response, header.correlation_id)
