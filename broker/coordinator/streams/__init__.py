"""KIP-1071 streams groups: the coordinator's fourth group type (see docs/group-coordinator.md)."""
