"""`kafkito serve` refuses bad input in one line, with a non-zero exit, no traceback, and nothing created
on disk; unknown property names are warned about with the nearest known name."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.conftest import kafkito
from tests.support.waiting import wait_until


def _refused(tmp_path: Path, *args: str, data: Path | None = None) -> str:
    """Run `kafkito serve` expecting a refusal; the one line it printed."""
    data = data or tmp_path / "data"
    done = kafkito("serve", "--data-dir", str(data), "--log-format", "json", *args, timeout=30)
    assert done.returncode == 2, done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("kafkito serve: "), done.stderr
    return done.stderr.removeprefix("kafkito serve: ").strip()


@pytest.mark.parametrize("port", ["70000", "-1", "65536"])
def test_port_outside_the_range(tmp_path: Path, port: str) -> None:
    message = _refused(tmp_path, "--port", port)
    assert message == f"--port {port} is not a port: use 1-65535"
    assert not (tmp_path / "data").exists()


def test_port_already_in_use(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        message = _refused(tmp_path, "--port", str(port))
    assert (
        message == f"port {port} on 127.0.0.1 is already in use (another broker?): stop it or pass --port N"
    )
    assert not (tmp_path / "data").exists()


@contextlib.contextmanager
def _taken_after_a_free_port() -> Iterator[int]:
    """A port held in use whose predecessor was free a moment ago (node 0 takes that one, node 1 this)."""
    for _ in range(50):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            port = taken.getsockname()[1]
            with socket.socket() as probe:
                try:
                    probe.bind(("127.0.0.1", port - 1))
                except OSError:
                    continue
            taken.listen()
            yield port
            return
    raise AssertionError("no port with a free predecessor found")


def test_a_clusters_next_port_already_in_use(tmp_path: Path) -> None:
    with _taken_after_a_free_port() as port:
        message = _refused(tmp_path, "--nodes", "3", "--port", str(port - 1))
    assert message.startswith(f"port {port} on 127.0.0.1 is already in use")
    assert not (tmp_path / "data").exists()


def test_data_dir_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    assert _refused(tmp_path, "--port", "0", data=tmp_path / "file") == (
        f"data dir {tmp_path / 'file'} is a file, not a directory: pass --data-dir DIR"
    )
    inside = tmp_path / "file" / "data"
    assert _refused(tmp_path, "--port", "0", data=inside) == (
        f"data dir {inside} cannot be created: {tmp_path / 'file'} is a file; pass --data-dir DIR"
    )


def test_data_dir_that_is_not_writable(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        # Root writes through permission bits; sysfs refuses anyone a new file.
        locked = Path("/sys/kernel")
    else:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o555)
    before = sorted(p.name for p in locked.iterdir())
    assert _refused(tmp_path, "--port", "0", data=locked) == (
        f"data dir {locked} is not writable: fix its permissions or pass --data-dir DIR"
    )
    assert sorted(p.name for p in locked.iterdir()) == before


def test_properties_file_that_cannot_be_read(tmp_path: Path) -> None:
    missing = tmp_path / "server.properties"
    assert _refused(tmp_path, "--config", str(missing)) == (
        f"cannot read the properties file {missing} (No such file or directory): pass --config FILE"
    )
    assert _refused(tmp_path, "--config", str(tmp_path)) == (
        f"cannot read the properties file {tmp_path} (Is a directory): pass --config FILE"
    )
    assert not (tmp_path / "data").exists()


def test_values_kafka_refuses(tmp_path: Path) -> None:
    assert _refused(tmp_path, "--set", "num.partitions=-1") == (
        "invalid value -1 for num.partitions: it must be at least 1"
    )
    props = tmp_path / "server.properties"
    props.write_text("group.min.session.timeout.ms=70000\ngroup.max.session.timeout.ms=60000\n")
    assert _refused(tmp_path, "--config", str(props)) == (
        "group.min.session.timeout.ms=70000 is above group.max.session.timeout.ms=60000: "
        "Kafka requires group.min.session.timeout.ms <= group.max.session.timeout.ms"
    )
    assert _refused(tmp_path, "--set", "log.message.timestamp.type=Later") == (
        "invalid value 'Later' for log.message.timestamp.type: one of CreateTime, LogAppendTime"
    )
    assert _refused(tmp_path, "--set", "num.partitions=many") == "num.partitions='many' is not a valid int"
    assert _refused(tmp_path, "--set", "group.consumer.assignors=uniform,sticky") == (
        "group.consumer.assignors: unknown assignor 'sticky' (supported: uniform, range)"
    )
    assert not (tmp_path / "data").exists()


def _serve(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    ready = tmp_path / "ready.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "kafkito", "serve", "--port", "0", "--data-dir", str(tmp_path / "data"),
         "--log-format", "json", "--ready-file", str(ready), *args],
        stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    wait_until(ready.exists, what="the ready file")
    proc.port = json.loads(ready.read_text())["port"]  # type: ignore[attr-defined]
    return proc


def _stop(proc: subprocess.Popen[str]) -> list[dict[str, object]]:
    proc.terminate()
    _, err = proc.communicate(timeout=30)
    return [json.loads(line) for line in err.splitlines() if line.startswith("{")]


def test_unknown_properties_are_warned_with_the_nearest_name(tmp_path: Path) -> None:
    """The share partitions' properties are read where they are used, so they are neither unknown nor
    unused; a misspelt one still gets the nearest name."""
    proc = _serve(
        tmp_path,
        "--set", "num.partition=3",
        "--set", "process.roles=broker",
        "--set", "share.coordinator.state.topic.prune.interval.ms=1000",
        "--set", "share.coordinator.state.topic.prune.intervl.ms=1000",
    )  # fmt: skip
    events = _stop(proc)
    warnings = [e for e in events if e["level"] == "warning"]
    assert [w.get("property") for w in warnings[:2]] == [
        "num.partition",
        "share.coordinator.state.topic.prune.intervl.ms",
    ]
    assert warnings[0]["hint"] == "did you mean `num.partitions`?"
    assert warnings[1]["hint"] == "did you mean `share.coordinator.state.topic.prune.interval.ms`?"
    assert warnings[2]["event"] == "config.not_used" and warnings[2]["properties"] == ["process.roles"]


def test_debug_logs_name_the_api_and_show_clients_come_and_go(tmp_path: Path) -> None:
    proc = _serve(tmp_path, "--log-level", "debug")
    bootstrap = f"127.0.0.1:{proc.port}"  # type: ignore[attr-defined]
    listed = kafkito("topics", "list", "--bootstrap-server", bootstrap)
    created = kafkito("topics", "create", "fresh", "--partitions", "3", "--bootstrap-server", bootstrap)
    events = _stop(proc)
    assert listed.returncode == 0 and created.returncode == 0
    # A new data dir, and new partitions, had no shutdown: none is reported as unclean.
    assert [e for e in events if e.get("clean_shutdown") is False] == []
    assert sum(e["event"] == "log.created" for e in events) == 3
    apis = {e["api"] for e in events if e["event"] == "request"}
    assert {"ApiVersions", "Metadata"} <= apis
    gone = [e for e in events if e["event"] == "client.disconnected" and e["client_id"] == "kafkito-cli"]
    assert gone and all(e["level"] == "debug" for e in events if e["event"].startswith("client."))
    assert sum(e["event"] == "client.connected" for e in events) >= len(gone)


def test_info_logs_of_a_first_start_are_few(tmp_path: Path) -> None:
    events = _stop(_serve(tmp_path))
    assert [e["event"] for e in events if e["level"] != "info"] == []
    assert len([e for e in events if e["event"] != "broker.signal"]) <= 8  # not one per offsets partition


def test_usage_helps_with_a_mistyped_flag_or_command(tmp_path: Path) -> None:
    typo = kafkito("serve", "--prot", "9092")
    assert (
        typo.returncode == 2
        and "kafkito serve: error: unrecognized arguments: --prot 9092; did you mean --port?" in typo.stderr
    )
    assert typo.stderr.startswith("usage: kafkito serve ")
    consume = kafkito("consume", "t", "--from-begining")
    assert "did you mean --from-beginning?" in consume.stderr and consume.stderr.startswith(
        "usage: kafkito consume "
    )
    required = kafkito("groups", "reset-offsets", "g", "--to-earlist", "--all-topics")
    assert required.returncode == 2
    assert required.stderr.splitlines()[-2].endswith("; did you mean --to-earliest?")
    command = kafkito("topic", "list")
    assert command.returncode == 2 and "did you mean topics?" in command.stderr
    missing = kafkito("offsets")
    assert (
        missing.returncode == 2 and "kafkito offsets: error: missing a command: one of dump" in missing.stderr
    )
    for done in (typo, consume, command, missing):
        assert "_command" not in done.stderr and "_verb" not in done.stderr and "Traceback" not in done.stderr
    control = kafkito("control", "--url", "http://127.0.0.1:1")
    assert control.returncode == 2 and "control_command" not in control.stderr


def test_version() -> None:
    from importlib.metadata import version

    done = kafkito("--version")
    assert done.returncode == 0 and done.stdout == f"kafkito {version('kafkito')}\n"
