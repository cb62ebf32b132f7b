/*
 * convoy-bench's command line: see bench_usage() for the options. Every rank parses the
 * same argv, so all reach the same verdict without talking.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

#include <stdlib.h>
#include <string.h>

#include "parse.h"

static const char *const default_dists = "regular,broadcast,spike,halffull,decreasing,geometric";

void bench_usage(FILE *f)
{
    fprintf(f,
            "usage: convoy-bench [options]\n"
            "What runs:\n"
            "  --coll LIST       collectives (default: every one Convoy implements); all = every\n"
            "                    one in the table (the others run native only); none = only\n"
            "                    guidelines or lane benchmarks. --list shows them\n"
            "  --algo LIST       all | native | auto | algorithm names (default all: every\n"
            "                    registered algorithm of the collective, plus native);\n"
            "                    auto = Convoy's own choice\n"
            "  --overhead        the per-call cost: Convoy's collectives at 1 element, native\n"
            "                    and auto, each cell followed by auto - native in us (run it\n"
            "                    at np 1; options after it override its choices)\n"
            "  --guidelines      check the self-consistent performance guidelines (papers/004\n"
            "                    §3) for the MPI library and for Convoy\n"
            "  --guideline LIST  which (default all; implies --guidelines; --list names them)\n"
            "  --guideline-count LIST  left-hand counts (default 1,1K,64K)\n"
            "  --guideline-tol F a violation: slower than the mock-up by more than F (0.05)\n"
            "  --lanes LIST      lane benchmarks of papers/004 §2: pattern, multi, all\n"
            "  --lane-count LIST elements per node (pattern) or per process (multi);\n"
            "                    default 1K:1M:16\n"
            "  --lane-k LIST     virtual lanes per node to try (default 1..ppn)\n"
            "  --lane-iters N    send-receives per timed lane-pattern repetition (default 10)\n"
            "Data:\n"
            "  --dist LIST       distributions for v-collectives: regular, broadcast, spike,\n"
            "                    halffull, decreasing, geometric, random; all = the first six\n"
            "                    (default all)\n"
            "  --count LIST      counts in elements of --type, K/M/G suffixes, ranges LO:HI[:F]\n"
            "                    in powers of F (default 4), e.g. 1K,16K or 1K:64M\n"
            "                    (default 1K:1M); the base count c of a distribution.\n"
            "                    --count COLL=LIST sets them for one collective only\n"
            "  --type T          int | double | float | long | char (default int)\n"
            "  --op OP           sum | max | min | prod (default sum)\n"
            "  --inplace         use MPI_IN_PLACE (collectives that have it)\n"
            "  --root N|rotate   root of rooted collectives (default rotate: repetition mod p)\n"
            "Timing:\n"
            "  --sync MODE       auto (default) | barrier | window: each repetition starts\n"
            "                    after a barrier, or (window) at an agreed time on clocks\n"
            "                    corrected by offsets measured to rank 0 once (as ReproMPI; a\n"
            "                    repetition a rank reached late is invalid); auto: window for\n"
            "                    rooted collectives, barrier for the others (a SimGrid build's\n"
            "                    default is barrier)\n"
            "  --reps N          at most N valid timed repetitions per variant (default 1000)\n"
            "  --min-reps N      repetitions before the CI stop rule applies (default 10)\n"
            "  --warmup N        untimed rounds first (default 2)\n"
            "  --time-cap S      seconds per cell, all variants together (default 5)\n"
            "  --budget S        seconds for the whole run: per-cell caps shrink to fit\n"
            "  --precision F     stop when the median's 95%% CI is within +-F of it\n"
            "                    (default 0.05)\n"
            "  --seed N          seed of the random distribution (default 1)\n"
            "  --param NAME=VAL  set an algorithm parameter (an environment variable)\n"
            "Output:\n"
            "  --csv FILE        one CSV row per variant per cell\n"
            "  --json FILE       the same rows with the run's metadata and guideline verdicts\n"
            "  --progress S      a progress line on stderr every S seconds when it is not\n"
            "                    a terminal (default 10; 0: none)\n"
            "  --no-check        skip the validation against native\n"
            "  --shared-buffers  (SimGrid build) one SMPI_SHARED_MALLOC copy of each buffer for\n"
            "                    all ranks: memory of large simulations; implies --no-check\n"
            "  --quiet           no table or progress, only errors\n"
            "  --list            list the collectives, algorithms and guidelines, then exit\n"
            "Exit status: 0 all results matched native, 1 a mismatch or failure, 2 bad usage.\n");
}

void bench_opts_free(bench_opts *o)
{
    bench_strv_free(o->colls, o->ncolls);
    bench_strv_free(o->algos, o->nalgos);
    bench_strv_free(o->dists, o->ndists);
    bench_strv_free(o->gl_names, o->ngl_names);
    for (int i = 0; i < BENCH_MAX_COLLS; i++)
        free(o->counts[i]);
    free(o->gl_counts);
    free(o->lane_counts);
    free(o->lane_k);
    memset(o, 0, sizeof *o);
}

static int find_name(const char *const *names, int n, const char *s)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], s) == 0) return i;
    return -1;
}

static int parse_double(const char *s, double *out)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !(v >= 0)) return -1;
    *out = v;
    return 0;
}

/* Replaces "all" in the distribution list by the six of papers/002 §3. */
static int expand_all_dists(bench_opts *o)
{
    char **six, **v;
    int nsix, n = 0;
    if (bench_split(default_dists, &six, &nsix)) return -1;
    v = calloc((size_t)(o->ndists * nsix), sizeof *v);
    if (!v) {
        bench_strv_free(six, nsix);
        return -1;
    }
    for (int i = 0; i < o->ndists; i++) {
        int all = strcmp(o->dists[i], "all") == 0;
        for (int k = 0; k < (all ? nsix : 1); k++) {
            const char *d = all ? six[k] : o->dists[i];
            int dup = 0;
            for (int j = 0; j < n; j++)
                dup |= strcmp(v[j], d) == 0;
            if (!dup && !(v[n++] = strdup(d))) {
                bench_strv_free(v, n);
                bench_strv_free(six, nsix);
                return -1;
            }
        }
    }
    bench_strv_free(six, nsix);
    bench_strv_free(o->dists, o->ndists);
    o->dists = v;
    o->ndists = n;
    return 0;
}

