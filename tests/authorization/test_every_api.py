"""Every served API and version, sent with default values by a principal without ACLs to a broker
enforcing them: each is answered with a well-formed response of its version (an authorization error
where a check refuses it), and the connection stays open."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkito.protocol.codec import RESPONSES
from kafkito.protocol.errors import ErrorCode
from tests.authorization.conftest import AclBroker, acl_broker
from tests.protocol_versions.test_every_version import _ask, _every
from tests.support.wire import WireClient


@pytest.fixture(scope="module")
def enforcing(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AclBroker]:
    thread = acl_broker(Path(tmp_path_factory.mktemp("every-api"))).start()
    yield AclBroker(thread)
    thread.stop()


@pytest.mark.parametrize(("api_key", "version"), _every(False))
def test_every_version_is_answered_under_acls(enforcing: AclBroker, api_key: int, version: int) -> None:
    with WireClient(enforcing.plaintext) as client:
        frame = _ask(client, api_key, version)
        assert frame is not None, "the broker closed the connection"
        response = RESPONSES[api_key].decode(frame, version=version, header=True)
        assert response.header.correlation_id == client._correlation
        assert bytes(response.encode(header=True)) == frame, "not exactly a response of this version"
        assert client.request(18, 0).error_code == ErrorCode.NONE  # the connection is still open
