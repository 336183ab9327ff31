"""One machine shape: the model, the pure core, the engine and the portal's checks
all read sides, concentration and sizes from ``MachineShape``."""

from __future__ import annotations

import numpy as np
import pytest

from allocation.hyperx import HyperX, MachineShape, ShapeError
from allocation.layout import LayoutError, validate_shape
from allocation.models import Machine
from simulation.engine import SimConfig

SHAPES = [((8, 8), 8), ((4, 4, 4), 2), ((5,), 3), ((2, 3, 4), 1)]


@pytest.mark.parametrize(("sides", "c"), SHAPES)
def test_every_holder_of_a_shape_reads_the_same_one(sides, c):
    shape = MachineShape(sides, c)
    machine = Machine(name="m", sides=list(sides), concentration=c)
    topology = HyperX(sides, c)
    config = SimConfig(sides=sides, concentration=c, ranks=2)
    assert machine.geometry == shape == config.geometry == validate_shape(list(sides), c)
    assert isinstance(topology, MachineShape)
    assert (machine.switch_count, machine.node_count) == (shape.switch_count, shape.node_count)
    assert (topology.n_switches, topology.n_endpoints) == (shape.switch_count, shape.node_count)
    assert (config.switches, config.endpoints) == (shape.switch_count, shape.node_count)
    assert machine.shape == shape.label
    assert shape.node_count == int(np.prod(sides)) * c


def test_coordinate_maps_agree_with_the_endpoint_convention():
    shape = MachineShape((3, 4), 2)
    nodes = np.arange(shape.node_count)
    coords = shape.node_coords()
    assert coords.shape == (24, 2)
    assert (shape.switch_index(coords) == shape.switch_of(nodes)).all()
    assert (shape.switch_of(nodes) * 2 + shape.local_of(nodes) == nodes).all()


@pytest.mark.parametrize(("sides", "c", "field"), [
    ((), 1, "sides"), ((0, 2), 1, "sides"), ((2.5,), 1, "sides"), ("88", 1, "sides"),
    ((4,), 0, "concentration"), ((4,), True, "concentration"), ((4,), "2", "concentration"),
])
def test_a_bad_shape_names_its_field_everywhere(sides, c, field):
    with pytest.raises(ShapeError) as info:
        MachineShape(sides, c)
    assert info.value.field == field and str(info.value).startswith(f"{field}: ")
    with pytest.raises(LayoutError) as info:
        validate_shape(list(sides) if isinstance(sides, tuple) else sides, c)
    assert info.value.field == field


def test_each_holder_keeps_its_own_bound():
    big = MachineShape((16, 16, 16), 17)  # 69,632 nodes
    assert validate_shape([16, 16, 16], 17) == big  # the portal stores up to 1,048,576
    with pytest.raises(ValueError, match=r"^sides: the machine would have 69632 nodes"):
        SimConfig(sides=(16, 16, 16), concentration=17)  # the engine simulates 65,536
    with pytest.raises(LayoutError, match="at most 8 dimensions"):
        validate_shape([2] * 9, 1)
    with pytest.raises(LayoutError, match="between 1 and 4096"):
        validate_shape([4097], 1)
