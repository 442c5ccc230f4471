"""`kafkito users add` (into a stopped broker's store, or over AlterUserScramCredentials to a running one)
and `kafkito certs`: the user then logs in with SCRAM; the certificates serve a TLS listener."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from kafkito.protocol.errors import ErrorCode as E
from tests.conftest import make_config
from tests.security.sasl_wire import scram_login
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient

JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required user_x="y";'


def _kafkito(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "kafkito", *args]
    environment = {**os.environ, **(env or {})}
    return subprocess.run(command, capture_output=True, text=True, timeout=60, env=environment)


def _scram_broker(data_dir: Path) -> ThreadBroker:
    config = make_config(data_dir)
    config.set("listeners", "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0")
    config.set("sasl.enabled.mechanisms", "SCRAM-SHA-256,SCRAM-SHA-512")
    return ThreadBroker(config).start()


def _port(broker: ThreadBroker) -> str:
    assert broker.broker is not None
    return f"127.0.0.1:{broker.broker.nodes.listener_bound[1, 'SASL_PLAINTEXT']}"


def test_users_add_into_a_stopped_brokers_data_dir(tmp_path: Path) -> None:
    data = tmp_path / "data"
    done = _kafkito("users", "add", "erin", "--data-dir", str(data), env={"KAFKITO_USER_PASSWORD": "erin-pw"})
    assert done.returncode == 0, done.stderr
    assert "erin-pw" not in done.stdout + done.stderr
    broker = _scram_broker(data)
    try:
        for mechanism in ("SCRAM-SHA-256", "SCRAM-SHA-512"):
            with WireClient(_port(broker)) as client:
                assert scram_login(client, "erin", "erin-pw", mechanism).error_code == E.NONE
    finally:
        broker.stop()


def test_users_add_to_a_running_broker(tmp_path: Path) -> None:
    broker = _scram_broker(tmp_path / "data")
    try:
        done = _kafkito("users", "add", "frank", "--password", "frank-pw", "--mechanism", "SCRAM-SHA-512",
                        "--bootstrap-server", broker.bootstrap)  # fmt: skip
        assert done.returncode == 0, done.stderr
        with WireClient(_port(broker)) as client:
            assert scram_login(client, "frank", "frank-pw").error_code == E.NONE
        with WireClient(_port(broker)) as client:  # only SCRAM-SHA-512 was asked for
            assert scram_login(client, "frank", "frank-pw", "SCRAM-SHA-256").error_code != E.NONE
    finally:
        broker.stop()


def test_users_add_refuses_an_unknown_mechanism(tmp_path: Path) -> None:
    done = _kafkito("users", "add", "g", "--password", "p", "--mechanism", "MD5", "--data-dir", str(tmp_path))
    assert done.returncode == 2 and "unknown mechanism MD5" in done.stderr and "Traceback" not in done.stderr


def test_certs_writes_a_ca_a_broker_keystore_and_clients(tmp_path: Path) -> None:
    done = _kafkito("certs", "--dir", str(tmp_path / "c"), "--client", "app")
    assert done.returncode == 0, done.stderr
    names = {p.name for p in (tmp_path / "c").iterdir()}
    assert {"ca.pem", "broker-keystore.pem", "app.pem", "app.key"} <= names
    assert (tmp_path / "c" / "app.key").stat().st_mode & 0o077 == 0
    assert "ssl.keystore.location=" in done.stdout
