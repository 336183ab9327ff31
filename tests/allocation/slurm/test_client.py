"""SlurmClient without Slurm: the argument lists it runs and the one-line errors it raises."""

from __future__ import annotations

import socket
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from allocation.slurm import SlurmClient, SlurmError
from allocation.slurm.client import Completed, controller_address

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "slurm"


class FakeSlurm:
    """Records each call; answers with the next queued (returncode, stdout, stderr)."""

    def __init__(self, *answers) -> None:
        self.answers = list(answers)
        self.calls: list[tuple[list[str], float, dict]] = []

    def __call__(self, argv, timeout, env):
        self.calls.append((list(argv), timeout, dict(env)))
        answer = self.answers.pop(0) if self.answers else (0, "", "")
        if isinstance(answer, BaseException):
            raise answer
        return Completed(*answer)

    @property
    def argv(self) -> list[str]:
        return self.calls[-1][0][1:]


@pytest.fixture
def conf(tmp_path):
    """A slurm.conf whose controller port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    path = tmp_path / "slurm.conf"
    path.write_text(f"ClusterName=t\nSlurmctldHost=localhost(127.0.0.1)  # ctl\n"
                    f"SlurmctldPort={port}\n")
    return str(path), port


def client_for(conf, *answers) -> tuple[SlurmClient, FakeSlurm]:
    fake = FakeSlurm(*answers)
    return SlurmClient(conf[0], timeout=7, bin_dir="/opt/slurm/bin", runner=fake), fake


def test_reads_run_the_json_commands_with_the_conf_and_a_clean_environment(conf, monkeypatch):
    monkeypatch.setenv("SBATCH_PARTITION", "debug")
    monkeypatch.setenv("SQUEUE_FORMAT", "%i")
    monkeypatch.setenv("SLURM_JOB_ID", "99")
    squeue = (FIXTURES / "squeue-22.05.json").read_text()
    client, fake = client_for(conf, (0, squeue, ""))
    assert len(client.jobs()) == 8
    argv, timeout, env = fake.calls[0]
    assert argv == ["/opt/slurm/bin/squeue", "--json"] and timeout == 7
    assert env["SLURM_CONF"] == conf[0] and env["LC_ALL"] == "C"
    assert not {"SBATCH_PARTITION", "SQUEUE_FORMAT", "SLURM_JOB_ID"} & set(env)


def test_submit_quotes_the_command_for_the_job_shell_and_pins_nodes(conf):
    client, fake = client_for(conf, (0, "42\n", ""))
    job_id = client.submit(["echo", "a; rm -rf / $(id)"], nodes=["hx003", "hx001", "hx002"],
                           name="x", time_limit=5, switches=1)
    assert job_id == 42
    assert fake.argv == ["--parsable", "--job-name=x", "--output=/dev/null", "--chdir=/tmp",
                         "--nodelist=hx[001-003]", "--nodes=3", "--time=5", "--switches=1",
                         "--wrap=echo 'a; rm -rf / $(id)'"]


def test_node_actions_pass_one_argument_per_setting(conf):
    client, fake = client_for(conf)
    client.drain(["hx001", "hx002"], "bad ECC State=RESUME")
    assert fake.argv == ["update", "NodeName=hx[001-002]", "State=DRAIN",
                         "Reason=bad ECC State=RESUME"]
    client.resume(["hx001"])
    assert fake.argv == ["update", "NodeName=hx001", "State=RESUME"]
    client.shrink(7, ["hx001"])
    assert fake.argv == ["update", "JobId=7", "NodeList=hx001"]
    client.cancel(7)
    assert fake.argv == ["7"]


@pytest.mark.parametrize("call, message", [
    (lambda c: c.drain(["hx001"], "two\nlines"), "reason: at most 200 printable characters"),
    (lambda c: c.drain(["hx001"], "  "), "reason must not be empty"),
    (lambda c: c.drain([], "x"), "no node named"),
    (lambda c: c.drain(["hx@1"], "x"), "node names: "),
    (lambda c: c.submit([]), "command must not be empty"),
    (lambda c: c.history(datetime(2026, 1, 1)), "timezone-aware"),
])
def test_bad_arguments_never_reach_slurm(conf, call, message):
    client, fake = client_for(conf)
    with pytest.raises(SlurmError, match=message) as caught:
        call(client)
    assert caught.value.kind == "refused" and fake.calls == []


def test_unreachable_from_stderr_names_the_controller_in_one_line(conf):
    stderr = ("sbatch: error: Batch job submission failed: Unable to contact slurm controller "
              "(connect failure)\nsbatch: error: more\n")
    client, _ = client_for(conf, (1, "", stderr))
    with pytest.raises(SlurmError) as caught:
        client.submit(["true"])
    assert str(caught.value) == f"slurmctld unreachable at 127.0.0.1:{conf[1]} (sbatch)"
    assert caught.value.kind == "unreachable" and caught.value.command == "sbatch"


def test_a_json_error_document_is_unreachable_when_the_port_is_closed(conf):
    down = (FIXTURES / "squeue-unreachable-22.05.json").read_text()
    client, _ = client_for(conf, (0, down, ""))
    with pytest.raises(SlurmError, match=r"^slurmctld unreachable at 127\.0\.0\.1:\d+ \(squeue\)$"):
        client.jobs()


def test_a_json_error_document_with_a_live_controller_is_unreadable(tmp_path):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        path = tmp_path / "slurm.conf"
        path.write_text(f"SlurmctldHost=localhost\nSlurmctldPort={server.getsockname()[1]}\n")
        down = (FIXTURES / "sinfo-unreachable-22.05.json").read_text()
        client, _ = client_for((str(path), 0), (0, down, ""))
        with pytest.raises(SlurmError) as caught:
            client.nodes()
    assert (caught.value.kind, str(caught.value)) == (
        "unreadable", "sinfo --json reported: Unspecified error")


def test_refusals_keep_slurms_first_line_without_prefixes(conf):
    client, _ = client_for(conf, (1, "", "slurm_update error: Invalid node name specified\n"))
    with pytest.raises(SlurmError) as caught:
        client.drain(["hx999"], "x")
    assert (caught.value.kind, str(caught.value)) == (
        "refused", "scontrol: Invalid node name specified")


@pytest.mark.parametrize("error, kind, message", [
    (subprocess.TimeoutExpired("squeue", 7), "timeout", "squeue did not answer within 7 s"),
    (FileNotFoundError("squeue"), "missing", "squeue not found (install the slurm-client"),
    (PermissionError("squeue"), "missing", "squeue could not run (PermissionError)"),
])
def test_a_command_that_hangs_or_is_missing(conf, error, kind, message):
    client, _ = client_for(conf, error)
    with pytest.raises(SlurmError, match=message.replace("(", r"\(").replace(")", r"\)")) as caught:
        client.jobs()
    assert caught.value.kind == kind


def test_resume_of_a_node_that_is_not_drained_and_cancel_of_an_ended_job_are_no_errors(conf):
    client, _ = client_for(conf, (1, "", "slurm_update error: Invalid node state specified\n"),
                           (1, "", "scancel: error: Kill job error on job id 5: Job/step "
                                   "already completing or completed\n"))
    client.resume(["hx001"])
    client.cancel(5)


def test_history_asks_sacct_for_epoch_times_in_utc(conf):
    text = (FIXTURES / "sacct-22.05.txt").read_text()
    client, fake = client_for(conf, (0, text, ""))
    jobs = client.history(datetime(2026, 12, 1, 11, 0, tzinfo=UTC),
                          datetime(2026, 12, 1, 12, 0, tzinfo=UTC))
    assert len(jobs) == 7
    argv, _, env = fake.calls[0]
    assert argv[-4:] == ["--starttime", "2026-12-01T11:00:00", "--endtime", "2026-12-01T12:00:00"]
    assert (env["SLURM_TIME_FORMAT"], env["TZ"]) == ("%s", "UTC")


def test_controller_address_reads_the_conf(tmp_path):
    path = tmp_path / "slurm.conf"
    path.write_text("# SlurmctldHost=commented\nslurmctldhost=ctl1\nSlurmctldPort=6817-6820\n")
    assert controller_address(str(path)) == ("ctl1", 6817)
    assert controller_address(str(tmp_path / "missing.conf")) is None


def test_ping(conf):
    client, _ = client_for(conf, (0, "Slurmctld(primary) at vm is UP\n", ""),
                           (1, "Slurmctld(primary) at vm is DOWN\n", ""))
    client.ping()
    with pytest.raises(SlurmError, match="slurmctld unreachable"):
        client.ping()
