"""Where the control endpoint listens: `HOST:PORT` parsed, and refused off loopback unless allowed.

The endpoint moves the broker's clock and injects failures with no authentication at all, so by
default only this machine may reach it.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass


class ControlAddressError(ValueError):
    """An address that does not parse, or that is not loopback while remote access is not allowed."""


@dataclass(frozen=True, slots=True)
class ControlAddress:
    host: str
    port: int

    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"


def split_host_port(text: str) -> tuple[str, int]:
    """`HOST:PORT`, `[IPv6]:PORT` or `:PORT` (loopback); the port may be 0 (a free one)."""
    host, sep, port_text = text.strip().rpartition(":")
    if not sep or not port_text.isdigit():
        raise ControlAddressError(f"expected HOST:PORT, got {text!r}")
    port = int(port_text)
    if port > 65535:
        raise ControlAddressError(f"port {port} is out of range (0-65535)")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    return host or "127.0.0.1", port


def is_loopback(host: str) -> bool:
    """True when every address `host` resolves to is a loopback address."""
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, None)
    except OSError:
        return False
    return bool(infos) and all(ipaddress.ip_address(info[4][0]).is_loopback for info in infos)


def parse_control_address(text: str, *, allow_remote: bool = False) -> ControlAddress:
    host, port = split_host_port(text)
    if not allow_remote and not is_loopback(host):
        raise ControlAddressError(
            f"--control {text}: {host} is not a loopback address; the control endpoint has no "
            "authentication, pass --control-allow-remote to serve it there anyway"
        )
    return ControlAddress(host, port)
