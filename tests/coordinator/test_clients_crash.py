"""A consumer process killed with SIGKILL is evicted after its session timeout; the others take over."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap

from tests.coordinator.clients import KafkaPythonMember, create_topic, group_state, wait_for_members
from tests.support.brokers import ThreadBroker

PARTITIONS = 4

VICTIM = textwrap.dedent(
    """
    import sys
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(
        bootstrap_servers=sys.argv[1], group_id="crash-group", client_id="victim",
        enable_auto_commit=False, session_timeout_ms=6000, heartbeat_interval_ms=500,
    )
    consumer.subscribe(["crash"])
    consumer.topics()  # metadata before the first poll: see tests/support/kafka_python.py
    while True:
        consumer.poll(timeout_ms=100)
    """
)


def test_sigkilled_consumer_is_evicted_after_session_timeout(broker: ThreadBroker) -> None:
    create_topic(broker.bootstrap, "crash", PARTITIONS)
    victim = subprocess.Popen([sys.executable, "-c", VICTIM, broker.bootstrap])
    survivor = KafkaPythonMember(broker.bootstrap, "crash", "crash-group", "survivor")
    try:

        def shared() -> bool:
            state, _, ids = group_state(broker, "crash-group")
            return state == "Stable" and len(ids) == 2 and len(survivor.assignment()) == PARTITIONS // 2

        wait_for_members([survivor], shared, "the victim and the survivor sharing the topic")
        _, generation, ids = group_state(broker, "crash-group")
        (victim_id,) = [m for m in ids if m.startswith("victim-")]

        victim.send_signal(signal.SIGKILL)
        victim.wait(timeout=30)

        def taken_over() -> bool:
            state, _, members = group_state(broker, "crash-group")
            return (
                state == "Stable"
                and victim_id not in members
                and survivor.assignment() == set(range(PARTITIONS))
            )

        wait_for_members([survivor], taken_over, "the survivor owning every partition")
        _state, new_generation, members = group_state(broker, "crash-group")
        assert len(members) == 1 and new_generation > generation
    finally:
        if victim.poll() is None:
            victim.kill()
        survivor.close()
