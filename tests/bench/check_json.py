#!/usr/bin/env python3
"""Checks the schema of convoy-bench's JSON (--json) against its CSV of the same run.

    check_json.py FILE.json FILE.csv

The JSON must parse (json.load), hold meta / results / guidelines / summary with the
documented fields and types, one result per CSV row with the same values, and a verdict
per library and count of every guideline whose both sides were measured.
"""
import csv
import json
import sys


def fail(msg):
    print("check_json: " + msg, file=sys.stderr)
    sys.exit(1)


def need(obj, fields, where):
    for name, types in fields.items():
        if name not in obj:
            fail("%s lacks '%s'" % (where, name))
        if not isinstance(obj[name], types):
            fail("%s.%s is %r, want %s" % (where, name, obj[name], types))


def main():
    path, csv_path = sys.argv[1], sys.argv[2]
    with open(path) as f:
        doc = json.load(f)
    need(doc, {"meta": dict, "results": list, "guidelines": list, "summary": dict}, "top")
    num = (int, float)
    need(doc["meta"], {"tool": str, "mpi_library": str, "mpi_library_full": str,
                       "mpi_standard": str, "processes": int, "nodes": int, "ppn": int,
                       "layout": str, "oversubscribed": bool, "hosts": int,
                       "host_cores": int, "date": str, "command": str, "options": dict},
         "meta")
    need(doc["meta"]["options"], {"type": str, "op": str, "sync": str, "reps": int,
                                  "time_cap_s": num, "collectives": list,
                                  "distributions": list}, "meta.options")
    meta = doc["meta"]
    if meta["processes"] < 1 or meta["nodes"] < 1 or meta["ppn"] < 1:
        fail("meta: bad process counts")
    opt_num = (int, float, type(None))
    for i, r in enumerate(doc["results"]):
        need(r, {"kind": str, "coll": str, "algo": str, "dist": str, "count": int,
                 "bytes": int, "np": int, "nodes": int, "ppn": int, "median_us": opt_num,
                 "min_us": opt_num, "max_us": opt_num, "ci_lo_us": opt_num,
                 "ci_hi_us": opt_num, "reps": int, "reps_total": int, "valid": bool,
                 "stop": str, "type": str, "op": str, "inplace": bool, "sync": str},
             "results[%d]" % i)
        if r["kind"] not in ("coll", "guideline", "lane"):
            fail("results[%d]: kind %r" % (i, r["kind"]))
        if r["reps"] > r["reps_total"]:
            fail("results[%d]: more valid than total repetitions" % i)
        if r["reps"] > 0 and not (r["min_us"] <= r["median_us"] <= r["max_us"]):
            fail("results[%d]: min <= median <= max does not hold" % i)
        if r["np"] != meta["processes"]:
            fail("results[%d]: np differs from meta" % i)
    with open(csv_path, newline="") as f:
        rows = list(csv.DictReader(f))
    if len(rows) != len(doc["results"]):
        fail("%d CSV rows but %d JSON results" % (len(rows), len(doc["results"])))
    for i, (c, j) in enumerate(zip(rows, doc["results"])):
        for k in ("coll", "algo", "dist", "kind", "sync"):
            if c[k] != j[k]:
                fail("row %d: CSV %s=%r, JSON %r" % (i, k, c[k], j[k]))
        if int(c["count"]) != j["count"] or int(c["reps"]) != j["reps"]:
            fail("row %d: count or reps differ between CSV and JSON" % i)
    measured = {(r["coll"], r["algo"], r["count"]) for r in doc["results"]
                if r["kind"] == "guideline" and r["valid"] and r["reps"] > 0}
    verdicts = {(g["guideline"], g["library"], g["count"]) for g in doc["guidelines"]}
    for g in doc["guidelines"]:
        need(g, {"guideline": str, "statement": str, "library": str, "count": int,
                 "lhs_us": num, "mockup_us": num, "factor": num, "violated": bool,
                 "significant": bool}, "guidelines[]")
        if abs(g["factor"] - g["lhs_us"] / g["mockup_us"]) > 1e-3 * g["factor"] + 1e-6:
            fail("guideline %s: factor is not lhs/mock-up" % g["guideline"])
        if g["violated"] != (g["factor"] > 1 + meta["options"]["guideline_tol"]):
            fail("guideline %s: violated does not follow the factor" % g["guideline"])
    for (name, algo, count) in measured:
        if algo in ("native", "convoy") and (name, algo + "-mockup", count) in measured:
            if (name, algo, count) not in verdicts:
                fail("no verdict for %s %s count %d" % (name, algo, count))
    need(doc["summary"], {"seconds": num, "cells": int, "failures": int,
                          "window_valid": int, "window_total": int}, "summary")
    if doc["summary"]["window_valid"] > doc["summary"]["window_total"]:
        fail("summary: more valid than total window repetitions")
    print("check_json: %s: %d results, %d guideline verdicts, schema ok"
          % (path, len(doc["results"]), len(doc["guidelines"])))


if __name__ == "__main__":
    main()