/* The --coll list: names, "all", "none"; default the collectives Convoy implements. */
static int expand_colls(bench_opts *o, const char *colls, char *err, int errlen)
{
    char **in;
    int nin;
    if (bench_split(colls, &in, &nin)) {
        snprintf(err, (size_t)errlen, "empty item in --coll");
        return -1;
    }
    o->colls = calloc((size_t)bench_ncolls, sizeof *o->colls);
    if (!o->colls) {
        bench_strv_free(in, nin);
        snprintf(err, (size_t)errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < nin && !rc; i++) {
        int all = !strcmp(in[i], "all"), dflt = !strcmp(in[i], "default");
        if (!strcmp(in[i], "none")) continue;
        if (!all && !dflt && !bench_coll_find(in[i])) {
            snprintf(err, (size_t)errlen, "unknown collective '%s' (try --list)", in[i]);
            rc = -1;
            break;
        }
        for (int k = 0; k < bench_ncolls; k++) {
            const bench_coll *c = &bench_colls[k];
            int take = all || (dflt && bench_lib_has(&bench_convoy, c->id)) ||
                       (!all && !dflt && !strcmp(c->name, in[i]));
            int dup = 0;
            for (int j = 0; j < o->ncolls; j++)
                dup |= !strcmp(o->colls[j], c->name);
            if (take && !dup && !(o->colls[o->ncolls++] = strdup(c->name))) rc = -1;
        }
    }
    bench_strv_free(in, nin);
    return rc;
}

static int parse_list_counts(const char *name, const char *val, int64_t **v, int *n, char *err,
                             int errlen)
{
    free(*v);
    if (bench_parse_counts(val, v, n)) {
        snprintf(err, (size_t)errlen, "bad %s '%s' (e.g. 1K,16K or 1K:64M or 1K:64M:2)", name, val);
        return -1;
    }
    return 0;
}

int bench_parse_args(int argc, char **argv, bench_opts *o, char *err, int errlen)
{
    const char *colls = "default", *algos = "all", *dists = default_dists;
    const char *counts = "1K:1M";
    const char *coll_counts[BENCH_MAX_COLLS] = {0}; /* --count COLL=LIST */
    memset(o, 0, sizeof *o);
    o->reps = 1000;
    o->warmup = 2;
#ifndef CONVOY_SIMGRID
    o->sync = BS_AUTO;
#endif
    o->min_reps = 10;
    o->time_cap = 5.0;
    o->rel = 0.05;
    o->seed = 1;
    o->check = 1;
    o->root = -1;
    o->inject_rank = -1;
    o->progress_every = 10.0;
    o->gl_tol = 0.05;
    o->lane_iters = 10;
    int k = 0;
    for (int i = 0; i < argc && k < (int)sizeof o->cmdline - 1; i++)
        k += snprintf(o->cmdline + k, sizeof o->cmdline - (size_t)k, "%s%s", i ? " " : "", argv[i]);
    if (parse_list_counts("--guideline-count", "1,1K,64K", &o->gl_counts, &o->ngl_counts, err,
                          errlen) ||
        parse_list_counts("--lane-count", "1K:1M:16", &o->lane_counts, &o->nlane_counts, err,
                          errlen))
        return -1;
    const char *gl = "all";
    for (int i = 1; i < argc; i++) {
        char *a = argv[i], *val = NULL;
        char name[64];
        /* Both "--opt value" and "--opt=value". */
        char *eq = strchr(a, '=');
        if (strncmp(a, "--", 2) == 0 && eq && eq - a < (long)sizeof name) {
            memcpy(name, a, (size_t)(eq - a));
            name[eq - a] = '\0';
            val = eq + 1;
        } else {
            snprintf(name, sizeof name, "%s", a);
        }
        static const char *const flags[] = {"--inplace",    "--no-check",       "--quiet",
                                            "--list",       "--help",           "-h",
                                            "--guidelines", "--shared-buffers", "--overhead"};
        static const char *const valued[] = {"--coll",          "--algo",
                                             "--dist",          "--count",
                                             "--type",          "--op",
                                             "--reps",          "--warmup",
                                             "--min-reps",      "--seed",
                                             "--time-cap",      "--precision",
                                             "--csv",           "--param",
                                             "--inject-error",  "--progress",
                                             "--json",          "--sync",
                                             "--root",          "--budget",
                                             "--guideline",     "--guideline-count",
                                             "--guideline-tol", "--lanes",
                                             "--lane-count",    "--lane-k",
                                             "--lane-iters"};
        int is_flag = find_name(flags, (int)(sizeof flags / sizeof *flags), name) >= 0;
        if (!is_flag && find_name(valued, (int)(sizeof valued / sizeof *valued), name) < 0) {
            snprintf(err, (size_t)errlen, "unknown option '%s' (try --help)", name);
            return -1;
        }
        if (is_flag && val) {
            snprintf(err, (size_t)errlen, "%s takes no value", name);
            return -1;
        }
        if (!is_flag && !val) {
            if (i + 1 >= argc) {
                snprintf(err, (size_t)errlen, "%s needs a value", name);
                return -1;
            }
            val = argv[++i];
        }
        int64_t n;
        if (!strcmp(name, "--help") || !strcmp(name, "-h")) {
            return 1;
        } else if (!strcmp(name, "--inplace")) {
            o->inplace = 1;
        } else if (!strcmp(name, "--no-check")) {
            o->check = 0;
        } else if (!strcmp(name, "--shared-buffers")) {
#ifdef CONVOY_SIMGRID
            bench_shared_buffers = 1;
            o->check = 0; /* every rank's buffers are the same memory */
#else
            snprintf(err, (size_t)errlen, "--shared-buffers needs the SimGrid build (make sim)");
            return -1;
#endif
        } else if (!strcmp(name, "--quiet")) {
            o->quiet = 1;
        } else if (!strcmp(name, "--list")) {
            o->list = 1;
        } else if (!strcmp(name, "--guidelines")) {
            o->guidelines = 1;
        } else if (!strcmp(name, "--overhead")) {
            /* Defaults that later options override: Convoy's collectives at 1 element,
             * native against the default choice. */
            o->overhead = 1;
            colls = "default";
            algos = "native,auto";
            counts = "1";
            dists = "regular";
        } else if (!strcmp(name, "--guideline")) {
            o->guidelines = 1;
            gl = val;
        } else if (!strcmp(name, "--coll")) {
            colls = val;
        } else if (!strcmp(name, "--algo")) {
            algos = val;
        } else if (!strcmp(name, "--dist")) {
            dists = val;
        } else if (!strcmp(name, "--count")) {
            char *ceq = strchr(val, '=');
            if (ceq) {
                /* COLL=LIST: the index of the collective named before '='. */
                int c;
                for (c = 0; c < bench_ncolls; c++)
                    if (strlen(bench_colls[c].name) == (size_t)(ceq - val) &&
                        !strncmp(bench_colls[c].name, val, (size_t)(ceq - val)))
                        break;
                if (c == bench_ncolls) {
                    snprintf(err, (size_t)errlen, "--count %s: unknown collective", val);
                    return -1;
                }
                coll_counts[c] = ceq + 1;
            } else {
                counts = val;
            }
        } else if (!strcmp(name, "--type")) {
            if ((o->type = find_name(bench_type_names, BT_NTYPES, val)) < 0) {
                snprintf(err, (size_t)errlen, "unknown type '%s'", val);
                return -1;
            }
        } else if (!strcmp(name, "--op")) {
            if ((o->op = find_name(bench_op_names, BO_NOPS, val)) < 0) {
                snprintf(err, (size_t)errlen, "unknown op '%s'", val);
                return -1;
            }
        } else if (!strcmp(name, "--sync")) {
            if (!strcmp(val, "barrier")) {
                o->sync = BS_BARRIER;
            } else if (!strcmp(val, "window")) {
                o->sync = BS_WINDOW;
            } else if (!strcmp(val, "auto")) {
                o->sync = BS_AUTO;
            } else {
                snprintf(err, (size_t)errlen, "--sync: auto, barrier or window, not '%s'", val);
                return -1;
            }
        } else if (!strcmp(name, "--root")) {
            if (!strcmp(val, "rotate")) {
                o->root = -1;
            } else if (bench_parse_count(val, &n) == 0 && n < (1 << 30)) {
                o->root = (int)n;
            } else {
                snprintf(err, (size_t)errlen, "--root: a rank or 'rotate', not '%s'", val);
                return -1;
            }
        } else if (!strcmp(name, "--lanes")) {
            char **v;
            int nv;
            if (bench_split(val, &v, &nv)) {
                snprintf(err, (size_t)errlen, "--lanes: pattern, multi or all");
                return -1;
            }
            for (int j = 0; j < nv; j++) {
                int all = !strcmp(v[j], "all");
                if (all || !strcmp(v[j], "pattern")) o->lane_pattern = 1;
                if (all || !strcmp(v[j], "multi")) o->lane_multi = 1;
                if (!all && strcmp(v[j], "pattern") && strcmp(v[j], "multi")) {
                    snprintf(err, (size_t)errlen, "--lanes: pattern, multi or all, not '%s'", v[j]);
                    bench_strv_free(v, nv);
                    return -1;
                }
            }
            bench_strv_free(v, nv);
        } else if (!strcmp(name, "--guideline-count")) {
            if (parse_list_counts(name, val, &o->gl_counts, &o->ngl_counts, err, errlen)) return -1;
        } else if (!strcmp(name, "--lane-count")) {
            if (parse_list_counts(name, val, &o->lane_counts, &o->nlane_counts, err, errlen))
                return -1;
        } else if (!strcmp(name, "--lane-k")) {
            if (parse_list_counts(name, val, &o->lane_k, &o->nlane_k, err, errlen)) return -1;
            for (int j = 0; j < o->nlane_k; j++)
                if (o->lane_k[j] < 1) {
                    snprintf(err, (size_t)errlen, "--lane-k: at least 1 lane");
                    return -1;
                }
        } else if (!strcmp(name, "--reps") || !strcmp(name, "--warmup") ||
                   !strcmp(name, "--min-reps") || !strcmp(name, "--seed") ||
                   !strcmp(name, "--lane-iters")) {
            if (bench_parse_count(val, &n)) {
                snprintf(err, (size_t)errlen, "%s: bad number '%s'", name, val);
                return -1;
            }
            if (!strcmp(name, "--reps")) o->reps = n < 1 ? 1 : n;
            if (!strcmp(name, "--warmup")) o->warmup = n;
            if (!strcmp(name, "--min-reps")) o->min_reps = n;
            if (!strcmp(name, "--seed")) o->seed = (uint64_t)n;
            if (!strcmp(name, "--lane-iters")) o->lane_iters = n < 1 ? 1 : n;
        } else if (!strcmp(name, "--time-cap") || !strcmp(name, "--precision") ||
                   !strcmp(name, "--progress") || !strcmp(name, "--budget") ||
                   !strcmp(name, "--guideline-tol")) {
            double d;
            if (parse_double(val, &d)) {
                snprintf(err, (size_t)errlen, "%s: bad number '%s'", name, val);
                return -1;
            }
            if (!strcmp(name, "--time-cap"))
                o->time_cap = d;
            else if (!strcmp(name, "--precision"))
                o->rel = d;
            else if (!strcmp(name, "--budget"))
                o->budget = d;
            else if (!strcmp(name, "--guideline-tol"))
                o->gl_tol = d;
            else
                o->progress_every = d;
        } else if (!strcmp(name, "--csv")) {
            o->csv = val;
        } else if (!strcmp(name, "--json")) {
            o->json = val;
        } else if (!strcmp(name, "--param")) {
            /* Parameters are environment variables read by Convoy; every rank parses the
             * same argv, so every rank sets the same ones. */
            char *peq = strchr(val, '=');
            if (!peq || peq == val) {
                snprintf(err, (size_t)errlen, "--param wants NAME=VALUE, got '%s'", val);
                return -1;
            }
            char pname[256];
            snprintf(pname, sizeof pname, "%.*s", (int)(peq - val), val);
            setenv(pname, peq + 1, 1);
        } else if (!strcmp(name, "--inject-error")) {
            /* Hidden, for the tests: ALGO[:RANK]. Corrupts one element of ALGO's result on
             * RANK (default the last) before the comparison with native. */
            snprintf(o->inject_buf, sizeof o->inject_buf, "%s", val);
            o->inject_algo = o->inject_buf;
            char *colon = strchr(o->inject_buf, ':');
            if (colon) {
                *colon = '\0';
                if (bench_parse_count(colon + 1, &n)) {
                    snprintf(err, (size_t)errlen, "--inject-error: bad rank");
                    return -1;
                }
                o->inject_rank = (int)n;
            }
        }
    }
    if (expand_colls(o, colls, err, errlen)) return -1;
    if (bench_split(algos, &o->algos, &o->nalgos) || bench_split(dists, &o->dists, &o->ndists) ||
        bench_split(gl, &o->gl_names, &o->ngl_names)) {
        snprintf(err, (size_t)errlen, "empty item in a list");
        return -1;
    }
    if (expand_all_dists(o)) {
        snprintf(err, (size_t)errlen, "out of memory");
        return -1;
    }
    for (int c = 0; c < bench_ncolls && c < BENCH_MAX_COLLS; c++) {
        const char *cs = coll_counts[c] ? coll_counts[c] : counts;
        if (bench_parse_counts(cs, &o->counts[c], &o->ncounts[c])) {
            snprintf(err, (size_t)errlen, "bad --count '%s' (e.g. 1K,16K or 1K:64M or 1K:64M:2)",
                     cs);
            return -1;
        }
    }
    if (o->guidelines && bench_guideline_check_names(o, err, errlen)) return -1;
    return 0;
}
