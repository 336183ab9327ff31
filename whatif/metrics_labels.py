"""How the pages name and scale the summary figures: (key, label, unit, scale)."""

ROWS = (
    ("utilisation", "Utilisation", "%", 100.0),
    ("mean_wait_s", "Mean wait", "h", 1 / 3600),
    ("p95_wait_s", "95th-percentile wait", "h", 1 / 3600),
    ("mean_bounded_slowdown", "Mean bounded slowdown", "×", 1.0),
    ("makespan_s", "Makespan", "days", 1 / 86400),
    ("node_hours_useful", "Useful node-hours", "node·h", 1.0),
    ("node_hours_spares", "Node-hours on spares", "node·h", 1.0),
    ("node_hours_lost_slow", "Node-hours lost to slow nodes", "node·h", 1.0),
    ("locality_share", "Jobs with switch locality", "%", 100.0),
)
