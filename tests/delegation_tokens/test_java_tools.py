"""Delegation tokens and the metadata quorum through Apache Kafka 4.4's own Java tools and clients.

`kafka-delegation-tokens` (kafka-tools' DelegationTokenCommand, a Java Admin client) creates, describes,
renews and expires tokens over SASL_PLAINTEXT/SCRAM as user alice; a Java consumer
(kafka-console-consumer) authenticates with the token (ScramLoginModule with `tokenauth="true"`) and
reads as its owner; the token survives a restart of the broker and stops authenticating once the broker
clock passes its expiry and the sweep has removed it. `kafka-metadata-quorum` describes the quorum.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kafkito.broker.auth.users import store_add
from kafkito.broker.security.scram import ScramMechanism
from tests.conftest import make_config
from tests.support.admin import create_topic
from tests.support.brokers import ThreadBroker
from tests.support.kafka_reference import ReferenceUnavailable, classpath, java
from tests.support.produce import send_confluent
from tests.support.records import Rec

SECRET = "token-secret-of-the-test"
DAY_MS = 86_400_000
ALICE, ALICE_PASSWORD = "alice", "alice-secret"
DELEGATION_TOKENS = "org.apache.kafka.tools.DelegationTokenCommand"
METADATA_QUORUM = "org.apache.kafka.tools.MetadataQuorumCommand"
CONSOLE_CONSUMER = "org.apache.kafka.tools.consumer.ConsoleConsumer"
SCRAM_LOGIN = "org.apache.kafka.common.security.scram.ScramLoginModule"


@dataclass
class Java:
    cp: str
    exe: str
    dir: Path

    def run(self, main: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        command = [self.exe, "-Xmx256m", "-XX:TieredStopAtLevel=1", "-cp", self.cp, main, *args]
        return subprocess.run(command, capture_output=True, text=True, timeout=timeout)

    def properties(self, name: str, user: str, password: str, token: bool = False) -> str:
        path = self.dir / f"{name}.properties"
        extra = ' tokenauth="true"' if token else ""
        path.write_text(
            "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-512\n"
            f'sasl.jaas.config={SCRAM_LOGIN} required username="{user}" password="{password}"{extra};\n'
        )
        return str(path)


@pytest.fixture(scope="module")
def jvm(tmp_path_factory: pytest.TempPathFactory) -> Java:
    try:
        return Java(classpath(), java(), tmp_path_factory.mktemp("java-tools"))
    except ReferenceUnavailable as exc:
        pytest.fail(f"the Kafka 4.4 classpath is needed: {exc}")


def start(data_dir: Path) -> ThreadBroker:
    config = make_config(data_dir)
    for name, value in {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        "sasl.enabled.mechanisms": "SCRAM-SHA-512",
        "delegation.token.secret.key": SECRET,
    }.items():
        config.set(name, value)
    return ThreadBroker(config).start()


def sasl_bootstrap(broker: ThreadBroker) -> str:
    assert broker.broker is not None
    return f"127.0.0.1:{broker.broker.nodes.listener_bound[1, 'SASL_PLAINTEXT']}"


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    store_add(tmp_path, ALICE, ALICE_PASSWORD, [ScramMechanism.SCRAM_SHA_512], 4096)
    yield tmp_path


def tokens_tool(jvm: Java, broker: ThreadBroker, *args: str) -> str:
    config = jvm.properties("alice", ALICE, ALICE_PASSWORD)
    done = jvm.run(
        DELEGATION_TOKENS, "--bootstrap-server", sasl_bootstrap(broker), "--command-config", config, *args
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def consume_one(
    jvm: Java, broker: ThreadBroker, token_id: str, hmac: str
) -> subprocess.CompletedProcess[str]:
    config = jvm.properties(f"token-{token_id}", token_id, hmac, token=True)
    return jvm.run(
        CONSOLE_CONSUMER, "--bootstrap-server", sasl_bootstrap(broker), "--topic", "secured",
        "--partition", "0", "--offset", "earliest", "--max-messages", "1", "--timeout-ms", "15000",
        "--command-config", config,
    )  # fmt: skip


def created_token(output: str) -> tuple[str, str]:
    """The token id and HMAC in kafka-delegation-tokens --create's table."""
    match = re.search(r"^(\S{22})\s+(\S+)\s+User:alice\s", output, re.MULTILINE)
    assert match is not None, output
    return match.group(1), match.group(2)


