"""The write path of allocation (machines, nodes, jobs) and its read queries."""
