"""The offline and online allocation commands print the contract's JSON keys."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from allocation.models import Job
from allocation.services import machines

KEYS = {"endpoints", "switches", "avg_distance", "max_distance", "convexity", "switch_locality",
        "hull_links", "pb_bound", "pb_exact"}


def run(*args) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize(("policy", "pb"), [("row", 1.0), ("diagonal", 2.0),
                                             ("full_spread", 8.0), ("rectangular", 0.25),
                                             ("l_shape", 1.0)])
def test_hx_partition_json(policy, pb):
    out = json.loads(run("hx_partition", "--sides", "8,8", "--concentration", "8",
                         "--policy", policy, "--index", "0", "--json"))
    assert KEYS <= set(out)
    assert len(out["endpoints"]) == 64
    assert out["pb_exact"] == pytest.approx(pb)


def test_hx_partition_blocks_and_seed():
    out = json.loads(run("hx_partition", "--sides", "8,8", "--concentration", "8", "--policy",
                         "random_endpoint", "--index", "1", "--blocks", "2", "--seed", "7",
                         "--json"))
    assert out["size"] == 128 and out["seed"] == 7


@pytest.mark.parametrize("args", [
    ["--sides", "8,4", "--concentration", "8", "--policy", "row"],
    ["--sides", "8,8", "--concentration", "8", "--policy", "zigzag"],
    ["--sides", "8,8", "--concentration", "8", "--policy", "row", "--index", "8"],
    ["--sides", "a,b", "--concentration", "8", "--policy", "row"],
])
def test_hx_partition_rejects_what_the_formulas_do_not_define(args):
    with pytest.raises(CommandError):
        run("hx_partition", *args)


@pytest.mark.django_db
def test_hx_allocate_dry_run_and_real():
    machines.create_machine(name="hx", sides=[8, 8], concentration=8)
    dry = json.loads(run("hx_allocate", "--machine", "hx", "--policy", "diagonal", "--size",
                         "64", "--dry-run", "--json"))
    assert dry["dry_run"] is True and dry["properties"]["pb_exact"] == pytest.approx(2.0)
    assert not Job.objects.exists()
    real = json.loads(run("hx_allocate", "--machine", "hx", "--policy", "diagonal", "--size",
                          "64", "--json"))
    assert real["job"] == Job.objects.get().pk and real["hostlist"] == dry["hostlist"]
    again = json.loads(run("hx_allocate", "--machine", "hx", "--policy", "diagonal",
                           "--size", "64", "--dry-run", "--json"))
    assert again["hostlist"] != dry["hostlist"], "the held nodes are not offered again"
    with pytest.raises(CommandError, match="need 500 nodes, 448 available"):
        run("hx_allocate", "--machine", "hx", "--policy", "row", "--size", "500", "--dry-run")
    with pytest.raises(CommandError, match=r"^size: the machine has only 512 nodes"):
        run("hx_allocate", "--machine", "hx", "--policy", "row", "--size", "600", "--dry-run")