def assert_refused(read: subprocess.CompletedProcess[str]) -> None:
    """The console consumer gave up on a failed authentication (it exits 0 even then)."""
    said = read.stdout + read.stderr
    assert "SaslAuthenticationException" in said and "Processed a total of 0 messages" in said, said


def test_a_token_made_with_the_java_admin_client_authenticates_a_java_consumer_until_it_expires(
    jvm: Java, data_dir: Path
) -> None:
    broker = start(data_dir)
    try:
        create_topic(broker.bootstrap, "secured")
        from confluent_kafka import Producer

        send_confluent(
            Producer({"bootstrap.servers": broker.bootstrap}), "secured", [Rec(0, b"k", b"for the token")]
        )
        out = tokens_tool(
            jvm, broker, "--create", "--max-life-time-period", "-1", "--renewer-principal", "User:bob"
        )
        token_id, hmac = created_token(out)
        read = consume_one(jvm, broker, token_id, hmac)
        assert read.returncode == 0 and "for the token" in read.stdout, read.stdout + read.stderr
    finally:
        broker.stop()

    broker = start(data_dir)  # the token is in the security journal, its HMAC computed from the secret
    try:
        read = consume_one(jvm, broker, token_id, hmac)
        assert read.returncode == 0 and "for the token" in read.stdout, read.stdout + read.stderr
        described = tokens_tool(jvm, broker, "--describe", "--owner-principal", "User:alice")
        assert token_id in described and "User:bob" in described
        tokens_tool(jvm, broker, "--renew", "--hmac", hmac, "--renew-time-period", "-1")

        assert broker.broker is not None
        steering = broker.broker.steering
        broker.call(lambda: steering.advance(DAY_MS + 2 * 3_600_000))  # past expiry and the next sweep
        assert_refused(consume_one(jvm, broker, token_id, hmac))
        assert token_id not in tokens_tool(jvm, broker, "--describe", "--owner-principal", "User:alice")
    finally:
        broker.stop()


def test_kafka_delegation_tokens_expires_a_token_at_once(jvm: Java, data_dir: Path) -> None:
    broker = start(data_dir)
    try:
        token_id, hmac = created_token(tokens_tool(jvm, broker, "--create", "--max-life-time-period", "-1"))
        out = tokens_tool(jvm, broker, "--expire", "--hmac", hmac, "--expiry-time-period", "-1")
        assert "Completed expire operation" in out
        assert token_id not in tokens_tool(jvm, broker, "--describe", "--owner-principal", "User:alice")
        assert_refused(consume_one(jvm, broker, token_id, hmac))
    finally:
        broker.stop()


def test_kafka_metadata_quorum_describes_the_one_voter(jvm: Java, tmp_path: Path) -> None:
    broker = start(tmp_path)
    try:
        status = jvm.run(METADATA_QUORUM, "--bootstrap-server", broker.bootstrap, "describe", "--status")
        assert status.returncode == 0, status.stdout + status.stderr
        assert re.search(r"LeaderId:\s+1\b", status.stdout), status.stdout
        assert "CurrentVoters" in status.stdout and '"id": 1' in status.stdout, status.stdout
        replication = jvm.run(
            METADATA_QUORUM, "--bootstrap-server", broker.bootstrap, "describe", "--replication"
        )
        assert replication.returncode == 0, replication.stdout + replication.stderr
        assert re.search(r"^1\s+\S+\s+\d+\s+0\s+.*Leader", replication.stdout, re.MULTILINE), (
            replication.stdout
        )
    finally:
        broker.stop()
