"""The steered path of dispatch, taken only while a fault rule or a black hole is in force: swallow a
black-holed client's requests, delay or fail the ones a rule matches, serve the rest as usual."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any
from uuid import UUID

import structlog

from kafkito.broker.spliced import Spliced
from kafkito.broker.steering.rules import FaultRule
from kafkito.broker.steering.shapes import (
    METADATA,
    Shape,
    fault_metadata,
    matches,
    merge,
    partition_error_response,
    request_error_response,
    shape_for,
    take_faulted,
)
from kafkito.protocol.codec import RequestHeader, encode_response, response_class
from kafkito.protocol.errors import ErrorCode

if TYPE_CHECKING:
    from kafkito.broker.app import Broker
    from kafkito.broker.context import RequestContext
    from kafkito.broker.handlers.registry import Handler

log = structlog.get_logger("kafkito.steering")

Reply = bytes | Spliced | None  # Spliced: a Fetch frame (it never reaches steering's own code)
_PRODUCE, _FETCH = 0, 1


class Request:
    """One decoded request on its way through the steered path."""

    __slots__ = ("body", "broker", "context_type", "handler", "header", "header_v1", "peer_host")

    def __init__(
        self,
        broker: Broker,
        handler: Handler,
        header: RequestHeader,
        body: Any,
        peer_host: str,
        header_v1: bool,
        context_type: type[RequestContext],
    ) -> None:
        self.broker = broker
        self.context_type = context_type  # the node the request came to (multi-node clusters)
        self.handler = handler
        self.header = header
        self.body = body
        self.peer_host = peer_host
        self.header_v1 = header_v1

    def serve(self) -> Reply | Awaitable[Reply]:
        from kafkito.broker.dispatch import answer

        return answer(self.handler, self.header, self.body, self.peer_host, self.header_v1, self.context_type)

    def handle(self) -> Any:
        return self.handler.handle(self.context_type(self.header, self.peer_host), self.body)

    def topic_name(self, topic_id: UUID) -> str | None:
        info = self.broker.logs.topic_by_id(topic_id)
        return None if info is None else info.name


def steer(request: Request) -> Reply | Awaitable[Reply]:
    """Answer one request while steering is on: first as the node it came to can (multi-node
    clusters: `broker/cluster/routing.py`), then through the fault rules."""
    if request.broker.routing:
        from kafkito.broker.cluster.routing import route

        return route(request, _steer)
    return _steer(request)


def _steer(request: Request) -> Reply | Awaitable[Reply]:
    steering = request.broker.steering
    header = request.header
    client_id = header.client_id or ""
    if client_id in steering.blackholed:
        return steering.swallow(client_id)
    rule = _first_match(request, client_id)
    if rule is None:
        return request.serve()
    steering.rules.consume(rule)
    log.info(
        "fault.fired",
        rule=rule.id,
        api=rule.api,
        error=rule.error.name,
        delay_ms=rule.delay_ms,
        client_id=client_id,
        correlation_id=header.correlation_id,
    )
    if rule.delay_ms:
        return _delayed(rule.delay_ms, lambda: _apply(request, rule))
    return _apply(request, rule)


def _first_match(request: Request, client_id: str) -> FaultRule | None:
    header = request.header
    rules = request.broker.steering.rules.for_api(header.api_key)
    if not rules:
        return None
    shape = shape_for(header.api_key, header.api_version)
    for rule in rules:
        if rule.client_id is not None and rule.client_id != client_id:
            continue
        if matches(rule, header.api_key, request.body, shape, request.topic_name):
            return rule
    return None


async def _delayed(delay_ms: int, then: Callable[[], Reply | Awaitable[Reply]]) -> Reply:
    await asyncio.sleep(delay_ms / 1000)  # real time: what the client waits for
    reply = then()
    if inspect.isawaitable(reply):
        return await reply
    return reply


def _apply(request: Request, rule: FaultRule) -> Reply | Awaitable[Reply]:
    if rule.error is ErrorCode.NONE:
        return request.serve()
    header = request.header
    api_key, version = header.api_key, header.api_version
    if api_key == METADATA:
        response = request.handle()
        if isinstance(response, bytes):  # encoded by hand (one node, no ACLs): decoded to fault it
            response = response_class(api_key, version).decode(response)
        return encode_response(fault_metadata(response, rule), header.correlation_id)
    shape = shape_for(api_key, version)
    if shape is None:
        response = request_error_response(api_key, version, request.body, rule.error)
        return encode_response(response, header.correlation_id)
    faulted, left = take_faulted(rule, request.body, shape, request.topic_name)
    if not left:
        if api_key == _PRODUCE and request.body.acks == 0:
            return None  # acks=0: the producer hears nothing either way
        response = partition_error_response(api_key, version, shape, faulted)
        return encode_response(response, header.correlation_id)
    return serve_partly(request, shape, faulted)


def serve_partly(request: Request, shape: Shape, faulted: list[Any]) -> Reply | Awaitable[Reply]:
    """Serve the partitions left in `request` and add the `faulted` ones' error entries to the answer."""
    if request.header.api_key == _FETCH:
        request.body.max_wait_ms = 0  # a partition error answers a fetch at once, as in Kafka
    result = request.handle()
    if inspect.isawaitable(result):
        return _merge_later(result, request, shape, faulted)
    return _merged(result, request, shape, faulted)


async def _merge_later(pending: Awaitable[Any], request: Request, shape: Shape, faulted: list[Any]) -> Reply:
    return _merged(await pending, request, shape, faulted)


def _merged(result: Any, request: Request, shape: Shape, faulted: list[Any]) -> Reply:
    """The handler's answer for the partitions it served, with the faulted ones' errors added."""
    if result is None:
        return None
    header = request.header
    if isinstance(result, bytes):  # a hand-encoded body (Fetch): decoded to add entries to it
        result = response_class(header.api_key, header.api_version).decode(result)
    response = merge(result, shape, faulted, header.api_key, header.api_version)
    return encode_response(response, header.correlation_id)
