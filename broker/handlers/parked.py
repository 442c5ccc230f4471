"""Turns a coordinator callback into a response now, or an awaitable one if the request is parked."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any, Generic, TypeVar

R = TypeVar("R")


class Parked(Generic[R]):
    """Pass `callback` to the coordinator, then return `response()` from the handler."""

    __slots__ = ("_build", "_future", "_result")

    def __init__(self, build: Callable[[R], Any]) -> None:
        self._build = build
        self._result: list[R] = []
        self._future: asyncio.Future[Any] | None = None

    def callback(self, result: R) -> None:
        future = self._future
        if future is None:
            self._result.append(result)
        elif not future.done():  # done: cancelled because the client went away
            future.set_result(self._build(result))

    def response(self) -> Any:
        """The response if the coordinator already answered, else a future that resolves to it."""
        if self._result:
            return self._build(self._result[0])
        self._future = asyncio.get_running_loop().create_future()
        return self._future
