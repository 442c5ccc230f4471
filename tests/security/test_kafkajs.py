"""KafkaJS (node) over SASL_SSL with SCRAM-SHA-512 and over SASL_PLAINTEXT with PLAIN: produce, consume in
a group, commit; a wrong password is KafkaJS's authentication error, not a hang."""

from __future__ import annotations

import uuid
from typing import Any

import pytest

from tests.security.conftest import PLAIN_PASSWORD, PLAIN_USER, SCRAM_PASSWORD, SCRAM_USER, SecureBroker
from tests.security.kafkajs import run_kafkajs


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
    result = run_kafkajs(
        op="round-trip", topic=f"js-{tag}", group=f"js-group-{tag}", **_logins(secure)[which]
    )
    assert result.get("failed") is None, result
    assert result["got"] == [f"record-{i}" for i in range(10)]
    assert result["committed"] == "10"


@pytest.mark.parametrize("which", ["SASL_SSL/SCRAM-SHA-512", "SASL_PLAINTEXT/PLAIN"])
def test_kafkajs_wrong_password(secure: SecureBroker, which: str) -> None:
    login = {**_logins(secure)[which], "password": "wrong"}
    result = run_kafkajs(op="login", **login)
    assert result["error"] == "KafkaJSSASLAuthenticationError", result
    assert "Authentication failed" in result["message"]
