"""API views of machines, nodes and jobs."""
