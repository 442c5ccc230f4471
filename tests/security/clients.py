"""Each client's own idiom for a secured round trip: produce, consume in a group, commit; and a login
that must fail. `Login` says how to connect (listener address, protocol, mechanism, user, CA file)."""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from dataclasses import dataclass

from tests.support.waiting import wait_until


@dataclass(frozen=True)
class Login:
    bootstrap: str
    protocol: str  # SASL_SSL, SASL_PLAINTEXT, SSL
    mechanism: str | None
    user: str | None
    password: str | None
    ca: str | None = None
    cert: str | None = None  # mTLS client certificate and key (PEM files)
    key: str | None = None


def _names() -> tuple[str, str]:
    tag = uuid.uuid4().hex[:8]
    return f"secured-{tag}", f"group-{tag}"


RECORDS = [f"record-{i}".encode() for i in range(10)]


# -- confluent-kafka -------------------------------------------------------------------------------
def confluent_config(login: Login) -> dict[str, object]:
    conf: dict[str, object] = {"bootstrap.servers": login.bootstrap, "security.protocol": login.protocol}
    if login.mechanism:
        conf.update(
            {"sasl.mechanism": login.mechanism, "sasl.username": login.user, "sasl.password": login.password}
        )
    if login.ca:
        conf["ssl.ca.location"] = login.ca
    if login.cert:
        conf.update({"ssl.certificate.location": login.cert, "ssl.key.location": login.key})
    return conf


def confluent_round_trip(login: Login) -> None:
    from confluent_kafka import Consumer, Producer, TopicPartition

    topic, group = _names()
    producer = Producer(confluent_config(login))
    for value in RECORDS:
        producer.produce(topic, value)
    assert producer.flush(30) == 0
    consumer = Consumer({**confluent_config(login), "group.id": group, "auto.offset.reset": "earliest",
                         "enable.auto.commit": False})  # fmt: skip
    consumer.subscribe([topic])
    got: list[bytes] = []
    deadline = time.monotonic() + 60
    while len(got) < len(RECORDS) and time.monotonic() < deadline:
        msg = consumer.poll(1.0)
        if msg is not None and msg.error() is None:
            got.append(msg.value())
    assert got == RECORDS
    consumer.commit(asynchronous=False)
    committed = consumer.committed([TopicPartition(topic, 0)], timeout=10)
    assert committed[0].offset == len(RECORDS)
    consumer.close()


def confluent_login_error(login: Login) -> str:
    """The authentication error librdkafka reports (through error_cb), within seconds."""
    from confluent_kafka.admin import AdminClient

    errors: list[str] = []
    admin = AdminClient(
        {**confluent_config(login), "error_cb": lambda e: errors.append(f"{e.name()}: {e.str()}")}
    )
    wait_until(lambda: admin.poll(0.2) is not None and bool(errors), 30, "librdkafka reports an error")
    return " | ".join(errors)


# -- kafka-python ----------------------------------------------------------------------------------
def kafka_python_config(login: Login) -> dict[str, object]:
    conf: dict[str, object] = {"bootstrap_servers": login.bootstrap, "security_protocol": login.protocol}
    if login.mechanism:
        conf.update({"sasl_mechanism": login.mechanism, "sasl_plain_username": login.user,
                     "sasl_plain_password": login.password})  # fmt: skip
    if login.ca:
        conf["ssl_cafile"] = login.ca
    if login.cert:
        conf.update({"ssl_certfile": login.cert, "ssl_keyfile": login.key})
    return conf


def kafka_python_round_trip(login: Login) -> None:
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    topic, group = _names()
    producer = KafkaProducer(**kafka_python_config(login))
    for value in RECORDS:
        producer.send(topic, value).get(30)
    producer.close()
    consumer = KafkaConsumer(topic, group_id=group, auto_offset_reset="earliest", enable_auto_commit=False,
                             **kafka_python_config(login))  # fmt: skip
    got: list[bytes] = []
    deadline = time.monotonic() + 60
    while len(got) < len(RECORDS) and time.monotonic() < deadline:
        for records in consumer.poll(1000).values():
            got.extend(r.value for r in records)
    assert got == RECORDS
    consumer.commit()
    assert consumer.committed(TopicPartition(topic, 0)) == len(RECORDS)
    consumer.close()


class _Capture(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def kafka_python_login_error(login: Login) -> tuple[Exception, str]:
    """kafka-python gives up bootstrapping (its exception) and logs the broker's authentication error."""
    from kafka import KafkaAdminClient

    capture = _Capture()
    logging.getLogger("kafka").addHandler(capture)
    try:
        KafkaAdminClient(request_timeout_ms=5000, bootstrap_timeout_ms=5000, **kafka_python_config(login))
    except Exception as exc:
        return exc, " | ".join(capture.lines)
    finally:
        logging.getLogger("kafka").removeHandler(capture)
    raise AssertionError("kafka-python connected with a wrong password")


# -- aiokafka --------------------------------------------------------------------------------------
def aiokafka_config(login: Login) -> dict[str, object]:
    from aiokafka.helpers import create_ssl_context

    conf: dict[str, object] = {"bootstrap_servers": login.bootstrap, "security_protocol": login.protocol}
    if login.mechanism:
        conf.update({"sasl_mechanism": login.mechanism, "sasl_plain_username": login.user,
                     "sasl_plain_password": login.password})  # fmt: skip
    if login.ca:
        conf["ssl_context"] = create_ssl_context(cafile=login.ca, certfile=login.cert, keyfile=login.key)
    return conf


def aiokafka_round_trip(login: Login) -> None:
    asyncio.run(_aiokafka_round_trip(login))


async def _aiokafka_round_trip(login: Login) -> None:
    from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition

    topic, group = _names()
    producer = AIOKafkaProducer(**aiokafka_config(login))
    await producer.start()
    try:
        for value in RECORDS:
            await producer.send_and_wait(topic, value)
    finally:
        await producer.stop()
    consumer = AIOKafkaConsumer(topic, group_id=group, auto_offset_reset="earliest", enable_auto_commit=False,
                                **aiokafka_config(login))  # fmt: skip
    await consumer.start()
    try:
        got: list[bytes] = []
        while len(got) < len(RECORDS):
            batch = await asyncio.wait_for(consumer.getmany(timeout_ms=1000), 60)
            for records in batch.values():
                got.extend(r.value for r in records if r.value is not None)
        assert got == RECORDS
        await consumer.commit()
        assert await consumer.committed(TopicPartition(topic, 0)) == len(RECORDS)
    finally:
        await consumer.stop()


def aiokafka_login_error(login: Login) -> tuple[Exception, str]:
    """aiokafka gives up bootstrapping (its exception) and logs the broker's authentication error."""

    async def attempt() -> Exception:
        from aiokafka import AIOKafkaProducer

        producer = AIOKafkaProducer(request_timeout_ms=5000, **aiokafka_config(login))
        try:
            await producer.start()
        except Exception as exc:
            return exc
        finally:
            await producer.stop()
        raise AssertionError("aiokafka connected with a wrong password")

    capture = _Capture()
    logging.getLogger("aiokafka").addHandler(capture)
    try:
        return asyncio.run(attempt()), " | ".join(capture.lines)
    finally:
        logging.getLogger("aiokafka").removeHandler(capture)
