"""Ports for test brokers: a free one to listen on, and waiting until something listens."""

from __future__ import annotations

import socket

from tests.support.waiting import wait_until


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def accepts_connections(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def wait_for_port(host: str, port: int, timeout: float = 20.0) -> None:
    """Return once a connection to host:port succeeds; TimeoutError after `timeout` seconds."""
    try:
        wait_until(lambda: accepts_connections(host, port), timeout, f"a listener on {host}:{port}")
    except AssertionError as exc:
        raise TimeoutError(f"nothing listens on {host}:{port}") from exc
