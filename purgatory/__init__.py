"""Clocks, a hierarchical timing wheel, delayed operations and the purgatory that watches them."""

from kafkito.purgatory.clock import Clock, ManualClock, MonotonicClock, SteerableClock
from kafkito.purgatory.operation import DelayedOperation
from kafkito.purgatory.timer import Timer, TimerTask
from kafkito.purgatory.watchers import Purgatory

__all__ = [
    "Clock",
    "DelayedOperation",
    "ManualClock",
    "MonotonicClock",
    "Purgatory",
    "SteerableClock",
    "Timer",
    "TimerTask",
]
