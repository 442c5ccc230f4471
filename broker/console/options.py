"""How the console is served: its `HOST:PORT` (loopback unless allowed) and whether it may write."""

from __future__ import annotations

from dataclasses import dataclass

from kafkito.broker.control.address import ControlAddress, ControlAddressError, is_loopback, split_host_port


@dataclass(frozen=True, slots=True)
class ConsoleOptions:
    address: ControlAddress
    write: bool = False  # --http-write: creating, editing and deleting topics, producing, resetting offsets


def parse_console_options(text: str, *, allow_remote: bool = False, write: bool = False) -> ConsoleOptions:
    """`--http HOST:PORT`; a non-loopback host is refused unless `allow_remote` (no authentication)."""
    host, port = split_host_port(text)
    if not allow_remote and not is_loopback(host):
        raise ControlAddressError(
            f"--http {text}: {host} is not a loopback address; the console has no authentication, "
            "pass --http-allow-remote to serve it there anyway"
        )
    return ConsoleOptions(ControlAddress(host, port), write)
