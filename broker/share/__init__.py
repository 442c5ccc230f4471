"""KIP-932 share partitions: per (group, topic, partition) record states, acquisition locks, share
sessions, ShareFetch/ShareAcknowledge's work, and their persistence in `__share_group_state`."""
