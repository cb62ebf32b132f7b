#!/usr/bin/env python3
"""Extracts the native MPI_* tables of papers/004 (Traff & Hunold) into CSV rows.

Each table of the plain-text paper is a heading line "| MPI_<Coll> | ..." followed by rows
"| n | N | p | count | avg | min |" (n processes per node, N nodes, p = nN, count in MPI_INT,
times in microseconds). The system is known from (n, N): 32 x 36 Hydra, 16 x 100 VSC-3,
16 x 35 Jupiter (the paper ran on 35 of its 36 nodes); the MPI library from the section the table is in (main text section 4 and
appendix A: Open MPI 4.0.1 on Hydra, Intel MPI 2018 on VSC-3; appendix B mpich 3.3;
appendix C Intel MPI 2018; appendix D Jupiter, mvapich2 2.3.1).

    sim/calib/paper_tables.py [PAPER] > native.csv
"""
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT = sorted(glob.glob("/work/shared/papers/004_*.txt"))


def section_library(line, system):
    """The MPI library of a table from the appendix it stands in (by the appendix title)."""
    if system == "vsc3":
        return "impi"
    if system == "jupiter":
        return "mvapich2"
    return {"A": "ompi", "B": "mpich", "C": "impi", "D": "mvapich2", None: "ompi"}[line]


def parse(path):
    rows = []
    heading, appendix = None, None
    for lineno, raw in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
        line = raw.strip()
        m = re.match(r"^Appendix ([A-D]) ", line)
        if m:
            appendix = m.group(1)
            continue
        m = re.match(r"^\| ([A-Za-z_]+(?: \([^)]*\))?) \|", line)
        if m and not re.match(r"^\| (avg|n|Name)", line):
            heading = m.group(1)
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) == 6 and all(re.match(r"^[0-9.]+$", c) for c in cells) and heading:
            n, nodes, p, count = (int(float(c)) for c in cells[:4])
            system = {(32, 36): "hydra", (16, 100): "vsc3", (16, 35): "jupiter", (16, 36): "jupiter"}.get((n, nodes))
            if system is None or n * nodes != p:
                continue
            if not heading.startswith("MPI_"):
                continue
            rows.append(dict(system=system, library=section_library(appendix, system),
                             coll=heading[4:].lower(), count=count, avg_us=float(cells[4]),
                             min_us=float(cells[5]), line=lineno))
    return rows


# The mock-ups' table headings (papers/004 sec. 4) -> Convoy's algorithm names. The first
# table of a heading is the one the text describes (e.g. Allgather's zero-copy Listing 5);
# later ones (irregular node collectives, consecutive buffers) are variants of the mock-up.
MOCKUPS = {"Lane": "lane", "Hier": "hier"}
COLLS = {"Bcast": "bcast", "Allgather": "allgather", "Allreduce": "allreduce",
         "ReduceScatterBlock": "reduce_scatter_block", "Reduce": "reduce", "Scatter": "scatter",
         "Gather": "gather", "Alltoall": "alltoall", "Scan": "scan", "Exscan": "exscan"}


def variants(path):
    """Every table row of papers/004 with its variant: {(n, N, coll, variant, count):
    (avg_us, min_us, line)}, variant 'lane', 'hier' or 'native', coll in MPI's lower-case
    names, the first table of a heading only (main text and appendix A: Open MPI 4.0.1 on
    Hydra, Intel MPI 2018 on VSC-3; the mpich, Intel and mvapich2 appendices are left out)."""
    out, heading, appendix, done, cur = {}, None, None, set(), None
    for lineno, raw in enumerate(open(path, encoding="utf-8", errors="replace"), 1):
        line = raw.strip()
        m = re.match(r"^Appendix ([A-D]) ", line)
        if m:
            appendix = m.group(1)
            continue
        m = re.match(r"^\| ([A-Za-z_]+(?: \([^)]*\))?) \|", line)
        if m and not re.match(r"^\| (avg|n|Name)", line):
            heading, cur = m.group(1), None
            h = heading.split()[0]
            if " " in heading:
                continue
            if h.startswith("MPI_"):
                coll, var = h[4:].lower(), "native"
            else:
                mm = re.match(r"^([A-Za-z]+?)(Lane|Hier)$", h)
                if not mm or mm.group(1) not in COLLS:
                    continue
                coll, var = COLLS[mm.group(1)], MOCKUPS[mm.group(2)]
            cur = (coll, var)
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cur and appendix in (None, "A") and len(cells) == 6 and \
                all(re.match(r"^[0-9.]+$", c) for c in cells):
            n, nodes, p, count = (int(float(c)) for c in cells[:4])
            key = (n, nodes, cur[0], cur[1], count)
            if key in done:
                continue
            done.add(key)
            out[key] = (float(cells[4]), float(cells[5]), lineno)
    return out


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else DEFAULT[0]
    rows = parse(path)
    seen = set()
    print("system,library,coll,count,avg_us,min_us,paper_line")
    for r in rows:
        key = (r["system"], r["library"], r["coll"], r["count"])
        if key in seen:  # the same cell printed twice (main text and appendix): keep the first
            continue
        seen.add(key)
        print("%(system)s,%(library)s,%(coll)s,%(count)d,%(avg_us).2f,%(min_us).2f,%(line)d" % r)


if __name__ == "__main__":
    main()
