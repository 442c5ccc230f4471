"""Reaching a broker: the bootstrap address checked first (a refused connection says so at once,
not after the client's 30 s of retries), then kafka-python's admin, producer or consumer, with the
security of `--command-config` (broker.tools.client_config).

A listener that accepts the connection but not the client (TLS spoken to a plain listener or the
reverse, SASL refused, a wrong password) fails the client's bootstrap within BOOTSTRAP_WAIT_MS; what
the client logged on the way is turned into one line that says what to change.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol

from kafkito.broker.tools.output import ToolError

DEFAULT_BOOTSTRAP = "127.0.0.1:9092"
ENV_BOOTSTRAP = "KAFKITO_BOOTSTRAP_SERVER"  # the default of --bootstrap-server, when set
CLIENT_ID = "kafkito-cli"
BOOTSTRAP_WAIT_MS = 4000  # how long a listener that answers nothing useful is given


class Target(Protocol):
    """What every verb's arguments say about the broker to talk to."""

    bootstrap_server: str
    command_config: str | None


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


class _Heard(logging.Handler):
    """The client's warnings and errors while it bootstraps: why the listener did not take it."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


if TYPE_CHECKING:
    from kafkito.broker.tools.client_config import ClientSecurity


def _refusal(bootstrap: str, security: ClientSecurity, heard: list[str]) -> str:
    """One line for a bootstrap that timed out: the client's reason, and what to check."""
    text = " ".join(heard)
    if "Authentication failed" in text or "SaslAuthenticationFailed" in text:
        return (
            f"the broker at {bootstrap} refused the SASL login (a wrong user or password, or a mechanism "
            "the listener does not enable): check sasl.mechanism and sasl.jaas.config in --command-config"
        )
    if security.uses_tls and ("CERTIFICATE_VERIFY_FAILED" in text or "certificate verify" in text):
        return (
            f"the broker at {bootstrap} has a certificate the client does not trust: "
            "set ssl.truststore.location (PEM) in --command-config"
        )
    if "UnsupportedSaslMechanism" in text:
        return (
            f"the listener at {bootstrap} does not enable sasl.mechanism={security.options['sasl_mechanism']}"
        )
    return (
        f"the listener at {bootstrap} did not answer as a {security.protocol} listener: does it expect "
        "TLS or SASL (or not)? pass --command-config FILE with its security.protocol"
    )


def _common(target: Target) -> dict[str, Any]:
    check_reachable(target.bootstrap_server)
    from kafkito.broker.tools.client_config import load  # not at parse time: the parser imports this module

    security = load(target.command_config)
    return {
        "bootstrap_servers": target.bootstrap_server.split(","),
        "client_id": CLIENT_ID,
        "request_timeout_ms": 15000,
        "bootstrap_timeout_ms": BOOTSTRAP_WAIT_MS,
        **security.options,
    }


@contextmanager
def _bootstrapping(target: Target) -> Iterator[None]:
    """Turn the client's 'Unable to bootstrap' into the reason it logged."""
    from kafka.errors import KafkaError, KafkaTimeoutError

    heard = _Heard()
    kafka_logger = logging.getLogger("kafka")
    kafka_logger.addHandler(heard)
    try:
        yield
    except KafkaTimeoutError as exc:
        if "bootstrap" not in str(exc):
            raise ToolError(describe_error(exc)) from None
        from kafkito.broker.tools.client_config import load

        raise ToolError(
            _refusal(target.bootstrap_server, load(target.command_config), heard.messages)
        ) from None
    except KafkaError as exc:
        raise ToolError(describe_error(exc)) from None
    finally:
        kafka_logger.removeHandler(heard)


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


def admin(target: Target) -> Any:
    from kafka import KafkaAdminClient

    options = _common(target)
    with _bootstrapping(target):
        return KafkaAdminClient(**options)


def producer(target: Target, **extra: Any) -> Any:
    from kafka import KafkaProducer

    options = _common(target)
    with _bootstrapping(target):
        return KafkaProducer(**options, **extra)


def consumer(target: Target, **extra: Any) -> Any:
    from kafka import KafkaConsumer

    options = _common(target)
    with _bootstrapping(target):
        return KafkaConsumer(**options, **extra)
