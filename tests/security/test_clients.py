"""Real clients over SASL_SSL with SCRAM-SHA-512 and over SASL_PLAINTEXT with PLAIN: produce, consume in a
group, commit; and the same clients with a wrong password fail with an authentication error, not a hang."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from tests.security import clients
from tests.security.clients import Login
from tests.security.conftest import PLAIN_PASSWORD, PLAIN_USER, SCRAM_PASSWORD, SCRAM_USER, SecureBroker

ROUND_TRIPS: dict[str, Callable[[Login], None]] = {
    "confluent-kafka": clients.confluent_round_trip,
    "kafka-python": clients.kafka_python_round_trip,
    "aiokafka": clients.aiokafka_round_trip,
}


def scram_login(secure: SecureBroker, password: str = SCRAM_PASSWORD) -> Login:
    return Login(secure.bootstrap("SASL_SSL"), "SASL_SSL", "SCRAM-SHA-512", SCRAM_USER, password, secure.ca)


def plain_login(secure: SecureBroker, password: str = PLAIN_PASSWORD) -> Login:
    return Login(secure.bootstrap("SASL_PLAINTEXT"), "SASL_PLAINTEXT", "PLAIN", PLAIN_USER, password)


@pytest.mark.parametrize("client", ROUND_TRIPS)
def test_sasl_ssl_scram_sha_512_round_trip(secure: SecureBroker, client: str) -> None:
    ROUND_TRIPS[client](scram_login(secure))


@pytest.mark.parametrize("client", ROUND_TRIPS)
def test_sasl_plaintext_plain_round_trip(secure: SecureBroker, client: str) -> None:
    ROUND_TRIPS[client](plain_login(secure))


@pytest.mark.parametrize("login", [scram_login, plain_login])
def test_confluent_wrong_password_is_an_authentication_error(
    secure: SecureBroker, login: Callable[..., Login]
) -> None:
    errors = clients.confluent_login_error(login(secure, "wrong"))
    assert "_AUTHENTICATION" in errors
    assert "Authentication failed" in errors


@pytest.mark.parametrize("login", [scram_login, plain_login])
def test_kafka_python_wrong_password_is_an_authentication_error(
    secure: SecureBroker, login: Callable[..., Login]
) -> None:
    exc, logged = clients.kafka_python_login_error(login(secure, "wrong"))
    assert "SaslAuthenticationFailedError" in logged and "Authentication failed" in logged
    assert exc is not None


@pytest.mark.parametrize("login", [scram_login, plain_login])
def test_aiokafka_wrong_password_is_an_authentication_error(
    secure: SecureBroker, login: Callable[..., Login]
) -> None:
    exc, logged = clients.aiokafka_login_error(login(secure, "wrong"))
    assert "SaslAuthenticationFailed" in logged and "Authentication failed" in logged
    assert exc is not None
