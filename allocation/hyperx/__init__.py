"""Pure HyperX allocation core: topology, the seven policies (static and
online), partition properties and exact partition bandwidth.

No Django, no I/O: stdlib, numpy, scipy, networkx and numba only.
"""

from .bandwidth import exact_partition_bandwidth
from .online import AllocationError, allocate
from .ours import OWN_POLICIES
from .policies import POLICIES, static_partition, static_partitions
from .properties import PartitionProperties, partition_properties
from .topology import HyperX

#: Every policy the online allocator accepts: the study's seven, then our own.
ONLINE_POLICIES: tuple[str, ...] = POLICIES + OWN_POLICIES

__all__ = [
    "ONLINE_POLICIES",
    "OWN_POLICIES",
    "POLICIES",
    "AllocationError",
    "HyperX",
    "PartitionProperties",
    "allocate",
    "exact_partition_bandwidth",
    "partition_properties",
    "static_partition",
    "static_partitions",
]
