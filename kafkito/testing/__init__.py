"""Testing with kafkito: a broker in the test process that a test can steer (its clock, injected
faults, dropped or ignored clients, restarts), and the pytest plugin (`kafkito` fixtures).

    from kafkito.testing import start

    with start(session_timeout_ms=6000) as kafka:
        ...  # clients use kafka.bootstrap_servers
        kafka.advance(45_000)  # the broker acts as if 45 s had passed
"""

from kafkito.testing.faults import Fault
from kafkito.testing.handle import KafkitoHandle, Node, start

__all__ = ["Fault", "KafkitoHandle", "Node", "start"]
