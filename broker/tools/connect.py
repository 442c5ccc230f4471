"""Reaching a broker: the bootstrap address checked first (a refused connection says so at once,
not after the client's 30 s of retries), then kafka-python's admin, producer or consumer."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kafkito.broker.tools.output import ToolError

DEFAULT_BOOTSTRAP = "127.0.0.1:9092"
ENV_BOOTSTRAP = "KAFKITO_BOOTSTRAP_SERVER"  # the default of --bootstrap-server, when set
CLIENT_ID = "kafkito-cli"


def split_address(address: str) -> tuple[str, int]:
    host, sep, port = address.strip().rpartition(":")
    if not sep or not port.isdigit() or not host:
        raise ToolError(f"--bootstrap-server {address!r} is not HOST:PORT (e.g. {DEFAULT_BOOTSTRAP})", 2)
    return host.strip("[]"), int(port)


def check_reachable(bootstrap: str, timeout: float = 5.0) -> None:
    """Fail with one line when no broker accepts connections on any bootstrap address."""
    errors = []
    for address in bootstrap.split(","):
        host, port = split_address(address)
        try:
            with socket.create_connection((host, port), timeout=timeout):
                return
        except OSError as exc:
            errors.append(f"{host}:{port} ({exc.strerror or exc})")
    raise ToolError(
        f"no broker at {', '.join(errors)}: start one (`make run` or `kafkito serve`) "
        "or pass --bootstrap-server HOST:PORT"
    )


def _common(bootstrap: str) -> dict[str, Any]:
    check_reachable(bootstrap)
    return {"bootstrap_servers": bootstrap.split(","), "client_id": CLIENT_ID, "request_timeout_ms": 15000}


@contextmanager
def kafka_errors() -> Iterator[None]:
    """Turn a client's exception into one line naming the Kafka error."""
    from kafka.errors import KafkaError

    try:
        yield
    except KafkaError as exc:
        raise ToolError(describe_error(exc)) from None


def describe_error(exc: BaseException) -> str:
    """`UnknownTopicOrPartitionError: topic 'x' does not exist`: the error and the broker's message,
    without the request and response the client puts around them."""
    import re

    name = type(exc).__name__
    text = str(exc)
    found = re.search(r"error_message=(?:'([^']*)'|\"([^\"]*)\")", text)
    if found:
        return f"{name}: {found.group(1) or found.group(2)}"
    text = re.sub(r"^\[Error -?\d+\] ", "", text)
    if not text or text == name:
        return name
    return text if text.startswith(name) else f"{name}: {text}"


def admin(bootstrap: str) -> Any:
    from kafka import KafkaAdminClient

    with kafka_errors():
        return KafkaAdminClient(**_common(bootstrap))


def producer(bootstrap: str, **options: Any) -> Any:
    from kafka import KafkaProducer

    with kafka_errors():
        return KafkaProducer(**_common(bootstrap), **options)


def consumer(bootstrap: str, **options: Any) -> Any:
    from kafka import KafkaConsumer

    with kafka_errors():
        return KafkaConsumer(**_common(bootstrap), **options)
