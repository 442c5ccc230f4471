"""kcat (librdkafka) over SASL: produce with -P, consume in a group with -G (committing as it goes),
and a login that must fail; each client's settings as -X properties."""

from __future__ import annotations

import shutil
import subprocess
import uuid

from tests.security.clients import RECORDS, Login
from tests.support.waiting import wait_until


def _x(login: Login) -> list[str]:
    props = {"security.protocol": login.protocol, "sasl.mechanism": login.mechanism,
             "sasl.username": login.user, "sasl.password": login.password}  # fmt: skip
    if login.ca:
        props["ssl.ca.location"] = login.ca
    return [arg for k, v in props.items() if v for arg in ("-X", f"{k}={v}")]


def _kcat() -> str:
    path = shutil.which("kcat")
    assert path, "kcat is installed by `make install-clients`"
    return path


def round_trip(login: Login, committed: object) -> None:
    """Produce RECORDS, consume them in a group; `committed(topic, group)` gives the group's offset."""
    tag = uuid.uuid4().hex[:8]
    topic, group = f"kcat-{tag}", f"kcat-group-{tag}"
    produce = subprocess.run([_kcat(), "-b", login.bootstrap, *_x(login), "-P", "-t", topic, "-p", "0"],
                             input=b"\n".join(RECORDS) + b"\n", capture_output=True, timeout=60)  # fmt: skip
    assert produce.returncode == 0, produce.stderr.decode()[-500:]
    consumer = subprocess.Popen(
        [_kcat(), "-b", login.bootstrap, *_x(login), "-X", "auto.offset.reset=earliest",
         "-X", "auto.commit.interval.ms=100", "-G", group, topic, "-e", "-o", "beginning"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        out, err = consumer.communicate(timeout=90)
    finally:
        consumer.kill()
    assert out.splitlines() == RECORDS, err.decode()[-500:]
    assert callable(committed)
    wait_until(lambda: committed(topic, group) == len(RECORDS), 30, "kcat's group commit")


def login_error(login: Login) -> str:
    done = subprocess.run([_kcat(), "-b", login.bootstrap, *_x(login), "-L", "-m", "5"],
                          capture_output=True, timeout=60)  # fmt: skip
    assert done.returncode != 0
    return done.stderr.decode()
