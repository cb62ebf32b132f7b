#!/usr/bin/env python3
"""Writes every simulated platform of sim/platforms/ from the one table below.

    sim/platforms/gen.py            # rewrites <name>.xml, <name>.hosts, <name>.env

For each platform it writes a SimGrid 3.32 platform (DTD 4.1), a hostfile ("host:slots",
consecutive ranks on a host) and a companion env file (shell syntax) for the run wrapper.
The figures and their sources are in PLATFORMS; README.md in this folder repeats them.
Figures marked "calibrated" were chosen by sim/calibrate against papers/004's native
columns (see sim/README.md); the others are vendor figures or the papers' descriptions.

Two forms of a multi-lane node (notes/simgrid.md, "Modelling lanes"):
  aggregated  one SimGrid host per node (hosts <prefix><i>): a SPLITDUPLEX node link of
              lanes x lane bandwidth, a FATPIPE backbone at one lane's bandwidth as a
              per-flow cap, a FATPIPE loopback for intra-node messages.
  socket      one SimGrid host per socket, named <prefix><i>-s<k> (node i, socket k): each
              socket has its own SPLITDUPLEX lane link to its rail's switch (rail k), the
              two sockets of a node are joined by an inter-socket link, each socket has a
              loopback. Two senders on one socket share one lane; a message from socket 0
              of node a to socket 1 of node b travels on rail 0 and crosses b's inter-socket
              link. The node of a host is the name up to "-s" (Convoy's node hook).
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))

# name: nodes, sockets per node, cores per socket, lanes per node, lane bandwidth (B/s),
# network latency per hop (s; a message between nodes crosses 2 hops + the backbone),
# loopback bandwidth/latency (intra-socket messages), inter-socket bandwidth/latency
# (socket form), memory copy rate per process (B/s), reduction rate per process (B/s of
# operand), SMPI selector of the paper's MPI, forms to write; sw_o, sw_bw: the software
# cost of one message on the sending and on the receiving process (smpi/os, smpi/ois,
# smpi/or: sw_o seconds + bytes / sw_bw), the MPI library's per-message overhead and its
# copies that the links alone do not show.
PLATFORMS = {
    "hydra": dict(
        sw_o=5e-07, sw_bw=8e+09,
        nodes=36, sockets=2, cores=16, lanes=2, lane_bw=12.5e9, lat=0.6e-6, bb_lat=0.0,
        lo_bw=6e9, lo_lat=0.25e-6, xs_bw=20e9, xs_lat=0.1e-6,
        copy_bw=10e9, reduce_bw=5e9, selector="ompi", forms=("aggregated", "socket"),
        source={
            "nodes, sockets, cores": "papers/004 Table 1 (Hydra: 36 x 2 x 16, Xeon Gold 6130)",
            "lanes, lane_bw": "papers/004 sec. 2: one OmniPath lane per socket; Intel OmniPath 100 Gbit/s = 12.5 GB/s per lane (vendor)",
            "lat, lo_bw, lo_lat, sw_o, sw_bw": "calibrated: see sim/README.md, table hydra",
            "xs_bw, xs_lat": "Skylake UPI, 2 links x 10.4 GT/s ~ 20 GB/s one way (vendor)",
            "copy_bw, reduce_bw": "one Skylake core: memcpy ~10 GB/s, int sum ~5 GB/s of operand (estimate, not measured)",
            "selector": "papers/004 sec. 4: Open MPI 4.0.1 in the main text (mpich 3.3, Intel MPI 2018 in appendices B, C)",
        }),
    "vsc3": dict(
        sw_o=7e-07, sw_bw=4e+09,
        nodes=100, sockets=2, cores=8, lanes=2, lane_bw=4e9, lat=0.7e-6, bb_lat=0.0,
        lo_bw=4e9, lo_lat=0.3e-6, xs_bw=16e9, xs_lat=0.15e-6,
        copy_bw=6e9, reduce_bw=3e9, selector="impi", forms=("aggregated",),
        source={
            "nodes, sockets, cores": "papers/004 Table 1 and sec. 4 (VSC-3: 16 per node, 100 of 2020 nodes used, 2 x 8 Xeon E5-2650v2)",
            "lanes, lane_bw": "papers/004 Table 1: dual-rail Intel QDR-80; QDR 4x = 32 Gbit/s data = 4 GB/s per rail (vendor)",
            "lat, lo_bw, lo_lat, sw_o, sw_bw": "calibrated: see sim/README.md, table vsc3",
            "xs_bw, xs_lat": "Ivy Bridge QPI 8 GT/s ~ 16 GB/s (vendor)",
            "copy_bw, reduce_bw": "one Ivy Bridge core: memcpy ~6 GB/s, int sum ~3 GB/s (estimate)",
            "selector": "papers/004 Table 1: Intel MPI 2018",
        }),
    "jupiter": dict(
        sw_o=1e-06, sw_bw=2e+09,
        nodes=36, sockets=2, cores=8, lanes=1, lane_bw=4e9, lat=0.8e-6, bb_lat=0.0,
        lo_bw=3e9, lo_lat=0.4e-6, xs_bw=12e9, xs_lat=0.2e-6,
        copy_bw=4e9, reduce_bw=2e9, selector="mvapich2", forms=("aggregated",),
        source={
            "nodes, sockets, cores": "papers/004 appendix D (Jupiter: 36 x 2 x 8 Opteron 6134; the tables use 35 nodes)",
            "lanes, lane_bw": "papers/004 appendix D: single-lane Mellanox MT4036 QDR; 4 GB/s data rate (vendor)",
            "lat, lo_bw, lo_lat, sw_o, sw_bw": "calibrated: see sim/README.md, table jupiter",
            "xs_bw, xs_lat": "HyperTransport 3 ~12 GB/s (vendor)",
            "copy_bw, reduce_bw": "one Opteron 6134 core: memcpy ~4 GB/s, int sum ~2 GB/s (estimate)",
            "selector": "papers/004 appendix D: mvapich2 2.3.1",
        }),
    "beskow": dict(
        sw_o=5e-07, sw_bw=6e+09,
        nodes=32, sockets=2, cores=16, lanes=1, lane_bw=10e9, lat=0.65e-6, bb_lat=0.0,
        lo_bw=6e9, lo_lat=0.25e-6, xs_bw=19e9, xs_lat=0.1e-6,
        copy_bw=8e9, reduce_bw=4e9, selector="impi", forms=("aggregated",),
        source={
            "nodes, sockets, cores": "papers/000 Evaluation (Beskow, 32 processes per node, up to 32 nodes); Cray XC40, 2 x 16 Xeon E5-2698v3 (vendor)",
            "lanes, lane_bw": "Cray Aries: one NIC per node, ~10 GB/s injection (vendor)",
            "lat": "Aries MPI latency ~1.3 us (vendor), not calibrated (no native table in papers/000)",
            "lo_bw, lo_lat": "as Hydra's calibrated loopback (same generation of memory system)",
            "copy_bw, reduce_bw": "one Haswell core: memcpy ~8 GB/s, int sum ~4 GB/s (estimate)",
            "selector": "papers/000: compared with Intel MPI's Allgatherv algorithms 1-4",
        }),
    "salomon": dict(
        sw_o=6e-07, sw_bw=5e+09,
        nodes=64, sockets=2, cores=12, lanes=1, lane_bw=6.8e9, lat=0.55e-6, bb_lat=0.0,
        lo_bw=6e9, lo_lat=0.25e-6, xs_bw=19e9, xs_lat=0.1e-6,
        copy_bw=8e9, reduce_bw=4e9, selector="impi", forms=("aggregated",),
        source={
            "nodes, sockets, cores": "papers/001 Evaluation (Salomon, 192-1536 cores = 8-64 nodes of 2 x 12 Haswell E5-2680v3)",
            "lanes, lane_bw": "papers/001: InfiniBand FDR, 56 Gbit/s signalling, 54.5 Gbit/s data = 6.8 GB/s (vendor)",
            "lat": "FDR MPI latency ~1.1 us (vendor), not calibrated (papers/001 gives figures only)",
            "lo_bw, lo_lat": "as Hydra's calibrated loopback",
            "copy_bw, reduce_bw": "one Haswell core (estimate)",
            "selector": "papers/001: Intel MPI 5.1.2, I_MPI_ADJUST_ALLREDUCE 1-11",
        }),
    "fdr96": dict(
        sw_o=6e-07, sw_bw=5e+09,
        nodes=96, sockets=2, cores=12, lanes=1, lane_bw=6.8e9, lat=0.55e-6, bb_lat=0.0,
        lo_bw=6e9, lo_lat=0.25e-6, xs_bw=16e9, xs_lat=0.15e-6,
        copy_bw=6e9, reduce_bw=3e9, selector="impi", forms=("aggregated",),
        source={
            "nodes, sockets, cores": "papers/003 sec. V, Cluster 1 (96 x 2 x 12 Ivy Bridge E5-2695 v2)",
            "lanes, lane_bw": "papers/003: InfiniBand ConnectX FDR, fat tree; 6.8 GB/s data (vendor)",
            "lat": "FDR MPI latency ~1.1 us (vendor); papers/003 Fig. 3: n-way barrier ~5 us on 96 nodes",
            "lo_bw, lo_lat": "as VSC-3's calibrated loopback (same processor generation)",
            "copy_bw, reduce_bw": "one Ivy Bridge core (estimate)",
            "selector": "papers/003: Intel MPI 4.1.3",
        }),
    "qdr36": dict(
        sw_o=8e-07, sw_bw=3e+09,
        nodes=36, sockets=2, cores=6, lanes=1, lane_bw=4e9, lat=0.8e-6, bb_lat=0.0,
        lo_bw=4e9, lo_lat=0.3e-6, xs_bw=12.8e9, xs_lat=0.2e-6,
        copy_bw=5e9, reduce_bw=2.5e9, selector="mvapich2", forms=("aggregated",),
        source={
            "nodes, sockets, cores": "papers/003 sec. V, Cluster 2 (36 x 2 x 6 Westmere X5670)",
            "lanes, lane_bw": "papers/003: InfiniBand ConnectX QDR, fat tree; 4 GB/s data (vendor)",
            "lat": "as Jupiter's calibrated QDR latency; papers/003 Fig. 2: barrier ~8 us on 32 nodes",
            "lo_bw, lo_lat": "as VSC-3's calibrated loopback",
            "copy_bw, reduce_bw": "one Westmere core (estimate)",
            "selector": "papers/003: MVAPICH 2.2.0 and Open MPI 1.6.5 (use ompi as the second set)",
        }),
}
# Beyond the papers (issue 9's scale runs, >= 4096 processes): Hydra's nodes, 128 of them
# on one full-bisection switch (an assumption: the real Hydra has 36).
# cap="gamma": the one-lane-per-flow cap as SimGrid's TCP-gamma bound on each flow instead
# of a FATPIPE backbone link. Same rates (each flow's bound is min(node link, gamma / (2 x
# route latency)) = one lane), but no constraint shared by every flow between nodes: with the
# backbone, SimGrid's max-min solver re-solves all inter-node flows whenever one starts or
# ends (lmm::MaxMin::do_solve: 28 % of the CPU at 1024 processes, growing with the node count).
PLATFORMS["hydra128"] = dict(PLATFORMS["hydra"], nodes=128, forms=("aggregated",), cap="gamma",
                             source=dict(PLATFORMS["hydra"]["source"], nodes=(
                                 "128 nodes of Hydra's kind (papers/004 Table 1 has 36): "
                                 "scale runs beyond the papers"),
                                 cap=("one lane per flow as TCP-gamma (no backbone link): "
                                      "same rates, cheaper to simulate; see gen.py")))

# SMPI options every platform uses (notes/simgrid.md): no piecewise factors (the platform's
# own latency and bandwidth are what was calibrated), reproducible time, cheap MPI_Test.
def smpirun_cfg(p):
    """The platform's own smpirun options (CONVOY_SMPIRUN_CFG of the env file; the run
    wrapper tools/convoy-smpirun adds the options every simulation needs, SMPI_BASE_CFG)."""
    ovh = "0:%g:%g" % (p["sw_o"], 1.0 / p["sw_bw"])
    cfg = "--cfg=smpi/os:%s --cfg=smpi/ois:%s --cfg=smpi/or:%s" % (ovh, ovh, ovh)
    if p.get("cap") == "gamma":
        cfg += " --cfg=network/TCP-gamma:%g" % tcp_gamma(p)
    return cfg


def tcp_gamma(p):
    """TCP-gamma (bytes) that bounds a flow between two nodes at one lane: SimGrid bounds
    each flow at gamma / (2 x its route latency); that route is the two host links."""
    g = p["lane_bw"] * 2 * (2 * p["lat"])
    # Only where it is exactly the backbone's cap: no backbone latency to add, and the bound
    # of an intra-node flow (loopback latency) must not bind below the loopback bandwidth.
    assert p["bb_lat"] == 0 and p["lanes"] > 1
    assert g / (2 * p["lo_lat"]) >= p["lo_bw"]
    return g


# What tools/convoy-smpirun always passes (notes/simgrid.md): no piecewise factors (the
# platform's own latency and bandwidth are what was calibrated), reproducible time, cheap
# MPI_Test. sim/calibrate passes the same when it runs smpirun itself.
SMPI_BASE_CFG = ("--cfg=smpi/bw-factor:0:1 --cfg=smpi/lat-factor:0:1 "
                 "--cfg=smpi/simulate-computation:no --cfg=smpi/test:1e-8 "
                 "--cfg=smpi/grow-injected-times:no --cfg=smpi/privatization:1")


HEADER = """<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<!-- Generated by sim/platforms/gen.py: edit the table there, not this file.
{comment}
-->
<platform version="4.1">
"""


def gbps(x):
    return "%gGBps" % (x / 1e9)


def us(x):
    return "%gus" % (x * 1e6)


def comment(name, p, form):
    lines = ["%s (%s form): %d nodes x %d sockets x %d cores, %d lane(s) of %s per node"
             % (name, form, p["nodes"], p["sockets"], p["cores"], p["lanes"], gbps(p["lane_bw"]))]
    lines += ["  %s: %s" % (k, v) for k, v in p["source"].items()]
    return "\n".join(lines).replace("--", "-")


def aggregated(name, p):
    ppn = p["sockets"] * p["cores"]
    node_bw = p["lanes"] * p["lane_bw"]
    # A single-lane node needs no per-flow cap: the backbone is then non-blocking.
    bb_bw = p["lane_bw"] if p["lanes"] > 1 else p["nodes"] * node_bw
    xml = HEADER.format(comment=comment(name, p, "aggregated"))
    # With cap="gamma" no backbone: the per-flow cap is TCP-gamma (smpirun_cfg).
    bb = "" if p.get("cap") == "gamma" else (
        '\n             bb_bw="%s" bb_lat="%s" bb_sharing_policy="FATPIPE"'
        % (gbps(bb_bw), us(p["bb_lat"])))
    xml += """  <zone id="world" routing="Full">
    <cluster id="{n}" prefix="{n}-" radical="0-{last}" suffix="" speed="1Gf" core="{ppn}"
             bw="{bw}" lat="{lat}" sharing_policy="SPLITDUPLEX"{bb}
             loopback_bw="{lobw}" loopback_lat="{lolat}"/>
  </zone>
