"""Pure HyperX allocation core: the machine shape, topology, the seven policies (static and
online), partition properties and exact partition bandwidth.

No Django, no I/O: stdlib, numpy, scipy and numba only.
"""

from .bandwidth import exact_partition_bandwidth
from .online import AllocationError
from .policies import (
    BASELINE_POLICY,
    CONTIGUOUS_POLICY,
    ONLINE_POLICIES,
    OWN_POLICIES,
    PLACEMENT_VERSION,
    POLICIES,
    REGISTRY,
    allocate,
    fits_formula,
    static_partition,
    static_partitions,
)
from .properties import PartitionProperties, partition_properties
from .shape import MachineShape, ShapeError
from .topology import HyperX

__all__ = [
    "BASELINE_POLICY",
    "CONTIGUOUS_POLICY",
    "ONLINE_POLICIES",
    "OWN_POLICIES",
    "PLACEMENT_VERSION",
    "POLICIES",
    "REGISTRY",
    "AllocationError",
    "HyperX",
    "MachineShape",
    "PartitionProperties",
    "ShapeError",
    "allocate",
    "exact_partition_bandwidth",
    "fits_formula",
    "partition_properties",
    "static_partition",
    "static_partitions",
]
