"""Listeners as Kafka configures them: `listeners`, `advertised.listeners`, the protocol map, per-listener
properties; bad security settings refused before start with one clear line; the warning for an open,
unauthenticated listener; secrets named but never shown by DescribeConfigs."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from structlog.testing import capture_logs

from kafkito.broker.auth.users import store_add
from kafkito.broker.config import Config, ConfigError
from kafkito.broker.listeners import SecurityProtocol, listener_property, listeners_of
from kafkito.broker.security.scram import ScramMechanism
from kafkito.protocol.errors import ErrorCode as E
from tests.conftest import make_config
from tests.security.conftest import SecureBroker
from tests.security.sasl_wire import scram_login
from tests.support.brokers import ThreadBroker
from tests.support.wire import WireClient


def _config(**props: str) -> Config:
    config = Config()
    for name, value in props.items():
        config.set(name, value)
    return config


def test_without_listeners_there_is_one_plaintext_listener_on_host_and_port() -> None:
    config = Config(host="127.0.0.1", port=9092)
    [only] = listeners_of(config)
    assert (only.name, only.protocol, only.host, only.port) == ("PLAINTEXT", SecurityProtocol.PLAINTEXT,
                                                               "127.0.0.1", 9092)  # fmt: skip


def test_listeners_with_custom_names_advertised_and_prefixed_properties() -> None:
    config = _config(
        listeners="INTERNAL://127.0.0.1:9092,EXTERNAL://0.0.0.0:9093",
        **{
            "listener.security.protocol.map": "INTERNAL:PLAINTEXT,EXTERNAL:SASL_SSL",
            "advertised.listeners": "INTERNAL://127.0.0.1:9092,EXTERNAL://kafka.example.com:19093",
            "inter.broker.listener.name": "INTERNAL",
            "sasl.enabled.mechanisms": "SCRAM-SHA-512",
            "listener.name.external.sasl.enabled.mechanisms": "PLAIN",
        },
    )
    internal, external = listeners_of(config)
    assert (internal.protocol, internal.port) == (SecurityProtocol.PLAINTEXT, 9092)
    assert (external.protocol, external.host, external.port) == (SecurityProtocol.SASL_SSL, "0.0.0.0", 9093)
    assert (external.advertised_host, external.advertised_port) == ("kafka.example.com", 19093)
    assert listener_property(config, "EXTERNAL", "sasl.enabled.mechanisms") == "PLAIN"
    assert listener_property(config, "INTERNAL", "sasl.enabled.mechanisms") == "SCRAM-SHA-512"


@pytest.mark.parametrize(
    "props",
    [
        {"listeners": "FOO://127.0.0.1:9092"},  # no protocol for FOO
        {"listeners": "PLAINTEXT://127.0.0.1:9092,PLAINTEXT://127.0.0.1:9093"},
        {"listeners": "PLAINTEXT://127.0.0.1:9092", "advertised.listeners": "SSL://h:1"},
        {"listeners": "PLAINTEXT://127.0.0.1:9092", "listener.security.protocol.map": "PLAINTEXT:TLS"},
    ],
)
def test_inconsistent_listeners_are_refused(props: dict[str, str]) -> None:
    with pytest.raises(ConfigError):
        listeners_of(_config(**props))


_SASL = "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0"
_SSL = "PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0"


@pytest.mark.parametrize(
    ("props", "says"),
    [
        ({"listeners": _SASL}, "GSSAPI"),
        ({"listeners": _SASL, "sasl.enabled.mechanisms": "PLAIN"}, "plain.sasl.jaas.config"),
        ({"listeners": _SSL}, "ssl.keystore.location"),
        ({"listeners": _SSL, "ssl.keystore.location": "/nonexistent.pem"}, "ssl.keystore.type"),
        ({"listeners": _SSL, "ssl.keystore.type": "PEM", "ssl.keystore.location": "/none.pem"}, "keystore"),
    ],
)  # fmt: skip
def test_kafkito_serve_refuses_bad_security_settings_in_one_line(
    tmp_path: Path, props: dict[str, str], says: str
) -> None:
    sets = [arg for name, value in props.items() for arg in ("--set", f"{name}={value}")]
    result = subprocess.run(
        [sys.executable, "-m", "kafkito", "serve", "--data-dir", str(tmp_path / "d"), "--port", "0", *sets],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 2
    assert says in result.stderr and "Traceback" not in result.stderr


def test_an_open_unauthenticated_listener_is_warned_about(tmp_path: Path) -> None:
    with capture_logs() as logs:
        broker = ThreadBroker(make_config(tmp_path / "d", host="0.0.0.0")).start()
        broker.stop()
    assert any(e["event"] == "listener.unauthenticated" for e in logs)
    with capture_logs() as logs:
        broker = ThreadBroker(make_config(tmp_path / "e")).start()
        broker.stop()
    assert not any(e["event"] == "listener.unauthenticated" for e in logs)


def test_describe_configs_names_secrets_without_their_values(secure: SecureBroker) -> None:
    with WireClient(secure.bootstrap("PLAINTEXT")) as client:
        broker = dict(resource_type=4, resource_name="1", configuration_keys=None)
        response = client.request(32, 1, resources=[broker], include_synonyms=False)
    [resource] = response.results
    assert resource.error_code == E.NONE
    rows = {row.name: row for row in resource.configs}
    jaas = rows["listener.name.sasl_plaintext.plain.sasl.jaas.config"]
    assert jaas.value is None and jaas.is_sensitive
    assert "alice-secret" not in repr(response)
    assert rows["ssl.keystore.type"].value == "PEM" and not rows["ssl.keystore.type"].is_sensitive


def test_a_cluster_of_three_advertises_each_nodes_address_on_the_clients_listener(tmp_path: Path) -> None:
    import kafkito.testing

    props = {"listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
             "sasl.enabled.mechanisms": "SCRAM-SHA-512"}  # fmt: skip
    store_add(tmp_path / "d", "u", "pw", [ScramMechanism.SCRAM_SHA_512], 4096)
    with kafkito.testing.start(props, data_dir=tmp_path / "d", nodes=3) as handle:
        bound = handle.broker.nodes.listener_bound
        plain = {node: port for (node, name), port in bound.items() if name == "PLAINTEXT"}
        sasl = {node: port for (node, name), port in bound.items() if name == "SASL_PLAINTEXT"}
        assert len(plain) == len(sasl) == 3 and not set(plain.values()) & set(sasl.values())
        with WireClient(f"127.0.0.1:{plain[2]}") as client:
            brokers = client.request(3, 1, topics=[]).brokers
        assert sorted((b[0], b[2]) for b in brokers) == sorted(plain.items())
        with WireClient(f"127.0.0.1:{sasl[3]}") as client:
            assert scram_login(client, "u", "pw").error_code == E.NONE
            brokers = client.request(3, 1, topics=[]).brokers
        assert sorted((b[0], b[2]) for b in brokers) == sorted(sasl.items())
