"""Click events -> per-page counts in one-minute event-time windows -> a results topic -> a check."""
