"""The broker's HTTP servers: the control endpoint and the console, one aiohttp app per port.

Both run on the broker's own event loop. When `--control` and `--http` name the same address,
one server carries both route sets (the console's pages live under `/console/` and its JSON under
`/api/`, so they never meet the control routes). `serve_http` is `Broker.serve()` with the servers
up for as long as the broker serves; every address is bound before the broker starts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING

import structlog
from aiohttp import web

from kafkito.broker.control.address import ControlAddress

if TYPE_CHECKING:
    from kafkito.broker.app import Broker
    from kafkito.broker.console.options import ConsoleOptions

log = structlog.get_logger("kafkito.console")

SHUTDOWN_TIMEOUT_S = 1.0  # a request still open when the broker stops is cut off after this


class HttpBindError(OSError):
    """An HTTP address could not be bound (the broker was not started); `flag` names the option."""

    def __init__(self, flag: str, address: ControlAddress, exc: OSError) -> None:
        super().__init__(exc.errno, exc.strerror or str(exc))
        self.flag = flag
        self.address = address


def build_apps(
    broker: Broker, control: ControlAddress | None, console: ConsoleOptions | None
) -> list[tuple[str, ControlAddress, web.Application]]:
    """(flag, address, app) per server: one app when both name the same address."""
    apps: list[tuple[str, ControlAddress, web.Application]] = []
    control_app: web.Application | None = None
    if control is not None:
        from kafkito.broker.control.api import build_app
        from kafkito.broker.control.server import BrokerAdapter

        control_app = build_app(BrokerAdapter(broker))
        apps.append(("--control", control, control_app))
    if console is not None:
        from kafkito.broker.console.routes import add_console_routes

        shared = control_app is not None and control == console.address and console.address.port != 0
        app = control_app if shared and control_app is not None else web.Application()
        add_console_routes(app, broker, console.write, root=not shared)
        if not shared:
            apps.append(("--http", console.address, app))
    return apps


class HttpServers:
    """The started servers; `urls` by flag once started, `stop()` closes them all."""

    def __init__(self) -> None:
        self._runners: list[web.AppRunner] = []
        self.urls: dict[str, str] = {}

    async def start(self, apps: list[tuple[str, ControlAddress, web.Application]]) -> None:
        for flag, address, app in apps:
            runner = web.AppRunner(app, access_log=None)
            await runner.setup()
            site = web.TCPSite(runner, address.host, address.port, shutdown_timeout=SHUTDOWN_TIMEOUT_S)
            try:
                await site.start()
            except OSError as exc:
                await runner.cleanup()
                await self.stop()
                raise HttpBindError(flag, address, exc) from exc
            self._runners.append(runner)
            host, port = runner.addresses[0][:2]
            self.urls[flag] = ControlAddress(str(host), int(port)).url()
            log.debug("http.started", flag=flag, url=self.urls[flag])

    async def stop(self) -> None:
        for runner in self._runners:
            await runner.cleanup()
        self._runners.clear()


def console_url(servers: HttpServers) -> str:
    base = servers.urls.get("--http") or servers.urls["--control"]
    return f"{base}/console/"


async def serve_http(
    broker: Broker,
    control: ControlAddress | None,
    console: ConsoleOptions | None,
    banner: Callable[[Broker, str | None], None] | None = None,
) -> int:
    """`broker.serve()` with the control endpoint and/or the console; HttpBindError before the
    broker starts when an address is taken. With `banner`, it is printed once the broker listens,
    with the console's address."""
    servers = HttpServers()
    await servers.start(build_apps(broker, control, console))
    try:
        serving = asyncio.ensure_future(broker.serve())
        while not serving.done():
            try:
                broker.bound_port  # noqa: B018  (raises until the listener is bound)
            except (RuntimeError, AttributeError):
                await asyncio.sleep(0.01)
                continue
            if console is not None:
                log.info("console.started", url=console_url(servers), write=console.write)
            if banner is not None:
                banner(broker, console_url(servers) if console is not None else None)
            break
        return await serving
    finally:
        await servers.stop()
