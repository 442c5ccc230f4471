"""The 4.4 table against the reference Apache Kafka 4.4 (a JVM: marked slow): its ApiVersions is the
table, and a kafkito pinned to 4.4 advertises the same but for what kafkito does not serve yet."""

from __future__ import annotations

import pytest

from kafkito.broker.handlers import VERSIONS
from kafkito.protocol.kafka_releases import RELEASES
from kafkito.testing import start
from tests.as_version.test_api_versions import served_by_both
from tests.support.kafka_reference import KafkaReference
from tests.support.wire import WireClient

pytestmark = pytest.mark.slow


def advertised(bootstrap: str) -> dict[int, tuple[int, int]]:
    with WireClient(bootstrap) as client:
        answer = client.request(18, 4, client_software_name="as-version", client_software_version="1")
    return {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}


def test_kafka_4_4_advertises_the_4_4_table_and_pinned_kafkito_its_served_part() -> None:
    with KafkaReference().start() as kafka:
        assert advertised(kafka.bootstrap) == RELEASES["4.4"]
    with start(as_version="4.4", log_level="warning") as kafkito:
        ours = advertised(kafkito.bootstrap_servers)
    assert ours == served_by_both("4.4")
    # What kafkito lacks of 4.4 is only what it does not serve: APIs, and versions above its own.
    for key, (lo, hi) in RELEASES["4.4"].items():
        if key in ours:
            assert ours[key][0] == lo and ours[key][1] == min(hi, VERSIONS[key][1])
        else:
            assert key not in VERSIONS
