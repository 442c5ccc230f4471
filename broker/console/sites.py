"""The broker's HTTP servers: the control endpoint and the console, one aiohttp app per address.

Both run on the broker's own event loop. When `--control` and `--http` name the same address,
one server carries both route sets (the console's pages live under `/console/` and its JSON under
`/api/`, so they never meet the control routes). `serve_http` is `Broker.serve()` with the servers
up for as long as the broker serves. Every address is bound (a plain socket) before the broker
starts, so a busy port fails at once; aiohttp (~170 ms of imports) is loaded and served on those
sockets only once the Kafka listener accepts, so clients never wait for the console.
"""

from __future__ import annotations

import asyncio
import gc
import socket
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import structlog

from kafkito.broker.control.address import ControlAddress

if TYPE_CHECKING:
    from aiohttp import web

    from kafkito.broker.app import Broker
    from kafkito.broker.console.options import ConsoleOptions

log = structlog.get_logger("kafkito.console")

SHUTDOWN_TIMEOUT_S = 1.0  # a request still open when the broker stops is cut off after this
BACKLOG = 128


class HttpBindError(OSError):
    """An HTTP address could not be bound (the broker was not started); `flag` names the option."""

    def __init__(self, flag: str, address: ControlAddress, exc: OSError) -> None:
        super().__init__(exc.errno, exc.strerror or str(exc))
        self.flag = flag
        self.address = address


def _bind(flag: str, address: ControlAddress) -> socket.socket:
    """A listening socket on `address` (port 0: a free one)."""
    try:
        family, kind, proto, _, where = socket.getaddrinfo(
            address.host, address.port, type=socket.SOCK_STREAM
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise HttpBindError(flag, address, exc) from exc
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(where)
        sock.listen(BACKLOG)
        sock.setblocking(False)
    except OSError as exc:
        sock.close()
        raise HttpBindError(flag, address, exc) from exc
    return sock


class Listeners:
    """The bound sockets by flag: one per distinct address (`--control` and `--http` may share one)."""

    def __init__(self, control: ControlAddress | None, console: ConsoleOptions | None) -> None:
        self.control = control
        self.console = console
        self.shared = (
            control is not None and console is not None and control == console.address and control.port != 0
        )
        self.sockets: dict[str, socket.socket] = {}
        try:
            if control is not None:
                self.sockets["--control"] = _bind("--control", control)
            if console is not None and not self.shared:
                self.sockets["--http"] = _bind("--http", console.address)
        except HttpBindError:
            self.close()
            raise

    def url(self, flag: str) -> str:
        sock = self.sockets.get(flag) or self.sockets["--control"]
        host, port = sock.getsockname()[:2]
        return ControlAddress(str(host), int(port)).url()

    def close(self) -> None:
        for sock in self.sockets.values():
            sock.close()


def build_apps(broker: Broker, listeners: Listeners) -> dict[str, web.Application]:
    """The app of each socket: the control routes, the console routes, or both on one."""
    apps: dict[str, web.Application] = {}
    if listeners.control is not None:
        from kafkito.broker.control.api import build_app
        from kafkito.broker.control.server import BrokerAdapter

        apps["--control"] = build_app(BrokerAdapter(broker), listeners.control)
    if listeners.console is not None:
        from kafkito.broker.console.routes import add_console_routes
        from kafkito.broker.control.browser_guard import guarded_application

        app = apps["--control"] if listeners.shared else guarded_application(listeners.console.address)
        add_console_routes(app, broker, listeners.console.write, root=not listeners.shared)
        if not listeners.shared:
            apps["--http"] = app
    return apps


class HttpServers:
    """aiohttp served on the bound sockets; `stop()` closes them all."""

    def __init__(self) -> None:
        self._runners: list[Any] = []

    async def start(self, broker: Broker, listeners: Listeners) -> None:
        gc.disable()  # as `kafkito serve` does for its own imports: aiohttp's live as long as the process
        try:
            from aiohttp import web

            apps = build_apps(broker, listeners)
        finally:
            gc.freeze()
            gc.enable()
        for flag, app in apps.items():
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            self._runners.append(runner)
            await web.SockSite(runner, listeners.sockets[flag], shutdown_timeout=SHUTDOWN_TIMEOUT_S).start()
            log.debug("http.started", flag=flag, url=listeners.url(flag))

    async def stop(self) -> None:
        for runner in self._runners:
            await runner.cleanup()
        self._runners.clear()


async def _bound(broker: Broker, serving: asyncio.Future[int]) -> bool:
    """Wait until the broker's listener is bound; False when it stopped (or failed) first."""
    while not serving.done():
        try:
            broker.bound_port  # noqa: B018  (raises until the listener is bound)
        except (RuntimeError, AttributeError):
            await asyncio.sleep(0.005)
            continue
        return True
    return False


def _warn_if_bypassing(broker: Broker) -> None:
    from kafkito.broker.console.exposure import WARNING, guarded_by

    bypassed = guarded_by(broker.config)
    if bypassed:
        log.warning("console.unauthenticated", bypasses=bypassed, hint=WARNING)


async def serve_http(
    broker: Broker,
    control: ControlAddress | None,
    console: ConsoleOptions | None,
    banner: Callable[[Broker, str | None], None] | None = None,
) -> int:
    """`broker.serve()` with the control endpoint and/or the console; HttpBindError before the
    broker starts when an address is taken. With `banner`, it is printed once both listen, with
    the console's address."""
    listeners = Listeners(control, console)
    servers = HttpServers()
    try:
        serving = asyncio.ensure_future(broker.serve())
        if await _bound(broker, serving):
            await servers.start(broker, listeners)
            url = listeners.url("--http") + "/console/" if console is not None else None
            if console is not None:
                log.info("console.started", url=url, write=console.write)
                _warn_if_bypassing(broker)
            if banner is not None:
                banner(broker, url)
        return await serving
    finally:
        await servers.stop()
        listeners.close()
