"""Clocks, a hierarchical timing wheel, delayed operations and the purgatory that watches them."""

from purgatory.clock import Clock, ManualClock, MonotonicClock
from purgatory.operation import DelayedOperation
from purgatory.timer import Timer, TimerTask
from purgatory.watchers import Purgatory

__all__ = [
    "Clock",
    "DelayedOperation",
    "ManualClock",
    "MonotonicClock",
    "Purgatory",
    "Timer",
    "TimerTask",
]
