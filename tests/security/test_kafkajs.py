"""KafkaJS (node) over SASL_SSL with SCRAM-SHA-512 and over SASL_PLAINTEXT with PLAIN: produce, consume in
a group, commit; a wrong password is KafkaJS's authentication error, not a hang."""

from __future__ import annotations

import json
import shutil
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.security.conftest import PLAIN_PASSWORD, PLAIN_USER, SCRAM_PASSWORD, SCRAM_USER, SecureBroker

SCRIPT = Path(__file__).with_name("kafkajs_secure.js")
KAFKAJS = Path(__file__).resolve().parents[1] / "compat" / "node" / "node_modules" / "kafkajs"


def _run(**cmd: Any) -> dict[str, Any]:
    node = shutil.which("node")
    assert node and KAFKAJS.is_dir(), "node and KafkaJS (`make install-clients`) are needed"
    done = subprocess.run([node, str(SCRIPT), json.dumps(cmd)], capture_output=True, timeout=120)
    lines = [line for line in done.stdout.decode().splitlines() if line.strip()]
    assert lines, done.stderr.decode()[-2000:]
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _logins(secure: SecureBroker) -> dict[str, dict[str, Any]]:
    return {
        "SASL_SSL/SCRAM-SHA-512": dict(bootstrap=secure.bootstrap("SASL_SSL"), ca=secure.ca,
                                       mechanism="scram-sha-512", user=SCRAM_USER, password=SCRAM_PASSWORD),
        "SASL_PLAINTEXT/PLAIN": dict(bootstrap=secure.bootstrap("SASL_PLAINTEXT"), mechanism="plain",
                                     user=PLAIN_USER, password=PLAIN_PASSWORD),
    }  # fmt: skip


@pytest.mark.parametrize("which", ["SASL_SSL/SCRAM-SHA-512", "SASL_PLAINTEXT/PLAIN"])
def test_kafkajs_round_trip(secure: SecureBroker, which: str) -> None:
    tag = uuid.uuid4().hex[:8]
    result = _run(op="round-trip", topic=f"js-{tag}", group=f"js-group-{tag}", **_logins(secure)[which])
    assert result.get("failed") is None, result
    assert result["got"] == [f"record-{i}" for i in range(10)]
    assert result["committed"] == "10"


@pytest.mark.parametrize("which", ["SASL_SSL/SCRAM-SHA-512", "SASL_PLAINTEXT/PLAIN"])
def test_kafkajs_wrong_password(secure: SecureBroker, which: str) -> None:
    login = {**_logins(secure)[which], "password": "wrong"}
    result = _run(op="login", **login)
    assert result["error"] == "KafkaJSSASLAuthenticationError", result
    assert "Authentication failed" in result["message"]
