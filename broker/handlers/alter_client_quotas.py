"""AlterClientQuotas (49): set or remove quotas of user, client-id and ip entities (or only validate).

Validated as Kafka's controller does (entity combinations, the keys each entity type takes, values
above 0, whole numbers where Kafka's type is an integer); the answer comes once the change is durable.
An ip entity's name must be an address or a host name that resolves (resolved off the event loop).
v1 is flexible.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Sequence
from typing import Any, Protocol

from kafkito.broker.context import RequestContext
from kafkito.broker.security.quotas import IP, QuotaOp, is_ip_literal

API_KEY = 49
VERSIONS = (0, 1)
RESOLVE_TIMEOUT_S = 5.0


class EntityData(Protocol):
    entity_type: str
    entity_name: str | None


class OpData(Protocol):
    key: str
    value: float
    remove: bool


class EntryData(Protocol):
    entity: Sequence[EntityData]
    ops: Sequence[OpData]


class AlterClientQuotasRequest(Protocol):
    entries: Sequence[EntryData]
    validate_only: bool


def handle(ctx: RequestContext, request: AlterClientQuotasRequest) -> Any:
    return _alter(ctx, request)


async def _resolvable(names: set[str]) -> set[str]:
    """The host names (not IP literals) that resolve, looked up concurrently within a bound."""
    loop = asyncio.get_running_loop()

    async def resolves(name: str) -> bool:
        try:
            await asyncio.wait_for(loop.getaddrinfo(name, None, type=socket.SOCK_STREAM), RESOLVE_TIMEOUT_S)
        except (OSError, TimeoutError, ValueError):  # ValueError: a name no resolver takes
            return False
        return True

    ordered = sorted(names)
    found = await asyncio.gather(*(resolves(n) for n in ordered))
    return {n for n, ok in zip(ordered, found, strict=True) if ok}


async def _alter(ctx: RequestContext, request: AlterClientQuotasRequest) -> Any:
    alterations = [
        (
            [(e.entity_type, e.entity_name) for e in entry.entity],
            [QuotaOp(op.key, float(op.value), bool(op.remove)) for op in entry.ops],
        )
        for entry in request.entries
    ]
    hosts = {
        e.entity_name
        for entry in request.entries
        for e in entry.entity
        if e.entity_type == IP and e.entity_name and not is_ip_literal(e.entity_name)
    }
    resolved = await _resolvable(hosts) if hosts else set()
    results = ctx.security.alter_quotas(
        alterations,
        validate_only=bool(request.validate_only),
        ip_valid=lambda name: is_ip_literal(name) or name in resolved,
    )
    await ctx.security.synced()
    entries = [
        dict(
            error_code=0 if error is None else error.code,
            error_message=None if error is None else error.message,
            entity=[dict(entity_type=t, entity_name=n) for t, n in pairs],
        )
        for pairs, error in results
    ]
    return ctx.response(throttle_time_ms=0, entries=entries)
