"""Kafka requests from the console to its own broker, in process: a request is encoded, answered by
`dispatch` exactly as one from a client would be (the same handlers, validation and error codes),
and its response decoded. So the console's ACL, SCRAM, transaction, config, feature, topic-creation
and produce views are what Kafka's admin tools would see, never recomputed here.

The console has no login and bypasses the authorizer, as it bypasses SASL (docs/console.md): its
requests come from a context with no authorizer, under the client id `kafkito-console`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from kafkito.protocol.codec import RESPONSES, build_request

if TYPE_CHECKING:
    from kafkito.broker.app import Broker
    from kafkito.broker.context import RequestContext

CLIENT_ID = "kafkito-console"
PEER = "console"


class AdminError(RuntimeError):
    """The broker answered with an error code (its name and message, as Kafka's tools print them)."""

    def __init__(self, code: int, message: str | None = None) -> None:
        from kafkito.protocol.errors import ErrorCode

        try:
            name = ErrorCode(code).name
        except ValueError:
            name = f"error {code}"
        super().__init__(f"{name}: {message}" if message else name)
        self.code = code
        self.name = name


_context_types: dict[int, type[RequestContext]] = {}


def _context_type(broker: Broker) -> type[RequestContext]:
    """The broker's request context without an authorizer (made once per broker)."""
    key = id(broker.context_type)
    made = _context_types.get(key)
    if made is None:
        made = type("ConsoleRequestContext", (broker.context_type,), {"__slots__": (), "authorizer": None})
        _context_types.clear()  # one broker per process serves a console
        _context_types[key] = made
    return made


_correlation = 0


async def call(broker: Broker, api_key: int, version: int, **fields: Any) -> Any:
    """Send one request (fields as `build_request` takes them) and return the decoded response."""
    from kafkito.broker.dispatch import dispatch

    global _correlation
    _correlation = (_correlation + 1) & 0x7FFFFFFF
    request = build_request(api_key, version, **fields)
    request.with_header(correlation_id=_correlation, client_id=CLIENT_ID)
    frame = bytes(request.encode(header=True, framed=False))
    reply = dispatch(broker, frame, PEER, _context_type(broker))
    if inspect.isawaitable(reply):
        reply = await reply
    if reply is None:
        raise RuntimeError(f"no response to API {api_key} v{version}")
    framed = bytes(cast(bytes, reply))
    return RESPONSES[api_key].decode(framed[4:], version=version, header=True)


def check(code: int, message: str | None = None) -> None:
    """Raise AdminError for a non-zero error code."""
    if code:
        raise AdminError(code, message)


def rows(items: Any, convert: Callable[[Any], dict[str, Any]]) -> list[dict[str, Any]]:
    return [convert(item) for item in items or ()]
