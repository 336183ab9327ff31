"""API serializers of machines, nodes and jobs."""