</platform>
""".format(n=name, last=p["nodes"] - 1, ppn=ppn, bw=gbps(node_bw), lat=us(p["lat"]), bb=bb,
           lobw=gbps(p["lo_bw"]), lolat=us(p["lo_lat"]))
    hosts = ["%s-%d:%d" % (name, i, ppn) for i in range(p["nodes"])]
    return xml, hosts


def socket(name, p):
    hosts = ["%s-%d-s%d" % (name, i, k) for i in range(p["nodes"]) for k in range(p["sockets"])]
    xml = HEADER.format(comment=comment(name, p, "socket"))
    xml += '  <zone id="world" routing="Full">\n'
    for h in hosts:
        xml += '    <host id="%s" speed="1Gf" core="%d"/>\n' % (h, p["cores"])
    for h in hosts:
        xml += ('    <link id="%s-lane" bandwidth="%s" latency="%s" sharing_policy="SPLITDUPLEX"/>\n'
                % (h, gbps(p["lane_bw"]), us(p["lat"])))
        xml += ('    <link id="%s-lo" bandwidth="%s" latency="%s" sharing_policy="FATPIPE"/>\n'
                % (h, gbps(p["lo_bw"]), us(p["lo_lat"])))
    for i in range(p["nodes"]):
        xml += ('    <link id="%s-%d-xs" bandwidth="%s" latency="%s" sharing_policy="SPLITDUPLEX"/>\n'
                % (name, i, gbps(p["xs_bw"]), us(p["xs_lat"])))
    for h in hosts:
        xml += '    <route src="%s" dst="%s"><link_ctn id="%s-lo"/></route>\n' % (h, h, h)

    def lane(h, d):
        return '<link_ctn id="%s-lane" direction="%s"/>' % (h, d)

    def xs(i, d):
        return '<link_ctn id="%s-%d-xs" direction="%s"/>' % (name, i, d)

    for a in range(len(hosts)):
        for b in range(a + 1, len(hosts)):
            na, ka = divmod(a, p["sockets"])
            nb, kb = divmod(b, p["sockets"])
            if na == nb:
                links = [xs(na, "UP")]
                back = [xs(na, "DOWN")]
            elif ka == kb:
                links = [lane(hosts[a], "UP"), lane(hosts[b], "DOWN")]
                back = [lane(hosts[b], "UP"), lane(hosts[a], "DOWN")]
            else:  # rail of the sender, then across the receiver's sockets
                via_b = hosts[nb * p["sockets"] + ka]
                via_a = hosts[na * p["sockets"] + kb]
                links = [lane(hosts[a], "UP"), lane(via_b, "DOWN"), xs(nb, "UP")]
                back = [lane(hosts[b], "UP"), lane(via_a, "DOWN"), xs(na, "UP")]
            xml += ('    <route src="%s" dst="%s" symmetrical="NO">%s</route>\n'
                    % (hosts[a], hosts[b], "".join(links)))
            xml += ('    <route src="%s" dst="%s" symmetrical="NO">%s</route>\n'
                    % (hosts[b], hosts[a], "".join(back)))
    xml += "  </zone>\n</platform>\n"
    return xml, ["%s:%d" % (h, p["cores"]) for h in hosts]


def env(name, p, form, base):
    ppn = p["sockets"] * p["cores"]
    hosts_per_node = p["sockets"] if form == "socket" else 1
    lines = [
        "# Generated by sim/platforms/gen.py: companion of %s.xml, sourced (set -a) by" % base,
        "# tools/convoy-smpirun; the CONVOY_SIM_* sizes are read by sim/run and sim/calibrate.",
        "CONVOY_SIM_PLATFORM=%s.xml" % base,
        "CONVOY_SIM_HOSTFILE=%s.hosts" % base,
        "CONVOY_SIM_NODES=%d" % p["nodes"],
        "CONVOY_SIM_PPN=%d" % ppn,
        "CONVOY_SIM_HOSTS_PER_NODE=%d" % hosts_per_node,
        "# Node of a host (Convoy's node hook): socket form <node>-s<k> -> <node>.",
        "CONVOY_NODE_OF_HOST=%s" % ("'^(.*)-s[0-9]+$'" if form == "socket" else ""),
        "CONVOY_SIM_LANES=%d" % p["lanes"],
        "CONVOY_SIM_LANE_BW=%g" % p["lane_bw"],
        "CONVOY_SIM_LAT=%g" % (2 * p["lat"] + p["bb_lat"]),
        "CONVOY_SIM_COPY_BW=%g" % p["copy_bw"],
        "CONVOY_SIM_REDUCE_BW=%g" % p["reduce_bw"],
        "CONVOY_SIM_SELECTOR=%s" % p["selector"],
        "# Per-message software cost (sw_o s + bytes / sw_bw on sender and receiver).",
        'CONVOY_SMPIRUN_CFG="%s"' % smpirun_cfg(p),
    ]
    return "\n".join(lines) + "\n"


def main():
    for name, p in PLATFORMS.items():
        for form in p["forms"]:
            base = name if form == "aggregated" else name + "-socket"
            xml, hosts = (aggregated if form == "aggregated" else socket)(name, p)
            for ext, text in ((".xml", xml), (".hosts", "\n".join(hosts) + "\n"),
                              (".env", env(name, p, form, base))):
                with open(os.path.join(HERE, base + ext), "w") as f:
                    f.write(text)
            print(base)


if __name__ == "__main__":
    main()
