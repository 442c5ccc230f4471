"""`kafkito.as.version`: a broker pinned to a Kafka release advertises, in ApiVersions, that release's
API versions (protocol/kafka_releases.py) at the versions kafkito also serves, with that release's
feature levels, and closes the connection where that Kafka would."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kafkito.broker.handlers import VERSIONS
from kafkito.protocol.kafka_releases import NAMES, RELEASES
from kafkito.testing import KafkitoHandle, start
from tests.support.wire import WireClient

TELEMETRY = {71, 72}  # answered, never advertised (no client telemetry plugin)


def served_by_both(release: str) -> dict[int, tuple[int, int]]:
    """The release's ranges cut to kafkito's: what the pinned broker must advertise."""
    out = {}
    for key, (lo, hi) in RELEASES[release].items():
        if key in VERSIONS and key not in TELEMETRY:
            both = (max(lo, VERSIONS[key][0]), min(hi, VERSIONS[key][1]))
            if both[0] <= both[1]:
                out[key] = both
    return out


def api_versions(bootstrap: str, version: int) -> object:
    with WireClient(bootstrap) as client:
        fields = dict(client_software_name="as-version", client_software_version="1") if version >= 3 else {}
        return client.request(18, version, **fields)


@pytest.fixture(scope="module")
def brokers() -> Iterator[dict[str, KafkitoHandle]]:
    started: dict[str, KafkitoHandle] = {}
    yield started
    for handle in started.values():
        handle.stop()


def pinned_broker(brokers: dict[str, KafkitoHandle], release: str) -> KafkitoHandle:
    if release not in brokers:
        brokers[release] = start(as_version=release, log_level="warning")
    return brokers[release]


@pytest.mark.parametrize("release", NAMES)
def test_api_versions_are_the_release_table(brokers: dict[str, KafkitoHandle], release: str) -> None:
    handle = pinned_broker(brokers, release)
    own_max = RELEASES[release][18][1]
    answer = api_versions(handle.bootstrap_servers, min(own_max, 4))
    got = {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}  # type: ignore[attr-defined]
    assert answer.error_code == 0  # type: ignore[attr-defined]
    assert got == served_by_both(release)


def test_the_tables_hold_what_each_release_added() -> None:
    assert set(RELEASES["0.10.0"]) == set(range(19))
    assert RELEASES["0.10.0"][18] == (0, 0) and RELEASES["0.11.0"][18] == (0, 1)
    assert RELEASES["2.8"][0] == (0, 9) and RELEASES["2.8"][1] == (0, 12) and 68 not in RELEASES["2.8"]
    assert RELEASES["3.9"][1] == (0, 17) and 75 not in RELEASES["3.9"]  # a ZooKeeper 3.9 broker
    assert RELEASES["4.0"][11] == (2, 9) and RELEASES["4.1"][11] == (0, 9)  # JoinGroup v0-1 came back
    assert RELEASES["4.4"][0] == (0, 13) and RELEASES["4.4"][18] == (0, 5)


def test_pinned_2_8_refuses_newer_versions_and_apis_as_kafka_2_8(brokers: dict[str, KafkitoHandle]) -> None:
    bootstrap = pinned_broker(brokers, "2.8").bootstrap_servers
    for key, version in ((1, 13), (3, 12), (68, 0), (75, 0)):  # Fetch v13, Metadata v12, 3.7+, KRaft only
        with WireClient(bootstrap) as client:
            client.send_raw(_frame(key, version))
            assert client.recv_frame() is None, f"api {key} v{version} was answered"
    with WireClient(bootstrap) as client:  # the newest 2.8 has is served
        assert client.request(3, 11, topics=[], allow_auto_topic_creation=False).throttle_time_ms == 0


def test_too_new_api_versions_lists_its_range_since_kip_511(brokers: dict[str, KafkitoHandle]) -> None:
    for release, listed in (("2.8", [(18, 0, 3)]), ("2.3", [])):
        with WireClient(pinned_broker(brokers, release).bootstrap_servers) as client:
            client.send(18, 4, client_software_name="x", client_software_version="1")
            answer = client.recv(18, 0)
        assert answer.error_code == 35
        assert [(k.api_key, k.min_version, k.max_version) for k in answer.api_keys] == listed


def test_feature_levels_follow_the_release(brokers: dict[str, KafkitoHandle]) -> None:
    def features(release: str, version: int) -> tuple[object, object, object]:
        a = api_versions(pinned_broker(brokers, release).bootstrap_servers, version)
        supported = sorted((f.name, f.min_version, f.max_version) for f in a.supported_features)  # type: ignore[attr-defined]
        finalized = sorted((f.name, f.max_version_level) for f in a.finalized_features)  # type: ignore[attr-defined]
        return supported, finalized, a.finalized_features_epoch  # type: ignore[attr-defined]

    assert features("2.6", 3) == ([], [], -1)
    assert features("2.8", 3) == ([], [], -1)
    finalized_3_9 = [("kraft.version", 1), ("metadata.version", 21)]
    assert features("3.9", 3) == ([("metadata.version", 1, 21)], finalized_3_9, 0)
    supported, finalized, _ = features("4.4", 4)
    assert ("share.version", 0, 2) in supported and ("metadata.version", 7, 33) in supported
    assert ("transaction.version", 2) in finalized and ("metadata.version", 33) in finalized


def _frame(api_key: int, version: int) -> bytes:
    import struct

    client_id = b"as-version"
    header = struct.pack(">hhih", api_key, version, 1, len(client_id)) + client_id + b"\x00"
    body = header + bytes(32)
    return struct.pack(">i", len(body)) + body
