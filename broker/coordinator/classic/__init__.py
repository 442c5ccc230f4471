"""Classic (pre-KIP-848) consumer groups: the group type as data, and the paths that drive it.

`state` (the state machine), `group` and `member` (data), `snapshot` (the group record), `join`,
`sync`, `heartbeat` (liveness), `leave`, `rebalance` (the phases) and `delayed` (their operations).
"""
