"""PURE: a machine's usage over time from its job history, and a seeded synthetic
history for the demo machine. Stdlib only: no Django, no clock, no I/O.

- :mod:`allocation.usage.series` bins busy and waiting nodes from job intervals;
- :mod:`allocation.usage.workload` makes a week of plausible finished jobs.
"""

from allocation.usage.series import RANGES, JobSpan, UsageSeries, range_bins, usage_series
from allocation.usage.workload import SyntheticJob, synthetic_history

__all__ = ["RANGES", "JobSpan", "SyntheticJob", "UsageSeries", "range_bins",
           "synthetic_history", "usage_series"]
