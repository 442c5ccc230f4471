"""The authorizer's settings: off by default, Kafka's class names turn it on, another name is refused."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kafkito.broker.preflight import PreflightError, check_authorizer
from kafkito.broker.security.authorizer import authorizer_for
from kafkito.broker.security.store import SecurityStore
from tests.conftest import make_config


def test_no_authorizer_by_default(tmp_path: Path) -> None:
    assert authorizer_for(make_config(tmp_path), lambda: SecurityStore(tmp_path)) is None


@pytest.mark.parametrize(
    "name",
    ["org.apache.kafka.metadata.authorizer.StandardAuthorizer", "kafka.security.authorizer.AclAuthorizer"],
)
def test_kafka_s_class_names_turn_it_on(tmp_path: Path, name: str) -> None:
    config = make_config(tmp_path)
    config.set("authorizer.class.name", name)
    config.set("super.users", " User:admin ; User:CN=ops,O=acme ;")
    authorizer = authorizer_for(config, lambda: SecurityStore(tmp_path))
    assert authorizer is not None
    assert authorizer.super_users == {"User:admin", "User:CN=ops,O=acme"}
    assert authorizer.allow_if_no_acl is False
    check_authorizer(name)


def test_another_class_is_refused_before_start() -> None:
    with pytest.raises(
        PreflightError, match=re.escape("authorizer.class.name=com.example.Custom is not available")
    ):
        check_authorizer("com.example.Custom")
