"""The handler contract: what a per-API module declares."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, Protocol

from kafkito.broker.context import RequestContext


class Handler(Protocol):
    API_KEY: int
    VERSIONS: tuple[int, int]

    def handle(self, ctx: RequestContext, request: Any) -> Any | Awaitable[Any] | None: ...
