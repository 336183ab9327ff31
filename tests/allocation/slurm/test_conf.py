"""slurm.conf, topology.conf and slurmdbd.conf from a machine's shape (pure, no daemons)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from allocation.slurm import Accounting, ClusterSpec, Partition, SpecError
from allocation.slurm.conf import slurm_conf, slurmdbd_conf, topology_conf

ROOT = Path(__file__).resolve().parents[3]
NAMES = tuple(f"hx{i:03d}" for i in range(1, 17))


def spec(**overrides) -> ClusterSpec:
    values = {"machine": "hx", "sides": (2, 2), "concentration": 4, "hostnames": NAMES,
              "state_dir": "/srv/hx", "base_port": 20000}
    return ClusterSpec(**{**values, **overrides})


def settings(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines()
                if line and not line.startswith(("#", "NodeName=", "PartitionName=")))


def test_the_daemons_and_scheduling_settings():
    conf = settings(slurm_conf(spec()))
    assert conf["ClusterName"] == "hx"
    assert (conf["SlurmctldHost"], conf["SlurmctldPort"]) == ("localhost", "20000")
    assert conf["AuthInfo"] == "socket=/srv/hx/munge/munge.socket"
    assert conf["StateSaveLocation"] == "/srv/hx/state"
    assert conf["SlurmdSpoolDir"] == "/srv/hx/spool/%n"
    assert (conf["SelectType"], conf["TopologyPlugin"]) == ("select/linear", "topology/tree")
    assert (conf["ProctrackType"], conf["TaskPlugin"]) == ("proctrack/linuxproc", "task/none")
    assert (conf["ReturnToService"], conf["MinJobAge"]) == ("2", "3600")
    assert conf["SchedulerType"] == "sched/backfill"
    assert conf["AccountingStorageType"] == "accounting_storage/none"


def test_one_line_per_switch_with_a_port_range_and_its_features():
    text = slurm_conf(spec())
    nodes = [line for line in text.splitlines() if line.startswith("NodeName=")]
    assert len(nodes) == 4
    assert nodes[3] == ("NodeName=hx[013-016] Port=[20022-20025] NodeHostname=localhost "
                        "NodeAddr=127.0.0.1 CPUs=1 RealMemory=1000 Features=hx_row1,hx_col1")
    assert text.splitlines()[-1] == ("PartitionName=batch Nodes=ALL Default=YES "
                                     "MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE")


def test_hostnames_that_do_not_fold_in_order_get_a_line_each():
    names = ("b", "a", *NAMES[2:])
    nodes = [line for line in slurm_conf(spec(hostnames=names)).splitlines()
             if line.startswith("NodeName=")]
    assert nodes[0].startswith("NodeName=b Port=20010 ")
    assert nodes[1].startswith("NodeName=a Port=20011 ")
    assert nodes[4].startswith("NodeName=hx[005-008] Port=[20014-20017] ")


def test_topology_is_the_portal_tree_and_can_be_off():
    default = topology_conf(spec())
    assert spec().topology == "tree-nested"
    assert default.splitlines()[1] == "SwitchName=hx_s0_0 Nodes=hx[001-004]"
    assert "SwitchName=hx_diag0 Switches=hx_s0_0,hx_s1_1" in default
    for kind in ("tree", "tree-diagonal", "tree-nested"):
        assert settings(slurm_conf(spec(topology=kind)))["TopologyPlugin"] == "topology/tree"
    assert "SwitchName=hx_row1 Switches=hx_s1_[0-1]" in topology_conf(spec(topology="tree"))
    off = spec(topology="none")
    assert settings(slurm_conf(off))["TopologyPlugin"] == "topology/none"


def test_accounting_adds_slurmdbd_on_the_next_port():
    with_db = spec(accounting=Accounting(), cluster_name="hx_demo")
    conf = settings(slurm_conf(with_db))
    assert conf["AccountingStorageType"] == "accounting_storage/slurmdbd"
    assert conf["AccountingStoragePort"] == "20001"
    assert conf["AccountingStoragePass"] == "/srv/hx/munge/munge.socket"
    dbd = settings(slurmdbd_conf(with_db))
    assert (dbd["DbdPort"], dbd["StorageLoc"], dbd["StorageHost"]) == (
        "20001", "slurm_acct_hx_demo", "localhost")
    assert "StoragePass" not in dbd
    with pytest.raises(SpecError, match="needs accounting"):
        slurmdbd_conf(spec())


def test_scheduler_parameters_are_written_when_given():
    assert "SchedulerParameters" not in settings(slurm_conf(spec()))
    given = spec(scheduler_parameters="sched_interval=2,bf_interval=2")
    assert settings(slurm_conf(given))["SchedulerParameters"] == "sched_interval=2,bf_interval=2"
    with pytest.raises(SpecError, match="scheduler_parameters"):
        spec(scheduler_parameters="a=b\nSlurmUser=evil")


def test_cons_tres_is_a_choice():
    conf = settings(slurm_conf(spec(select="cons_tres")))
    assert (conf["SelectType"], conf["SelectTypeParameters"]) == ("select/cons_tres", "CR_CPU")


@pytest.mark.parametrize("overrides, message", [
    ({"base_port": 32760}, r"ports 32760-32785 must lie in 1024-32767 .* base port <= 32742"),
    ({"base_port": 80}, "must lie in 1024-32767"),
    ({"hostnames": NAMES[:-1]}, "need 16 hostnames"),
    ({"hostnames": (*NAMES[:-1], "bad name")}, "'bad name' is not a valid Slurm NodeName"),
    ({"hostnames": (*NAMES[:-1], "hx001")}, "hostnames must be unique"),
    ({"state_dir": "relative/dir"}, "absolute path"),
    ({"state_dir": "/" + "d" * 100}, "too long for a Unix socket path"),
    ({"topology": "block"}, "topology must be one of tree-nested, tree-diagonal, tree, none"),
    ({"select": "cons_res"}, "select must be one of linear, cons_tres"),
    ({"partitions": ()}, "need at least one partition"),
    ({"partitions": (Partition("a b"),)}, "partition name 'a b' is not valid"),
    ({"partitions": (Partition("a"), Partition("a"))}, "partition names must be unique"),
    ({"partitions": (Partition("a", default=True), Partition("b", default=True))},
     "at most one partition can be the default"),
    ({"partitions": (Partition("a", nodes="hx[015-017]"),)}, "partition a: nodes must be ALL or"),
    ({"partitions": (Partition("a", nodes="@all"),)}, "partition a: nodes must be ALL or"),
    ({"cli_filter_plugins": ("lua;rm",)}, "plugin 'lua;rm' is not a plugin name"),
    ({"live_nodes": 17}, r"live_nodes must lie in 0-16 \(0: every node\)"),
    ({"live_nodes": -1}, "live_nodes must lie in 0-16"),
])
def test_impossible_clusters_are_refused_with_one_line(overrides, message):
    with pytest.raises(SpecError, match=message):
        spec(**overrides)


def test_partitions_and_plugins_are_options():
    """One default ``batch`` partition unless told; the cli_filter and job_submit
    plugins (``cli_filter.lua`` / ``job_submit.lua`` next to slurm.conf) by name."""
    two = spec(partitions=(Partition("batch", default=True), Partition("debug", "hx[001-004]")),
               cli_filter_plugins=("lua",), job_submit_plugins=("lua", "logging"))
    lines = slurm_conf(two).splitlines()
    assert lines[-2:] == [
        "PartitionName=batch Nodes=ALL Default=YES MaxTime=INFINITE State=UP "
        "OverSubscribe=EXCLUSIVE",
        "PartitionName=debug Nodes=hx[001-004] MaxTime=INFINITE State=UP OverSubscribe=EXCLUSIVE"]
    conf = settings(slurm_conf(two))
    assert conf["CliFilterPlugins"] == "cli_filter/lua"
    assert conf["JobSubmitPlugins"] == "job_submit/lua,job_submit/logging"
    assert "CliFilterPlugins" not in settings(slurm_conf(spec()))


def test_the_spec_round_trips_through_json():
    original = spec(accounting=Accounting(db_user="slurm"), min_job_age=60,
                    partitions=(Partition("a", default=True), Partition("b", "hx001")),
                    cli_filter_plugins=("lua",))
    again = ClusterSpec.from_json(original.to_json())
    assert again == original
    assert again.partitions[1] == Partition("b", "hx001")
    older = json.loads(spec().to_json())
    for key in ("partitions", "cli_filter_plugins", "job_submit_plugins"):
        del older[key]  # a cluster.json written before these options
    assert ClusterSpec.from_json(json.dumps(older)) == spec()
    assert again.accounting.db_name == "slurm_acct_hx"
    assert again.paths.slurm_conf == "/srv/hx/etc/slurm.conf"


def test_ports_of_4096_nodes_fit_below_the_ephemeral_range():
    big = ClusterSpec(machine="big", sides=(16, 16), concentration=16,
                      hostnames=tuple(f"n{i:04d}" for i in range(4096)), state_dir="/x",
                      base_port=17000)
    assert big.ports()["slurmd"] == (17010, 21105)
    assert len(big.daemon_ports()) == 4097


def test_live_nodes_start_a_slurmd_for_the_first_nodes_only_but_configure_all():
    """A machine whose slurmd do not all fit in memory: every node in slurm.conf
    and topology.conf, a slurmd (and its port) for the first ``live_nodes``."""
    some = spec(live_nodes=5)
    assert some.live_hostnames == NAMES[:5] and some.partial
    assert some.daemon_ports() == [20000, *range(20010, 20015)]
    assert slurm_conf(some) == slurm_conf(spec())
    assert topology_conf(some) == topology_conf(spec())
    assert spec().live_hostnames == NAMES and not spec().partial
    assert spec(live_nodes=16).live_hostnames == NAMES and not spec(live_nodes=16).partial
    assert ClusterSpec.from_json(some.to_json()) == some


def test_the_slurm_package_works_without_django_settings():
    """Scripts and benchmarks use it outside the portal (no settings configured)."""
    code = ("import allocation.slurm as s, django.conf; "
            "spec = s.ClusterSpec(machine='x', sides=(1,), concentration=1, hostnames=('x1',), "
            "state_dir='/x'); s.conf.slurm_conf(spec); "
            "assert not django.conf.settings.configured")
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
