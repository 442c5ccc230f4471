"""Steering a running broker from a test: its clock, injected faults, dropped and ignored clients."""

from kafkito.broker.steering.rules import FaultRule, api_key_of, error_of
from kafkito.broker.steering.steering import Steering

__all__ = ["FaultRule", "Steering", "api_key_of", "error_of"]
