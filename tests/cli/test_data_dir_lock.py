"""One broker per data dir, as Kafka's `<log.dir>/.lock`: a second `kafkito serve` (or a second broker
in the same process) on a data dir in use is refused at once in one line, the first one is not
disturbed, and a `kill -9` leaves no stale lock."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkito.broker.log.dir_lock import DataDirInUse
from kafkito.testing import start as start_in_process
from tests.cli.conftest import kafkito
from tests.support.brokers import ProcessBroker
from tests.support.wire import WireClient

METADATA = 3


def _metadata_brokers(bootstrap: str) -> list[int]:
    with WireClient(bootstrap) as client:
        return [b.port for b in client.request(METADATA, 4, topics=[]).brokers]


def test_a_second_serve_on_a_dir_in_use_is_refused_and_a_kill_9_leaves_no_stale_lock(tmp_path: Path) -> None:
    data = tmp_path / "data"
    first = ProcessBroker(data).start()
    try:
        second = kafkito("serve", "--port", "0", "--data-dir", str(data), "--log-format", "json", timeout=30)
        assert second.returncode == 2
        assert "Traceback" not in second.stderr and second.stdout == ""
        assert second.stderr.count("\n") == 1, second.stderr
        assert second.stderr.startswith(f"kafkito serve: data dir {data} is in use by another broker (pid ")
        assert _metadata_brokers(first.bootstrap) == [first.port]  # the first one still answers
        first.kill()  # SIGKILL: no shutdown code runs, the kernel drops the lock
        again = ProcessBroker(data).start()
        try:
            assert _metadata_brokers(again.bootstrap) == [again.port]
        finally:
            again.kill()
    finally:
        first.kill()


def test_a_second_broker_in_the_same_process_is_refused(tmp_path: Path) -> None:
    with start_in_process(data_dir=tmp_path) as first:
        with pytest.raises(DataDirInUse, match=f"data dir {tmp_path} is in use by another broker"):
            start_in_process(data_dir=tmp_path)
        first.restart(kill=True)  # a crash releases the lock as a SIGKILL would, and the restart takes it
        with pytest.raises(DataDirInUse):
            start_in_process(data_dir=tmp_path)
        assert _metadata_brokers(first.bootstrap_servers) == [first.port]
    with start_in_process(data_dir=tmp_path) as after_stop:  # a stop releases it
        assert _metadata_brokers(after_stop.bootstrap_servers) == [after_stop.port]
