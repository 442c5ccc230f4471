"""`kafkito serve --as-version X.Y` and the `kafkito.as.version` property behind it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kafkito.broker.cli import _parser, build_config
from kafkito.broker.config import ConfigError
from kafkito.testing import start
from tests.support.brokers import ProcessBroker
from tests.support.wire import WireClient


def test_serve_as_version_answers_api_versions_as_kafka_2_8(tmp_path: Path) -> None:
    broker = ProcessBroker(tmp_path / "data", args=["--as-version", "2.8"]).start()
    try:
        with WireClient(broker.bootstrap) as client:
            answer = client.request(18, 3, client_software_name="cli", client_software_version="1")
        got = {k.api_key: (k.min_version, k.max_version) for k in answer.api_keys}
        assert got[0] == (0, 9) and got[1] == (0, 12) and got[18] == (0, 3) and 68 not in got
    finally:
        broker.stop()


def test_the_property_works_from_set_and_a_patch_release_is_its_release(tmp_path: Path) -> None:
    args = _parser("serve").parse_args(["serve", "--set", "kafkito.as.version=2.8.1"])
    assert build_config(args).kafkito_as_version == "2.8.1"
    props = tmp_path / "server.properties"
    props.write_text("kafkito.as.version=3.9\n")
    from_file = build_config(_parser("serve").parse_args(["serve", "--config", str(props)]))
    assert from_file.kafkito_as_version == "3.9"


def test_an_unknown_release_is_refused_before_start(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"unknown Kafka release '0\.10'"):
        build_config(_parser("serve").parse_args(["serve", "--as-version", "0.10"]))
    with pytest.raises(ValueError, match=r"unknown Kafka release '5\.0'"):
        start(as_version="5.0")
    done = subprocess.run(
        [sys.executable, "-m", "kafkito", "serve", "--as-version", "9.9", "--data-dir", str(tmp_path / "d")],
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert b"unknown Kafka release '9.9'" in done.stderr
    assert not (tmp_path / "d").exists()
