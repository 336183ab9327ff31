"""Prometheus metrics: ``/metrics`` read from the database on each scrape."""
