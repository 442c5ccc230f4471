"""The console's browser, write forms and cluster pages in a real headless chromium against a
`--http-write` broker (one per module): searching messages across partitions, producing from the
page, creating a topic, editing its configs, resetting offsets with a preview, the internal-topics
toggle and the ACL, user, transaction, broker-config and feature pages; a screenshot of each for
docs/console.md (written to docs/images by `make docs-images` only)."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from selenium.common.exceptions import ElementNotInteractableException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from tests.console.support import ConsoleBroker
from tests.console.test_browser import severe_logs, text_of, unstale, wait_for
from tests.support.artifacts import DOCS_IMAGES_ENV, output_path
from tests.support.wire import WireClient


def _click(browser: Any, by: str, value: str) -> None:
    """Click the element once it can be clicked: the live refresh may be replacing the page."""

    def clicked(d: Any) -> bool:
        try:
            d.find_element(by, value).click()
        except (ElementNotInteractableException, StaleElementReferenceException):
            return False
        return True

    wait_for(browser, clicked)


def _shot(browser: Any, tmp_path: Path, name: str) -> None:
    images = output_path(DOCS_IMAGES_ENV, tmp_path)
    images.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(images / name))


def _rows(browser: Any, table_id: str) -> list[list[str]]:
    def read() -> list[list[str]]:
        rows = browser.find_elements(By.CSS_SELECTOR, f"#{table_id} tbody tr")
        return [[td.text for td in row.find_elements(By.TAG_NAME, "td")] for row in rows]

    return unstale(read)


def _create(broker: ConsoleBroker, name: str, partitions: int) -> None:
    status, body = broker.call("POST", "/api/topics", {"name": name, "partitions": partitions})
    assert status == 201, body


def _fill(form: Any, name: str, text: str) -> None:
    field = form.find_element(By.NAME, name)
    field.clear()
    field.send_keys(text)


def test_searching_a_topics_messages_across_partitions(
    writable: ConsoleBroker, browser: Any, tmp_path: Path
) -> None:
    from kafka import KafkaProducer

    _create(writable, "clicks-b", 3)
    base = int(time.time() * 1000) - 60_000
    producer = KafkaProducer(bootstrap_servers=writable.bootstrap, linger_ms=0)
    for i in range(6):
        producer.send(
            "clicks-b",
            partition=i % 3,
            key=b"user-%d" % (i % 2),
            value=b'{"page": "/p%d"}' % i,
            headers=[("source", b"web" if i % 2 else b"app")],
            timestamp_ms=base + i * 1000,
        )
    producer.flush()
    producer.close()
    browser.get(writable.url + "/console/topics/clicks-b")
    _click(browser, By.ID, "browse-all")
    rows = _rows(browser, "messages")
    assert [(r[0], r[1]) for r in rows] == [
        ("2", "1"),
        ("1", "1"),
        ("0", "1"),
        ("2", "0"),
        ("1", "0"),
        ("0", "0"),
    ]
    assert '"page": "/p5"' in rows[0][4] and "source" in rows[0][5]
    form = browser.find_element(By.ID, "search")
    _fill(form, "key", "user-1")
    _fill(form, "header", "source=web")
    _fill(form, "limit", "2")
    _click(browser, By.ID, "search-button")
    wait_for(browser, lambda d: "key=user-1" in d.current_url)
    assert [r[4] for r in _rows(browser, "messages")] == ['{\n  "page": "/p5"\n}', '{\n  "page": "/p3"\n}']
    _shot(browser, tmp_path, "console-messages.png")
    form = browser.find_element(By.ID, "search")
    _fill(form, "from", str(base + 10_000))
    _click(browser, By.ID, "search-button")
    wait_for(browser, lambda d: d.find_elements(By.ID, "no-records"))
    assert _rows(browser, "messages") == []
    assert severe_logs(browser) == []


def test_producing_a_record_from_the_page(writable: ConsoleBroker, browser: Any) -> None:
    _create(writable, "produced-b", 2)
    browser.get(writable.url + "/console/topics/produced-b/messages")
    assert browser.find_elements(By.ID, "no-records")
    _click(browser, By.CSS_SELECTOR, "#produce summary")
    form = browser.find_element(By.ID, "produce-form")
    _fill(form, "partition", "1")
    _fill(form, "key", "order-7")
    _fill(form, "value", '{"total": 12}')
    _fill(form, "headers", "trace=abc\ntenant=blue")
    _click(browser, By.ID, "produce-button")
    wait_for(browser, lambda d: "produced to partition 1 at offset 0" in text_of(d, "action-status"))
    (row,) = _rows(browser, "messages")
    assert row[:2] == ["1", "0"] and row[3] == "order-7" and '"total": 12' in row[4]
    assert row[5].split() == ["trace:", "abc", "tenant:", "blue"]
    record = writable.get("/api/topics/produced-b/partitions/1/messages")["records"][0]
    assert [h["key"] for h in record["headers"]] == ["trace", "tenant"]
    assert severe_logs(browser) == []


def test_creating_a_topic_editing_its_configs_and_the_internal_toggle(
    writable: ConsoleBroker, browser: Any, tmp_path: Path
) -> None:
    browser.get(writable.url + "/console/topics")
    form = browser.find_element(By.ID, "create-topic")
    _fill(form, "name", "invoices-b")
    _fill(form, "partitions", "3")
    _fill(form, "configs", "retention.ms=3600000\nmax.message.bytes=2000000")
    _click(browser, By.ID, "create-topic-button")
    wait_for(browser, lambda d: "created topic invoices-b" in text_of(d, "action-status"))
    _click(browser, By.LINK_TEXT, "invoices-b")
    assert text_of(browser, "override-count") == "2 set on the topic"
    configs = {r[0]: r for r in _rows(browser, "configs")}
    assert "override" in configs["retention.ms"][2] and configs["retention.ms"][1] == "3600000"
    assert "override" not in configs["cleanup.policy"][2]
    assert [r[0] for r in _rows(browser, "configs")][:2] == [
        "max.message.bytes",
        "retention.ms",
    ]  # overrides first
    _shot(browser, tmp_path, "console-topic.png")
    form = browser.find_element(By.ID, "edit-configs")
    _fill(form, "set", "cleanup.policy=compact")
    _click(browser, By.ID, "edit-configs-button")
    wait_for(browser, lambda d: text_of(d, "override-count") == "3 set on the topic")
    _click(browser, By.CSS_SELECTOR, 'button[data-config="retention.ms"]')
    wait_for(browser, lambda d: text_of(d, "override-count") == "2 set on the topic")
    configs = {r[0]: r for r in _rows(browser, "configs")}
    assert configs["retention.ms"][1] == "604800000" and "override" in configs["cleanup.policy"][2]
    form = browser.find_element(By.ID, "edit-configs")
    _fill(form, "set", "retention.ms=soon")
    _click(browser, By.ID, "edit-configs-button")
    wait_for(browser, lambda d: "INVALID_CONFIG" in text_of(d, "action-status"))
    (refused,) = severe_logs(browser)  # the refusal (400) is the one error chromium logs
    assert refused["source"] == "network" and "/configs" in refused["message"] and "400" in refused["message"]
    # The internal topics: hidden until asked for.
    _commit(writable.bootstrap, "toggle-group", "invoices-b", 0)  # makes __consumer_offsets
    browser.get(writable.url + "/console/topics")
    names = [r[0] for r in _rows(browser, "topics")]
    assert "invoices-b" in names and not any(n.startswith("__") for n in names)
    _click(browser, By.ID, "internal-toggle")
    wait_for(browser, lambda d: any(r[0].startswith("__consumer_offsets") for r in _rows(d, "topics")))
    assert text_of(browser, "internal-toggle") == "hide internal topics"
    _shot(browser, tmp_path, "console-topics.png")
    assert severe_logs(browser) == []


def _commit(bootstrap: str, group: str, topic: str, offset: int, partition: int = 0) -> None:
    from kafka import KafkaConsumer, OffsetAndMetadata, TopicPartition

    consumer = KafkaConsumer(bootstrap_servers=bootstrap, group_id=group, enable_auto_commit=False)
    try:
        tp = TopicPartition(topic, partition)
        consumer.assign([tp])
        consumer.commit({tp: OffsetAndMetadata(offset, "", -1)})
    finally:
        consumer.close()


def test_resetting_offsets_shows_a_preview_before_it_is_applied(
    writable: ConsoleBroker, browser: Any, tmp_path: Path
) -> None:
    from kafka import KafkaProducer

    _create(writable, "ledger-b", 2)
    producer = KafkaProducer(bootstrap_servers=writable.bootstrap, linger_ms=0)
    for i in range(8):
        producer.send("ledger-b", partition=i % 2, value=b"entry %d" % i)
    producer.flush()
    producer.close()
    for partition in (0, 1):
        _commit(writable.bootstrap, "auditors", "ledger-b", 4, partition)
    browser.get(writable.url + "/console/groups/auditors")
    assert text_of(browser, "group-lag") == "0"
    form = browser.find_element(By.ID, "reset-form")
    _fill(form, "topic", "ledger-b")
    _fill(form, "partitions", "1")
    Select(form.find_element(By.NAME, "to")).select_by_visible_text("offset")
    _fill(form, "offset", "1")
    assert not browser.find_element(By.ID, "reset-offsets").is_displayed()
    _click(browser, By.ID, "reset-preview")
    wait_for(browser, lambda d: d.find_elements(By.ID, "reset-preview-table"))
    assert _rows(browser, "reset-preview-table") == [
        ["1", "4", "1", "3"]
    ]  # partition, current, new, lag after
    assert [o["committed_offset"] for o in writable.get("/api/groups/auditors")["offsets"]] == [4, 4]
    _shot(browser, tmp_path, "console-reset.png")
    _click(browser, By.ID, "reset-offsets")
    wait_for(browser, lambda d: "offsets of auditors reset" in text_of(d, "action-status"))
    assert text_of(browser, "group-lag") == "3"
    assert [o["committed_offset"] for o in writable.get("/api/groups/auditors")["offsets"]] == [4, 1]
    assert severe_logs(browser) == []


def test_the_acl_user_transaction_broker_and_feature_pages(
    writable: ConsoleBroker, browser: Any, tmp_path: Path
) -> None:
    from confluent_kafka import Producer

    with WireClient(writable.bootstrap) as wire:
        acl = dict(resource_type=3, resource_name="billing-", resource_pattern_type=4, principal="User:bob",
                   host="*", operation=3, permission_type=3)  # fmt: skip
        wire.request(30, 3, creations=[acl])
        scram = dict(name="dave", mechanism=1, iterations=4096, salt=b"s", salted_password=b"k" * 32)
        wire.request(51, 0, deletions=[], upsertions=[scram])
    browser.get(writable.url + "/console/acls")
    assert ["GROUP", "billing-", "PREFIXED", "User:bob", "*", "READ", "ALLOW"] in _rows(browser, "acls")
    _shot(browser, tmp_path, "console-acls.png")
    browser.get(writable.url + "/console/users")
    assert ["dave", "SCRAM-SHA-256 (4096 iterations)"] in _rows(browser, "users")
    _shot(browser, tmp_path, "console-users.png")
    _create(writable, "payments-b", 1)
    producers = {}
    for tid in ("settled", "pending"):
        producer = Producer({"bootstrap.servers": writable.bootstrap, "transactional.id": tid})
        producer.init_transactions(30)
        producer.begin_transaction()
        producer.produce("payments-b", b"in " + tid.encode())
        producer.flush(30)
        producers[tid] = producer
    producers["settled"].commit_transaction(30)
    try:
        browser.get(writable.url + "/console/transactions")
        rows = {r[0]: r for r in _rows(browser, "transactions")}
        order = [r[0] for r in _rows(browser, "transactions")]
        assert order.index("pending") < order.index("settled")  # open ones first
        assert rows["pending"][1] == "Ongoing" and rows["pending"][6] == "payments-b[0]"
        assert rows["settled"][1] == "CompleteCommit" and rows["pending"][5].endswith("UTC")
        _shot(browser, tmp_path, "console-transactions.png")
    finally:
        producers["pending"].abort_transaction(30)
    wait_for(browser, lambda d: {r[0]: r[1] for r in _rows(d, "transactions")}["pending"] == "CompleteAbort")
    browser.get(writable.url + "/console/broker")
    assert text_of(browser, "broker-id") == "1"
    configs = {r[0]: r for r in _rows(browser, "broker-configs")}
    assert (
        configs["group.initial.rebalance.delay.ms"][1] == "0"
        and "set" in configs["group.initial.rebalance.delay.ms"][2]
    )
    assert "static_broker" in configs["group.initial.rebalance.delay.ms"][2]
    assert configs["num.partitions"][2] == "default"
    _shot(browser, tmp_path, "console-broker.png")
    browser.get(writable.url + "/console/features")
    features = {r[0]: r for r in _rows(browser, "features")}
    assert features["transaction.version"][1] == "2" and re.fullmatch(r"\d+", features["metadata.version"][1])
    _shot(browser, tmp_path, "console-features.png")
    assert severe_logs(browser) == []
