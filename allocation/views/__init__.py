"""Pages of machines, nodes and jobs (thin: services and queries do the work)."""
