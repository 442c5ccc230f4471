"""Serving the control API on the broker's own event loop, next to its Kafka listener.

aiohttp's server runs on whatever loop is current (uvloop included), so the handlers call the
broker's `Steering` directly, with no thread hop. `serve_with_control` is `Broker.serve()` with the
endpoint up for as long as the broker serves.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import structlog
from aiohttp import web

from kafkito.broker.control.address import ControlAddress
from kafkito.broker.control.api import NotServing, build_app
from kafkito.broker.control.steering_view import SteeringView

if TYPE_CHECKING:
    from kafkito.broker.app import Broker

log = structlog.get_logger("kafkito.control")

SHUTDOWN_TIMEOUT_S = 1.0  # a wait still open when the broker stops is cut off after this


class ControlBindError(OSError):
    """The control endpoint's address could not be bound (the broker was not started)."""


class BrokerAdapter:
    """The `BrokerView` of a `Broker`: its steering, and its topology once it serves."""

    __slots__ = ("_broker",)

    def __init__(self, broker: Broker) -> None:
        self._broker = broker

    def _check_serving(self) -> None:
        try:
            _ = self._broker.bound_port
        except RuntimeError:
            raise NotServing() from None

    def steering(self) -> SteeringView:
        self._check_serving()
        steering = getattr(self._broker, "steering", None)
        if steering is None:
            raise NotServing("this broker offers no steering")
        return cast(SteeringView, steering)

    def topology(self) -> dict[str, Any]:
        """Cluster id, controller, the nodes (`live` or not) and each topic's partitions."""
        return self.steering().topology()


class ControlServer:
    """The control endpoint of one broker: `await start()`, then `await stop()`."""

    def __init__(self, broker: Broker, address: ControlAddress) -> None:
        self._address = address
        self._runner = web.AppRunner(build_app(BrokerAdapter(broker), address), access_log=None)
        self.bound: ControlAddress | None = None

    @property
    def url(self) -> str:
        if self.bound is None:
            raise RuntimeError("control endpoint not started")
        return self.bound.url()

    async def start(self) -> None:
        """Bind and serve; raises OSError when the address cannot be bound (nothing is left open)."""
        await self._runner.setup()
        site = web.TCPSite(
            self._runner, self._address.host, self._address.port, shutdown_timeout=SHUTDOWN_TIMEOUT_S
        )
        try:
            await site.start()
        except OSError:
            await self._runner.cleanup()
            raise
        host, port = self._runner.addresses[0][:2]
        self.bound = ControlAddress(str(host), int(port))
        log.info("control.started", url=self.url)

    async def stop(self) -> None:
        await self._runner.cleanup()
        log.info("control.stopped")


async def serve_with_control(broker: Broker, address: ControlAddress) -> int:
    """`broker.serve()` with the control endpoint at `address` for as long as the broker serves.

    The endpoint is bound first, so that a busy port fails before the broker starts
    (ControlBindError); the broker's own failures pass through unchanged.
    """
    control = ControlServer(broker, address)
    try:
        await control.start()
    except OSError as exc:
        raise ControlBindError(exc.errno, exc.strerror or str(exc)) from exc
    try:
        return await broker.serve()
    finally:
        await control.stop()
