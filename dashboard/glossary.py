"""The words and symbols the pages use, defined once: the glossary page lists them and
``{% term %}`` (``dashboard.templatetags.hxterms``) puts the short definition in a
tooltip linking to the entry."""

from __future__ import annotations

from dataclasses import dataclass

from health import services as health


@dataclass(frozen=True)
class Term:
    key: str  # anchor on the glossary page: #term-<key>
    name: str
    short: str  # one sentence: the tooltip
    more: str = ""  # the rest of the glossary entry
    section: str = ""


_PROBABILITY = f"{health.DRAIN_PROBABILITY:g}"
_MIN_RUNS = health.DRAIN_MIN_RUNS

TERMS: tuple[Term, ...] = (
    # Partitions and their properties
    Term("pb_exact", "PB exact",
         "Partition bandwidth: the uniform load (phits/cycle per node) the partition's own "
         "links can carry, solved exactly; higher is better.",
         "Every node of the partition sends to every other one at the same rate; the traffic "
         "is split over all minimal paths and every link carries at most one phit per cycle. "
         "PB exact is the largest rate that fits, from a linear programme. A node cannot "
         "inject more than 1 phit/cycle, so values above 1 no longer speed up uniform "
         "traffic. Shown as “—” when it was not computed (large partitions).",
         "Partitions"),
    Term("pb_bound", "PB bound",
         "An upper bound on the partition bandwidth, 2L / (|P| · D_P) from the hull links, "
         "the node count and the average distance.",
         "Equal to PB exact for most partitions (not for rectangles, whose few crossing "
         "links limit it). “∞” means all nodes are on one switch: the job uses no link.",
         "Partitions"),
    Term("hull_links", "Hull links",
         "The switch-to-switch links lying on some minimal path between two switches of the "
         "partition: the links its own traffic uses.",
         "More hull links spread the job's traffic over more links (see PB bound).",
         "Partitions"),
    Term("avg_distance", "Average distance",
         "Mean number of switch-to-switch hops between two nodes of the partition (0 on one "
         "switch).", "", "Partitions"),
    Term("switch_locality", "Switch locality",
         "The job has every node of each switch it uses, so no other job's traffic enters "
         "those switches.",
         "A partition without switch locality shares switches with other jobs; the analytic "
         "ranking charges it for the share of the machine other jobs hold.",
         "Partitions"),
    Term("convexity", "Convexity",
         "Whether minimal paths between the partition's switches stay inside it: convex, "
         "weakly convex or non-convex.",
         "Convex: the switch set is a product of coordinate sets (a “rectangle” in every "
         "dimension), so every minimal path between two of its switches stays inside. "
         "Weakly convex: at least one minimal path stays inside for every pair. Non-convex: "
         "some pair's minimal paths all leave it, through other jobs' switches.",
         "Partitions"),
    # Times and the spare-node model
    Term("t_cmpt", "t_cmpt",
         "Compute time (s): the part of the job's run time that one abnormal (slow) node "
         "slows down.",
         "Give it with t_comm, or give a wall time and the compute fraction "
         "(t_cmpt = fraction × wall time).", "Jobs and the spare-node model"),
    Term("t_comm", "t_comm",
         "Communication time (s): the part of the run time an abnormal node does not slow "
         "down; it depends on the allocation policy.",
         "Measured under the site's default policy; other policies scale it by their "
         "relative communication time (“Comm. vs default”).",
         "Jobs and the spare-node model"),
    Term("t_bench", "t_bench",
         "Benchmark time (s): mean time of the short benchmark on a normal node, the cost of "
         "testing the nodes before the job.",
         "Estimated from the machine's benchmark history together with p_abn and alpha_abn.",
         "Jobs and the spare-node model"),
    Term("n_spare", "N_spare",
         "Spare nodes: extra nodes allocated beyond the N_node the job needs; after the "
         "benchmark the N_spare slowest are dropped.",
         "The recommendation picks the N_spare with the lowest expected cost E[C].",
         "Jobs and the spare-node model"),
    Term("p_abn", "p_abn",
         "Probability that a node is abnormal (slow) in a job, estimated from benchmark "
         "histories.",
         "Shown with its 95 % confidence interval. Upload benchmark results and run an "
         "estimation on a machine's health page to get one.",
         "Jobs and the spare-node model"),
    Term("alpha_abn", "alpha_abn",
         "Slowdown of an abnormal node: its run time divided by a normal node's (more "
         "than 1).",
         "“—” when the estimate saw no abnormal run, so no slowdown could be measured.",
         "Jobs and the spare-node model"),
    Term("expected_cost", "E[C]",
         "Expected cost in node-seconds: nodes allocated × expected time, benchmark and "
         "spare nodes included.",
         "Node-seconds are also shown in node-hours (3,600 node-s = 1 node-h).",
         "Jobs and the spare-node model"),
    Term("as_is", "As-is",
         "The same job without the spare-node method: no benchmark and no spare nodes.", "",
         "Jobs and the spare-node model"),
    # Node health
    Term("posterior_p", "Posterior p_i",
         "A node's own abnormality rate p_i: the posterior mean from its benchmark history, "
         "with a 95 % credible interval.",
         "The prior is centred on the fleet's rate, so a single slow run does not make a "
         "node look bad; the interval narrows as the node's history grows.",
         "Node health"),
    Term("score", "Score",
         "Suspicion score: the posterior probability that a node is persistently abnormal "
         "rather than slow now and then like any node; a drain candidate has a score of at "
         f"least {_PROBABILITY} after at least {_MIN_RUNS} runs.",
         "It is a probability, not the rate itself (that is Posterior p_i). It weighs the "
         "node's abnormal runs against the fleet's rate of abnormal runs with a prior of "
         f"{health.DRAIN_PRIOR:g} (one node in a hundred persistently abnormal). On the "
         "recommendation page, “analytic score” means the ranking by partition bandwidth and "
         "switch locality used when simulations are unavailable.",
         "Node health"),
    Term("drain_candidate", "Drain candidate",
         f"A node whose suspicion score is at least {_PROBABILITY} after at least "
         f"{_MIN_RUNS} runs: it is probably abnormal again and again, not by chance.",
         "Operators drain it from the health page; the reason quotes the evidence. Nodes "
         "with abnormal runs that are not candidates yet are on the watch list, with how "
         "many more abnormal runs would make them one.",
         "Node health"),
    # Simulations
    Term("makespan", "Makespan",
         "The cycle at which the last application of a simulation finished (its largest "
         "completion time); lower is better.",
         "Empty when some application did not finish within max_cycles.",
         "Simulations"),
    Term("replica", "Replica",
         "One copy of the simulated application on its own partition; escalation runs "
         "1, 2, … replicas side by side.",
         "“Background” is random-permutation traffic from the other nodes (interference and "
         "background scenarios), not an application.",
         "Simulations"),
)

BY_KEY: dict[str, Term] = {t.key: t for t in TERMS}


def sections() -> list[tuple[str, list[Term]]]:
    out: dict[str, list[Term]] = {}
    for term in TERMS:
        out.setdefault(term.section, []).append(term)
    return list(out.items())
