"""Shared helpers of sim/calibrate and sim/run: platform env files, smpirun, bounds."""
import os
import re
import shlex
import subprocess
import sys
import tempfile
import time

SIM = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOT = os.path.dirname(SIM)
PLATFORMS = os.path.join(SIM, "platforms")
sys.path.insert(0, PLATFORMS)
from gen import SMPI_BASE_CFG as BASE_CFG  # noqa: E402


def load_env(name):
    """The companion env file of a platform as a dict (paths made absolute)."""
    env = {}
    with open(os.path.join(PLATFORMS, name + ".env")) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            k, v = line.split("=", 1)
            env[k] = v.strip('"').strip("'")
    for k in ("CONVOY_SIM_PLATFORM", "CONVOY_SIM_HOSTFILE"):
        env[k] = os.path.join(PLATFORMS, env[k])
    return env


def hostfile(env, nodes, ppn=None):
    """A hostfile of the first `nodes` nodes (all hosts of each node), ppn ranks per node
    (default: every core). Returns (path, np)."""
    lines = [l.strip() for l in open(env["CONVOY_SIM_HOSTFILE"]) if l.strip()]
    per_node = int(env["CONVOY_SIM_HOSTS_PER_NODE"])
    lines = lines[: nodes * per_node]
    if ppn is not None:
        if ppn % per_node:
            raise ValueError("ppn %d not divisible by %d hosts per node" % (ppn, per_node))
        lines = ["%s:%d" % (l.split(":")[0], ppn // per_node) for l in lines]
    np_ = sum(int(l.split(":")[1]) for l in lines)
    fd, path = tempfile.mkstemp(prefix="convoy-sim-", suffix=".hosts")
    with os.fdopen(fd, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path, np_


def smpirun(env, np_, hosts, prog, args, cfg=(), timeout=None, extra_env=None):
    """Runs prog under smpirun; returns (stdout, stderr, wall seconds, max RSS KiB, rc)."""
    cmd = ["/usr/bin/time", "-f", "@@ %e %M", "smpirun", "-np", str(np_),
           "-platform", env["CONVOY_SIM_PLATFORM"], "-hostfile", hosts]
    cmd += shlex.split(BASE_CFG) + shlex.split(env.get("CONVOY_SMPIRUN_CFG", ""))
    cmd += list(cfg) + ["--log=root.thres:critical", prog] + list(args)
    e = dict(os.environ)
    e.update({k: v for k, v in env.items() if k.startswith("CONVOY_")})
    if extra_env:
        e.update(extra_env)
    t0 = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, env=e)
        out, err, rc = p.stdout, p.stderr, p.returncode
    except subprocess.TimeoutExpired as x:
        out = x.stdout.decode() if isinstance(x.stdout, bytes) else (x.stdout or "")
        err, rc = "timeout after %ss" % timeout, -1
    wall, rss = time.time() - t0, 0
    m = re.search(r"@@ ([0-9.]+) ([0-9]+)", err)
    if m:
        wall, rss = float(m.group(1)), int(m.group(2))
    return out, err, wall, rss, rc


def lower_bound_us(env, coll, count, nodes, ppn, tsize=4, counts=None):
    """The platform's lower bound of a collective in microseconds: the bytes that must
    enter or leave the busiest node divided by the node's lane bandwidth (lanes x lane
    bandwidth), plus ceil(log2 N) network latencies (the rounds any tree over N nodes
    needs for the last node to depend on the first). The sum is used, as papers/004 sec. 5
    adds alpha and beta terms; it is optimistic for both ends. Intra-node work is left out
    (it can overlap); this is a bound, not a model. count follows convoy-bench (and
    papers/004): the whole vector for bcast/reduce/allreduce/scan/exscan, the block per
    process for gather/scatter/allgather/alltoall/reduce_scatter_block; counts = the
    per-process counts of allgatherv."""
    import math
    bw = int(env["CONVOY_SIM_LANES"]) * float(env["CONVOY_SIM_LANE_BW"])
    lat = float(env["CONVOY_SIM_LAT"])
    p = nodes * ppn
    rounds = math.ceil(math.log2(nodes)) if nodes > 1 else 0
    m = count * tsize
    if nodes <= 1:
        return 0.0
    if coll in ("bcast", "scatter", "gather"):
        # the root's node sends (receives) everything the other nodes need
        block = m if coll == "bcast" else m * ppn * (nodes - 1)
        vol = block
    elif coll == "allgather":
        vol = m * ppn * (nodes - 1)  # each node receives all other nodes' blocks
    elif coll == "allgatherv":
        if counts is None:
            return float("nan")
        per_node = [sum(counts[i * ppn:(i + 1) * ppn]) for i in range(nodes)]
        total = sum(per_node)
        vol = max(total - x for x in per_node) * tsize
    elif coll == "alltoall":
        vol = m * ppn * ppn * (nodes - 1)  # each node's processes send to all others
    elif coll in ("reduce", "allreduce", "reduce_scatter_block"):
        # each node must send its partial result's share: allreduce m*(N-1)/N out and in
        # (reduce-scatter + allgather over nodes); reduce and reduce_scatter_block half
        whole = m * (p if coll == "reduce_scatter_block" else 1)
        vol = whole * (nodes - 1) / nodes * (2 if coll == "allreduce" else 1)
    elif coll in ("scan", "exscan"):
        vol = m  # a node's prefix must come in
    elif coll == "barrier":
        vol = 0
    else:
        return float("nan")
    return (vol / bw + rounds * lat) * 1e6
