"""One broker with a PLAINTEXT and a SASL_SSL (SCRAM-SHA-512, `kafkito certs` certificates) listener,
and the `kafkito` tools run against either: `tool` is parametrized over both, so each tool test runs on
a plain and on a secured listener (the latter through `--command-config`)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafkito.broker.auth.certs import write_set
from kafkito.broker.auth.users import store_add
from kafkito.broker.security.scram import ScramMechanism
from tests.conftest import make_config
from tests.support.brokers import ThreadBroker

ADMIN, ADMIN_PASSWORD = "admin", "admin-secret"
LISTENERS = ("PLAINTEXT", "SASL_SSL")


@dataclass
class Listeners:
    thread: ThreadBroker
    certs: Path
    client_config: Path  # SASL_SSL's client properties, as kafka-console-*.sh take them

    def bootstrap(self, listener: str) -> str:
        broker = self.thread.broker
        assert broker is not None
        return f"127.0.0.1:{broker.nodes.listener_bound[broker.config.node_id, listener]}"


def client_properties(ca: Path, user: str = ADMIN, password: str = ADMIN_PASSWORD) -> str:
    return (
        "security.protocol=SASL_SSL\n"
        "sasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
        f'username="{user}" password="{password}";\n'
        "ssl.truststore.type=PEM\n"
        f"ssl.truststore.location={ca}\n"
    )


@pytest.fixture(scope="module")
def listeners(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Listeners]:
    root = tmp_path_factory.mktemp("listeners")
    certs = root / "certs"
    write_set(certs, ["localhost", "127.0.0.1"], [])
    data = root / "data"
    store_add(data, ADMIN, ADMIN_PASSWORD, [ScramMechanism.SCRAM_SHA_512], 4096)
    config = make_config(data, group_initial_rebalance_delay_ms=0)
    props = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_SSL://127.0.0.1:0",
        "sasl.enabled.mechanisms": "SCRAM-SHA-256,SCRAM-SHA-512",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(certs / "broker-keystore.pem"),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(certs / "ca.pem"),
        "transaction.state.log.replication.factor": "1",
    }
    for name, value in props.items():
        config.set(name, value)
    client_config = root / "client.properties"
    client_config.write_text(client_properties(certs / "ca.pem"))
    thread = ThreadBroker(config).start()
    try:
        yield Listeners(thread, certs, client_config)
    finally:
        thread.stop()


def kafkito(
    *args: str, stdin: str | None = None, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafkito", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "COLUMNS": "100", **(env or {})},
    )


class Tool:
    """The `kafkito` verbs against one listener: `--bootstrap-server` and, on SASL_SSL,
    `--command-config` added to each."""

    def __init__(self, listeners: Listeners, listener: str) -> None:
        self.listeners = listeners
        self.listener = listener
        self.bootstrap = listeners.bootstrap(listener)
        self.secured = listener != "PLAINTEXT"
        self.connection = ["--bootstrap-server", self.bootstrap]
        if self.secured:
            self.connection += ["--command-config", str(listeners.client_config)]

    def name(self, base: str) -> str:
        """A resource name of its own per listener (both runs share one broker)."""
        return f"{base}-{self.listener.lower()}"

    def __call__(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return kafkito(*args, *self.connection, stdin=stdin)

    def ok(self, *args: str, stdin: str | None = None) -> str:
        done = self(*args, stdin=stdin)
        assert done.returncode == 0, f"kafkito {' '.join(args)}: {done.returncode}\n{done.stderr}"
        return done.stdout

    def fails(self, *args: str, status: int = 1, stdin: str | None = None) -> str:
        """The one line a failing verb prints (no traceback), checked with its exit status."""
        done = self(*args, stdin=stdin)
        assert done.returncode == status, f"{done.returncode}: {done.stdout}{done.stderr}"
        assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1, done.stderr
        return done.stderr.rstrip("\n")


@pytest.fixture(scope="module", params=LISTENERS, ids=str.lower)
def tool(request: pytest.FixtureRequest, listeners: Listeners) -> Tool:
    return Tool(listeners, request.param)
