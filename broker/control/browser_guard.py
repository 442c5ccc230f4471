"""What keeps web pages off the loopback HTTP endpoints (the control endpoint and the console).

A page a developer opens can send "simple" cross-site requests (a form, or `fetch` with
`text/plain`) to 127.0.0.1 without asking first, and after DNS rebinding its own scripts can read
the answers. So every request must name a host this endpoint answers to (a loopback name or
address, or the address it was explicitly bound to), must come from no page or from the
endpoint's own pages (`Origin`), and a write must carry a JSON body type, which no page of another
site can send without a CORS preflight, and preflights are never granted (no CORS header is ever
sent). Every answer also carries the headers that keep browsers from sniffing, framing or
embedding it. The rules are documented in docs/console.md and docs/testing.md.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from aiohttp import web
from aiohttp.typedefs import Handler, Middleware

from kafkito.broker.control.address import ControlAddress

WRITE_METHODS = frozenset({"POST", "PUT", "DELETE", "PATCH"})
JSON = "application/json"
ANSWER_HEADERS = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Content-Security-Policy": (
        "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; form-action 'self'; "
        "base-uri 'none'"
    ),
    "Cross-Origin-Resource-Policy": "same-origin",
    "Referrer-Policy": "no-referrer",
}
WILDCARDS = frozenset({"0.0.0.0", "::", ""})


def _host_and_port(authority: str) -> tuple[str, int | None] | None:
    """`name`, `name:port`, `1.2.3.4:port` or `[::1]:port` as (lower-case host, port); None if malformed."""
    try:
        parts = urlsplit(f"//{authority}")
        port = parts.port
    except ValueError:
        return None
    host = (parts.hostname or "").rstrip(".")
    if not host or parts.username is not None or parts.path or parts.query or parts.fragment:
        return None
    return host, port


def _ip(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def is_loopback_name(host: str) -> bool:
    """`localhost`, `*.localhost` or a loopback address, by its text alone: a name is never resolved
    (resolving it is exactly what a rebinding attacker controls)."""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    address = _ip(host)
    return address is not None and address.is_loopback


class HostRule:
    """The `Host` values an endpoint bound to `bound` answers to."""

    def __init__(self, bound: ControlAddress) -> None:
        host = bound.host.lower().strip("[]").rstrip(".")
        self.wildcard = host in WILDCARDS
        self.names: set[str] = set()
        if not self.wildcard and not is_loopback_name(host):
            self.names.add(host)  # bound explicitly to this (non-loopback) name or address
        if self.wildcard:
            self.names.add(socket.gethostname().lower())

    def allows(self, host: str, request: web.Request) -> bool:
        if is_loopback_name(host) or host in self.names:
            return True
        address = _ip(host)
        if address is None or not self.wildcard:
            return False
        # Bound to every address: an address literal is the one the request arrived on, or refused.
        sockname = request.transport.get_extra_info("sockname") if request.transport else None
        local = _ip(str(sockname[0]).split("%")[0]) if sockname else None
        return local is not None and (local == address or getattr(local, "ipv4_mapped", None) == address)


def _refused(status: int, reason: str) -> web.Response:
    return web.Response(status=status, text=reason + "\n", content_type="text/plain")


def _origin_refusal(origin: str, host: str, port: int | None) -> str | None:
    """Why `origin` is not this endpoint's own (http://HOST:PORT as the request's Host names it)."""
    if origin == "null":
        return "Origin: null is refused: requests must come from the endpoint's own pages or no page"
    try:
        parts = urlsplit(origin)
        origin_port = parts.port or 80
    except ValueError:
        return f"Origin {origin!r} is malformed"
    if parts.scheme != "http" or (parts.hostname or "").rstrip(".") != host or origin_port != (port or 80):
        return f"Origin {origin} is not this endpoint's: cross-site requests are refused"
    return None


def check(request: web.Request, hosts: HostRule) -> web.Response | None:
    """The refusal of a request no page of another site may make, or None when it may go on."""
    authority = request.headers.get("Host")
    where: tuple[str, int | None] | None = None
    if authority is not None:
        where = _host_and_port(authority)
        if where is None or not hosts.allows(where[0], request):
            return _refused(403, f"Host {authority!r} is refused: use a loopback name or address")
    origin = request.headers.get("Origin")
    if origin is not None:
        reason = (
            "a request with an Origin must name its Host"
            if where is None
            else _origin_refusal(origin.strip().lower(), *where)
        )
        if reason is not None:
            return _refused(403, reason)
    if request.method in WRITE_METHODS and (
        "Content-Type" not in request.headers or request.content_type != JSON
    ):
        return _refused(415, f"a {request.method} must be sent with Content-Type: {JSON}")
    return None


def guard(bound: ControlAddress) -> Middleware:
    """The middleware that refuses requests from other sites' pages (before any handler runs)."""
    hosts = HostRule(bound)

    @web.middleware
    async def browser_guard(request: web.Request, handler: Handler) -> web.StreamResponse:
        refusal = check(request, hosts)
        if refusal is not None:
            return refusal
        return await handler(request)

    return browser_guard


async def _answer_headers(request: web.Request, response: web.StreamResponse) -> None:
    for name, value in ANSWER_HEADERS.items():
        response.headers.setdefault(name, value)


def guarded_application(bound: ControlAddress, *middlewares: Middleware) -> web.Application:
    """An aiohttp application whose every request passes `guard` first and whose every answer
    (static files and the router's own 404/405 included) carries `ANSWER_HEADERS`."""
    app = web.Application(middlewares=[guard(bound), *middlewares])
    app.on_response_prepare.append(_answer_headers)
    return app
