/*
 * convoy-bench: times Convoy's algorithms and the MPI library's own collective side by
 * side in one job.
 *
 * For every cell (collective, distribution, count) it
 *  1. validates: runs native once as the reference, then every algorithm once on a
 *     poisoned receive buffer, and compares the results byte for byte on every rank;
 *  2. warms up and then times repetitions interleaved across algorithms (A B C, B C A,
 *     C A B, ...), so that drift in the machine's state hits all of them alike and no
 *     algorithm always runs first after the bookkeeping collectives;
 *  3. times each repetition as barrier, t0, call, t1 on every rank and takes the slowest
 *     rank's t1 - t0, reduced to rank 0 after the repetition (outside the timed region);
 *  4. stops the cell when rank 0 decides so (the repetitions reached --reps, the cell's
 *     time cap passed, or, after --min-reps, the 95% CI of every algorithm's median lies
 *     within +-5% of that median) and broadcasts the decision, so ranks never disagree on
 *     how many collectives follow and never hang. All algorithms of a cell stop together,
 *     so all get the same number of interleaved repetitions.
 *
 * Algorithms are forced per call with CONVOY_<COLL>_ALGO, which Convoy reads on every call;
 * setenv() runs before the barrier, outside the timed region.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "api/api.h"
#include "check/dist.h"
#include "parse.h"
#include "select/select.h"
#include "topo/topo.h"

static const char *const default_dists = "regular,broadcast,spike,halffull,decreasing,geometric";

static char first_mismatch[1024];

const char *convoy_bench_first_mismatch(void)
{
    return first_mismatch;
}

static void usage(FILE *f)
{
    fprintf(f,
            "usage: convoy-bench [options]\n"
            "  --coll LIST       collectives: allgatherv,allreduce (default both)\n"
            "  --algo LIST       all | native | auto | algorithm names (default all: every\n"
            "                    registered algorithm of the collective, plus native);\n"
            "                    auto = Convoy's own choice\n"
            "  --dist LIST       distributions for v-collectives: regular, broadcast, spike,\n"
            "                    halffull, decreasing, geometric, random; all = the first six\n"
            "                    (default all)\n"
            "  --count LIST      counts in elements of --type, K/M/G suffixes, ranges LO:HI[:F]\n"
            "                    in powers of F (default 4), e.g. 1K,16K or 1K:64M\n"
            "                    (default 1K:1M); the base count c of a distribution.\n"
            "                    --count COLL=LIST sets them for one collective only\n"
            "  --type T          int | double | float | long | char (default int)\n"
            "  --op OP           sum | max | min | prod (default sum)\n"
            "  --inplace         use MPI_IN_PLACE\n"
            "  --reps N          at most N timed repetitions per algorithm (default 1000)\n"
            "  --min-reps N      repetitions before the CI stop rule applies (default 10)\n"
            "  --warmup N        untimed rounds first (default 2)\n"
            "  --time-cap S      seconds per cell, all algorithms together (default 5)\n"
            "  --precision F     stop when the median's 95%% CI is within +-F of it\n"
            "                    (default 0.05)\n"
            "  --seed N          seed of the random distribution (default 1)\n"
            "  --param NAME=VAL  set an algorithm parameter (an environment variable)\n"
            "  --csv FILE        write one CSV row per algorithm per cell\n"
            "  --progress S      a progress line on stderr every S seconds when it is not\n"
            "                    a terminal (default 10; 0: none)\n"
            "  --no-check        skip the validation against native\n"
            "  --quiet           no table or progress, only errors\n"
            "  --list            list the collectives and algorithms, then exit\n"
            "Exit status: 0 all results matched native, 1 a mismatch or failure, 2 bad usage.\n");
}

static void opts_free(bench_opts *o)
{
    bench_strv_free(o->colls, o->ncolls);
    bench_strv_free(o->algos, o->nalgos);
    bench_strv_free(o->dists, o->ndists);
    for (int i = 0; i < BENCH_MAX_COLLS; i++) free(o->counts[i]);
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
            for (int j = 0; j < n; j++) dup |= strcmp(v[j], d) == 0;
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

/* Parses argv into o. Returns 0, 1 after --help, or -1 (message in err). */
static int parse_args(int argc, char **argv, bench_opts *o, char *err, int errlen)
{
    const char *colls = "allgatherv,allreduce", *algos = "all", *dists = default_dists;
    const char *counts = "1K:1M";
    const char *coll_counts[BENCH_MAX_COLLS] = {0}; /* --count COLL=LIST */
    memset(o, 0, sizeof *o);
    o->reps = 1000;
    o->warmup = 2;
    o->min_reps = 10;
    o->time_cap = 5.0;
    o->rel = 0.05;
    o->seed = 1;
    o->check = 1;
    o->inject_rank = -1;
    o->progress_every = 10.0;
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
        static const char *const flags[] = {"--inplace", "--no-check", "--quiet", "--list",
                                            "--help", "-h"};
        static const char *const valued[] = {
            "--coll", "--algo",      "--dist",      "--count", "--type",  "--op",
            "--reps", "--warmup",    "--min-reps",  "--seed",  "--time-cap",
            "--precision", "--csv", "--param",     "--inject-error", "--progress"};
        int is_flag = find_name(flags, 6, name) >= 0;
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
        } else if (!strcmp(name, "--quiet")) {
            o->quiet = 1;
        } else if (!strcmp(name, "--list")) {
            o->list = 1;
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
                int k;
                for (k = 0; k < bench_ncolls; k++)
                    if (strlen(bench_colls[k].name) == (size_t)(ceq - val) &&
                        !strncmp(bench_colls[k].name, val, (size_t)(ceq - val)))
                        break;
                if (k == bench_ncolls) {
                    snprintf(err, (size_t)errlen, "--count %s: unknown collective", val);
                    return -1;
                }
                coll_counts[k] = ceq + 1;
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
        } else if (!strcmp(name, "--reps") || !strcmp(name, "--warmup") ||
                   !strcmp(name, "--min-reps") || !strcmp(name, "--seed")) {
            if (bench_parse_count(val, &n)) {
                snprintf(err, (size_t)errlen, "%s: bad number '%s'", name, val);
                return -1;
            }
            if (!strcmp(name, "--reps")) o->reps = n < 1 ? 1 : n;
            if (!strcmp(name, "--warmup")) o->warmup = n;
            if (!strcmp(name, "--min-reps")) o->min_reps = n;
            if (!strcmp(name, "--seed")) o->seed = (uint64_t)n;
        } else if (!strcmp(name, "--time-cap") || !strcmp(name, "--precision") ||
                   !strcmp(name, "--progress")) {
            double d;
            if (parse_double(val, &d)) {
                snprintf(err, (size_t)errlen, "%s: bad number '%s'", name, val);
                return -1;
            }
            if (!strcmp(name, "--time-cap")) o->time_cap = d;
            else if (!strcmp(name, "--precision")) o->rel = d;
            else o->progress_every = d;
        } else if (!strcmp(name, "--csv")) {
            o->csv = val;
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
        } else {
            snprintf(err, (size_t)errlen, "unknown option '%s' (try --help)", name);
            return -1;
        }
    }
    if (bench_split(colls, &o->colls, &o->ncolls) || bench_split(algos, &o->algos, &o->nalgos) ||
        bench_split(dists, &o->dists, &o->ndists)) {
        snprintf(err, (size_t)errlen, "empty item in a list");
        return -1;
    }
    if (expand_all_dists(o)) {
        snprintf(err, (size_t)errlen, "out of memory");
        return -1;
    }
    for (int k = 0; k < bench_ncolls && k < BENCH_MAX_COLLS; k++) {
        const char *cs = coll_counts[k] ? coll_counts[k] : counts;
        if (bench_parse_counts(cs, &o->counts[k], &o->ncounts[k])) {
            snprintf(err, (size_t)errlen,
                     "bad --count '%s' (e.g. 1K,16K or 1K:64M or 1K:64M:2)", cs);
            return -1;
        }
    }
    for (int i = 0; i < o->ncolls; i++)
        if (!bench_coll_find(o->colls[i])) {
            snprintf(err, (size_t)errlen, "unknown collective '%s' (try --list)", o->colls[i]);
            return -1;
        }
    return 0;
}

/* The columns of one collective's table: the requested algorithms that exist for it, in the
 * order asked, without duplicates. */
static int resolve_algos(const bench_opts *o, const bench_coll *coll, char ***out, int *nout)
{
    int cap = 2 + convoy__nalgos + o->nalgos, n = 0;
    char **v = calloc((size_t)cap, sizeof *v);
    if (!v) return -1;
    for (int i = 0; i < o->nalgos; i++) {
        const char *a = o->algos[i];
        int all = strcmp(a, "all") == 0;
        const char *cand[64];
        int nc = 0;
        if (all) {
            cand[nc++] = "native";
            for (int k = 0; k < convoy__nalgos && nc < 64; k++)
                if (convoy__algos[k].coll == coll->convoy_coll) cand[nc++] = convoy__algos[k].name;
        } else if (!strcmp(a, "native") || !strcmp(a, "auto") ||
                   convoy__algo_find(coll->convoy_coll, a)) {
            cand[nc++] = a;
        }
        for (int k = 0; k < nc; k++) {
            int dup = 0;
            for (int j = 0; j < n; j++) dup |= strcmp(v[j], cand[k]) == 0;
            if (!dup) v[n++] = (char *)cand[k];
        }
    }
    *out = v;
    *nout = n;
    return 0;
}

/* Every distribution named must be known (when a chosen collective takes one). */
static int check_dist_names(const bench_opts *o, int size, char *err, int errlen)
{
    int vector = 0;
    for (int c = 0; c < o->ncolls; c++) vector |= bench_coll_find(o->colls[c])->vector;
    int64_t *tmp = malloc((size_t)size * sizeof *tmp);
    int rc = tmp ? 0 : -1;
    for (int i = 0; vector && !rc && i < o->ndists; i++)
        if (convoy__dist_counts(o->dists[i], size, 1, o->seed, tmp) != 0) {
            snprintf(err, (size_t)errlen, "unknown distribution '%s' (try --help)",
                     o->dists[i]);
            rc = -1;
        }
    free(tmp);
    return rc;
}

/* Every algorithm named must exist for at least one of the chosen collectives. */
static int check_algo_names(const bench_opts *o, char *err, int errlen)
{
    for (int i = 0; i < o->nalgos; i++) {
        const char *a = o->algos[i];
        if (!strcmp(a, "all") || !strcmp(a, "native") || !strcmp(a, "auto")) continue;
        int found = 0;
        for (int c = 0; c < o->ncolls; c++)
            found |= convoy__algo_find(bench_coll_find(o->colls[c])->convoy_coll, a) != NULL;
        if (!found) {
            snprintf(err, (size_t)errlen, "no algorithm '%s' for %s (try --list)", a,
                     o->ncolls == 1 ? o->colls[0] : "the chosen collectives");
            return -1;
        }
    }
    return 0;
}

static void list_algos(FILE *f)
{
    for (int c = 0; c < bench_ncolls; c++) {
        fprintf(f, "%s native\n", bench_colls[c].name);
        fprintf(f, "%s auto\n", bench_colls[c].name);
        for (int k = 0; k < convoy__nalgos; k++)
            if (convoy__algos[k].coll == bench_colls[c].convoy_coll)
                fprintf(f, "%s %s %s\n", bench_colls[c].name, convoy__algos[k].name,
                        convoy__algos[k].params ? convoy__algos[k].params : "");
    }
}

static void algo_env_name(const bench_coll *coll, char *buf, int len)
{
    int k = snprintf(buf, (size_t)len, "CONVOY_");
    for (const char *p = coll->name; *p && k < len - 1; p++)
        buf[k++] = (char)toupper((unsigned char)*p);
    buf[k] = '\0';
    snprintf(buf + k, (size_t)(len - k), "_ALGO");
}

/* One call of algorithm `algo` (prepare and environment outside any timing). */
typedef struct bench_run {
    const bench_coll *coll;
    bench_cell *cell;
    char env[64];
} bench_run;

static void select_algo(bench_run *b, const char *algo)
{
    if (!strcmp(algo, "native")) return;
    if (!strcmp(algo, "auto"))
        unsetenv(b->env);
    else
        setenv(b->env, algo, 1);
}

static int call_algo(bench_run *b, const char *algo)
{
    return strcmp(algo, "native") == 0 ? b->coll->native(b->cell) : b->coll->convoy(b->cell);
}

/* What one rank saw in one validation call, gathered to rank 0. */
typedef struct check_info {
    int err_class; /* MPI error class of the call, MPI_SUCCESS when it worked */
    int pad;
    int64_t first_diff; /* first element differing from native, or -1 */
    char got[40], want[40];
} check_info;

/* The bench's state across cells. */
typedef struct bench_ctx {
    const bench_opts *o;
    bench_meta meta;
    MPI_Comm comm;
    int rank, size;
    FILE *csv;
    int failures; /* mismatches and failed calls */
    int cells, cells_done;
    double t_start, t_progress;
    int progress_shown;
} bench_ctx;

/* Running out of memory on one rank would leave the others waiting in a collective: the
 * whole job ends instead. */
static void out_of_memory(bench_ctx *x)
{
    fprintf(stderr, "convoy-bench: out of memory on rank %d\n", x->rank);
    MPI_Abort(x->comm, 1);
}

static void progress_clear(bench_ctx *x)
{
    if (x->progress_shown) {
        fprintf(stderr, "\r\033[K");
        x->progress_shown = 0;
    }
}

/* A progress line on stderr: rewritten in place on a terminal, else one line every
 * progress_every seconds (mpiexec usually hands the processes pipes, not a terminal). */
static void progress(bench_ctx *x, const bench_coll *coll, const bench_cell *c, const char *what)
{
    if (x->rank != 0 || x->o->quiet) return;
    double now = MPI_Wtime();
    int tty = isatty(2);
    if (!tty && x->o->progress_every <= 0) return;
    if (now - x->t_progress < (tty ? 0.25 : x->o->progress_every)) return;
    x->t_progress = now;
    char cnt[32];
    bench_format_count(c->count, cnt, sizeof cnt);
    fprintf(stderr, "%sconvoy-bench: cell %d/%d %s %s count %s: %s (%.0f s)%s",
            tty ? "\r\033[K" : "", x->cells_done + 1, x->cells, coll->name, c->dist, cnt, what,
            now - x->t_start, tty ? "" : "\n");
    x->progress_shown = tty;
    fflush(stderr);
}

static void report_mismatch(bench_ctx *x, const bench_coll *coll, const bench_cell *c,
                            const char *algo, const check_info *info)
{
    int nbad = 0, first = -1;
    for (int r = 0; r < x->size; r++)
        if (info[r].first_diff >= 0 && nbad++ == 0) first = r;
    char cnt[32];
    bench_format_count(c->count, cnt, sizeof cnt);
    char msg[1024];
    snprintf(msg, sizeof msg,
             "convoy-bench: MISMATCH %s algorithm '%s' (dist %s, count %s, %s%s%s): rank %d "
             "differs from native first at element %lld (got %s, expected %s); %d of %d "
             "ranks differ",
             coll->name, algo, c->dist, cnt, bench_type_names[c->type],
             coll->reduces ? ", " : "", coll->reduces ? bench_op_names[c->op] : "", first,
             (long long)info[first].first_diff, info[first].got, info[first].want, nbad,
             x->size);
    progress_clear(x);
    fprintf(stderr, "%s\n", msg);
    fflush(stderr);
    if (!first_mismatch[0]) snprintf(first_mismatch, sizeof first_mismatch, "%s", msg);
}

/*
 * Step 1: one call per algorithm, compared with native's result. Sets applicable and valid
 * of every result, the same on every rank. Returns 0, or -1 when native itself failed.
 */
static int validate(bench_ctx *x, bench_run *b, char **algos, int nalgos, bench_result *res)
{
    bench_cell *c = b->cell;
    const bench_opts *o = x->o;
    size_t bytes = (size_t)(c->recv_elems * c->tsize);
    check_info mine, *all = NULL;
    if (x->rank == 0 && !(all = malloc((size_t)x->size * sizeof *all))) out_of_memory(x);
    int have_ref = 0, rc = 0;
    /* The reference first: native, into a poisoned buffer so that an algorithm that leaves
     * parts of the buffer untouched cannot pass by inheriting native's result. */
    for (int pass = o->check ? -1 : 0; pass < nalgos; pass++) {
        const char *algo = pass < 0 ? "native" : algos[pass];
        if (pass >= 0 && have_ref && !strcmp(algo, "native")) {
            res[pass].applicable = res[pass].valid = 1;
            continue;
        }
        memset(c->recvbuf, 0xA5, bytes);
        b->coll->prepare(c);
        select_algo(b, algo);
        int err = call_algo(b, algo);
        memset(&mine, 0, sizeof mine);
        mine.first_diff = -1;
        if (err != MPI_SUCCESS) {
            MPI_Error_class(err, &mine.err_class);
            if (mine.err_class == MPI_SUCCESS) mine.err_class = MPI_ERR_OTHER;
        }
        if (pass >= 0 && o->inject_algo && !strcmp(o->inject_algo, algo) &&
            x->rank == (o->inject_rank < 0 ? x->size - 1 : o->inject_rank) &&
            c->recv_elems > 0) {
            int64_t i = c->recv_elems / 2;
            c->recvbuf[i * c->tsize] ^= 1;
            fprintf(stderr, "convoy-bench: --inject-error: corrupted element %lld of %s's "
                            "result on rank %d\n", (long long)i, algo, x->rank);
        }
        if (pass < 0) {
            memcpy(c->expected, c->recvbuf, bytes);
        } else if (have_ref && err == MPI_SUCCESS && memcmp(c->recvbuf, c->expected, bytes)) {
            int64_t i = 0;
            while (memcmp(c->recvbuf + i * c->tsize, c->expected + i * c->tsize,
                          (size_t)c->tsize) == 0)
                i++;
            mine.first_diff = i;
            bench_format_elem(c, c->recvbuf, i, mine.got, sizeof mine.got);
            bench_format_elem(c, c->expected, i, mine.want, sizeof mine.want);
        }
        MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0,
                   x->comm);
        /* Rank 0 judges and tells everyone, so all ranks time the same algorithms. */
        int verdict[2] = {1, 1}; /* applicable, valid */
        if (x->rank == 0) {
            int nerr = 0, nbad = 0, cls = MPI_SUCCESS;
            for (int r = 0; r < x->size; r++) {
                if (all[r].err_class != MPI_SUCCESS && nerr++ == 0) cls = all[r].err_class;
                nbad += all[r].first_diff >= 0;
            }
            if (nerr) {
                char es[MPI_MAX_ERROR_STRING];
                int len;
                MPI_Error_string(cls, es, &len);
                progress_clear(x);
                fprintf(stderr, "convoy-bench: %s '%s' (dist %s, count %lld) returned an error "
                                "on %d of %d ranks: %s%s\n",
                        b->coll->name, algo, c->dist, (long long)c->count, nerr, x->size, es,
                        pass < 0 ? "" : "; not measured");
                verdict[0] = verdict[1] = 0;
            } else if (nbad) {
                report_mismatch(x, b->coll, c, algo, all);
                verdict[1] = 0;
            }
        }
        MPI_Bcast(verdict, 2, MPI_INT, 0, x->comm);
        if (pass < 0) {
            if (!verdict[0]) {
                rc = -1;
                break;
            }
            have_ref = 1;
        } else {
            res[pass].applicable = verdict[0];
            res[pass].valid = verdict[0] && verdict[1];
            if (verdict[0] && !verdict[1]) x->failures++;
        }
    }
    free(all);
    return rc;
}

/*
 * Steps 2-4: warm-up rounds, then timed rounds until rank 0 stops every algorithm.
 * Samples and summaries live on rank 0.
 */
static void measure(bench_ctx *x, bench_run *b, char **algos, int nalgos, bench_result *res,
                    double t_cell)
{
    const bench_opts *o = x->o;
    bench_cell *c = b->cell;
    int *active = calloc((size_t)nalgos, sizeof *active);
    int *order = calloc((size_t)nalgos, sizeof *order);
    double *local = calloc((size_t)nalgos * 2, sizeof *local);
    double *slowest = calloc((size_t)nalgos * 2, sizeof *slowest);
    bench_samples *smp = calloc((size_t)nalgos, sizeof *smp);
    int64_t next_check = 0;
    int warming = 1;
    if (!active || !order || !local || !slowest || !smp) out_of_memory(x);
    for (int i = 0; i < nalgos; i++) active[i] = res[i].applicable;
    for (int64_t round = 0;; round++) {
        int nact = 0;
        for (int i = 0; i < nalgos; i++)
            if (active[i]) order[nact++] = i;
        if (nact == 0) break;
        memset(local, 0, (size_t)nalgos * 2 * sizeof *local);
        for (int k = 0; k < nact; k++) {
            /* Rotate the start, so that each algorithm in turn runs right after the
             * bookkeeping reduce and broadcast. */
            int i = order[(k + round) % nact];
            b->coll->prepare(c);
            select_algo(b, algos[i]);
            PMPI_Barrier(x->comm);
            double t0 = MPI_Wtime();
            int err = call_algo(b, algos[i]);
            double t1 = MPI_Wtime();
            local[2 * i] = t1 - t0;
            local[2 * i + 1] = err != MPI_SUCCESS;
        }
        PMPI_Reduce(local, slowest, 2 * nalgos, MPI_DOUBLE, MPI_MAX, 0, x->comm);
        if (x->rank == 0) {
            /* Warm-up ends after --warmup rounds, or early when it has used half the time
             * cap (a cell of very slow calls still gets timed repetitions). Only rank 0
             * needs to know: the other ranks run the same rounds either way. */
            if (warming && (round >= o->warmup || MPI_Wtime() - t_cell > o->time_cap / 2))
                warming = 0;
            int warm = warming, nlive = 0;
            int64_t n = 0;
            for (int k = 0; k < nact; k++) {
                int i = order[k];
                if (slowest[2 * i + 1] != 0) {
                    progress_clear(x);
                    fprintf(stderr, "convoy-bench: %s '%s' (dist %s, count %lld) failed in "
                                    "round %lld; dropped\n",
                            b->coll->name, algos[i], c->dist, (long long)c->count,
                            (long long)round);
                    res[i].applicable = 0;
                    active[i] = 0;
                    x->failures++;
                    continue;
                }
                nlive++;
                if (warm) continue;
                if (bench_samples_add(&smp[i], slowest[2 * i])) out_of_memory(x);
                n = smp[i].n;
            }
            /* The cell stops for all algorithms at once: one that stopped early would leave
             * the others running alone, and drift would no longer hit all alike. */
            const char *stop = NULL;
            if (!warm && nlive) {
                if (n >= o->reps) {
                    stop = "reps";
                } else if (MPI_Wtime() - t_cell > o->time_cap) {
                    stop = "time";
                } else if (n >= o->min_reps && n >= next_check) {
                    /* Checking sorts the samples: every round while they are few, then
                     * every n/32 rounds, which bounds the sorting to O(n log n). */
                    next_check = n < 64 ? n + 1 : n + n / 32;
                    int all = 1;
                    for (int i = 0; i < nalgos && all; i++)
                        if (active[i]) all = bench_converged(smp[i].v, n, o->min_reps, o->rel);
                    if (all) stop = "ci";
                }
            }
            if (stop)
                for (int i = 0; i < nalgos; i++)
                    if (active[i]) {
                        res[i].stop = stop;
                        active[i] = 0;
                    }
            progress(x, b->coll, c, warm ? "warm-up" : "timing");
        }
        PMPI_Bcast(active, nalgos, MPI_INT, 0, x->comm);
    }
    if (x->rank == 0)
        for (int i = 0; i < nalgos; i++) bench_summarize(smp[i].v, smp[i].n, o->rel, &res[i].s);
    for (int i = 0; i < nalgos; i++) bench_samples_free(&smp[i]);
    free(smp);
    free(active);
    free(order);
    free(local);
    free(slowest);
}

/* One cell, start to finish. Errors are counted in x->failures. */
static void run_cell(bench_ctx *x, const bench_coll *coll, const char *dist, int64_t count,
                     char **algos, int nalgos)
{
    const bench_opts *o = x->o;
    double t_cell = MPI_Wtime();
    bench_cell c;
    memset(&c, 0, sizeof c);
    c.comm = x->comm;
    c.rank = x->rank;
    c.size = x->size;
    c.type = o->type;
    c.op = o->op;
    c.inplace = o->inplace;
    c.dist = dist;
    c.count = count;
    c.seed = o->seed;
    static const MPI_Op ops[BO_NOPS] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_PROD};
    c.mop = ops[o->op];
    switch (o->type) {
    case BT_INT: c.dtype = MPI_INT; break;
    case BT_DOUBLE: c.dtype = MPI_DOUBLE; break;
    case BT_FLOAT: c.dtype = MPI_FLOAT; break;
    case BT_LONG: c.dtype = MPI_LONG; break;
    /* MPI allows reductions on signed char but not on MPI_CHAR (a character type). */
    default: c.dtype = coll->reduces ? MPI_SIGNED_CHAR : MPI_CHAR; break;
    }
    int tsize;
    MPI_Type_size(c.dtype, &tsize);
    c.tsize = tsize;

    char why[256] = "";
    int st = coll->setup(&c, why, sizeof why), all_st;
    st = st < 0 ? 2 : st > 0 ? 1 : 0;
    MPI_Allreduce(&st, &all_st, 1, MPI_INT, MPI_MAX, x->comm);
    if (all_st) {
        if (x->rank == 0) {
            progress_clear(x);
            fprintf(stderr, "convoy-bench: %s dist %s count %lld %s: %s\n", coll->name, dist,
                    (long long)count, all_st == 2 ? "failed" : "skipped",
                    all_st == 2 ? "out of memory" : why);
        }
        bench_cell_free(&c);
        if (all_st == 2) x->failures++;
        return;
    }

    bench_run b;
    b.coll = coll;
    b.cell = &c;
    algo_env_name(coll, b.env, sizeof b.env);
    bench_result *res = calloc((size_t)nalgos, sizeof *res);
    if (!res) out_of_memory(x);
    for (int i = 0; i < nalgos; i++) {
        res[i].algo = algos[i];
        res[i].applicable = res[i].valid = 1;
        bench_summarize(NULL, 0, o->rel, &res[i].s);
    }
    progress(x, coll, &c, "validating");
    if (validate(x, &b, algos, nalgos, res) == 0) {
        measure(x, &b, algos, nalgos, res, t_cell);
    } else {
        /* Without a reference nothing is comparable; count it once and move on. */
        x->failures++;
        for (int i = 0; i < nalgos; i++) res[i].applicable = 0;
    }
    if (x->rank == 0) {
        progress_clear(x);
        if (!o->quiet) bench_print_table_row(stdout, &c, coll, res, nalgos);
        if (x->csv) bench_csv_rows(x->csv, &x->meta, o, &c, coll, res, nalgos);
    }
    x->cells_done++;
    free(res);
    bench_cell_free(&c);
}

static void collect_meta(bench_ctx *x, const convoy__topo *topo)
{
    bench_meta *m = &x->meta;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\r\n")] = '\0';
    snprintf(m->mpi_version, sizeof m->mpi_version, "%.*s", (int)sizeof m->mpi_version - 1, lib);
    m->np = x->size;
    m->nodes = topo->nnodes;
    m->ppn = topo->max_ppn;
    m->topo_flags = topo->flags;
    m->convoy_ppn = getenv("CONVOY_PPN");
    m->convoy_nodemap = getenv("CONVOY_NODEMAP");
    /* Oversubscribed: more processes on some real host than it has online cores. The host
     * is the shared-memory communicator, not Convoy's (possibly virtual) node. */
    MPI_Comm host;
    MPI_Comm_split_type(x->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &host);
    MPI_Comm_size(host, &m->host_procs);
    MPI_Comm_free(&host);
    m->host_cores = sysconf(_SC_NPROCESSORS_ONLN);
    int over = m->host_cores > 0 && m->host_procs > m->host_cores;
    MPI_Allreduce(&over, &m->oversubscribed, 1, MPI_INT, MPI_MAX, x->comm);
    time_t now = time(NULL);
    struct tm tm;
    localtime_r(&now, &tm);
    strftime(m->date, sizeof m->date, "%Y-%m-%d %H:%M:%S %Z", &tm);
}

int convoy_bench_main(int argc, char **argv, MPI_Comm comm_in)
{
    bench_opts o;
    bench_ctx x;
    char err[512] = "";
    memset(&x, 0, sizeof x);
    first_mismatch[0] = '\0';
    MPI_Comm_rank(comm_in, &x.rank);
    MPI_Comm_size(comm_in, &x.size);
    /* Every rank parses the same argv, so all reach the same verdict without talking. */
    int prc = parse_args(argc, argv, &o, err, sizeof err);
    if (prc == 0 && !o.list) prc = check_algo_names(&o, err, sizeof err);
    if (prc == 0 && !o.list) prc = check_dist_names(&o, x.size, err, sizeof err);
    if (prc != 0 || o.list) {
        if (x.rank == 0) {
            if (prc < 0) fprintf(stderr, "convoy-bench: %s\n", err);
            if (prc > 0) usage(stdout);
            if (prc == 0) list_algos(stdout);
        }
        opts_free(&o);
        return prc < 0 ? 2 : 0;
    }
    x.o = &o;
    /* A forced algorithm that does not apply to a call must fail the call rather than
     * quietly run Convoy's default choice, which would be timed under the forced name.
     * Convoy honours this setting (see src/api/plan.c); the user may still override it. */
    setenv("CONVOY_ALGO_STRICT", "1", 0);
    /* A private communicator whose errors return, so that an algorithm that does not apply
     * reports an error code instead of aborting the job. */
    MPI_Comm_dup(comm_in, &x.comm);
    MPI_Comm_set_errhandler(x.comm, MPI_ERRORS_RETURN);
    x.t_start = x.t_progress = MPI_Wtime();
    const convoy__topo *topo;
    int rc = convoy__comm_topo(x.comm, &topo);
    int fatal = 0;
    if (rc != MPI_SUCCESS) {
        if (x.rank == 0) fprintf(stderr, "convoy-bench: no topology for the communicator\n");
        MPI_Comm_free(&x.comm);
        opts_free(&o);
        return 1;
    }
    collect_meta(&x, topo);

    if (x.rank == 0 && o.csv) {
        x.csv = fopen(o.csv, "w");
        if (!x.csv) {
            perror(o.csv);
            fatal = 1;
        } else {
            bench_csv_head(x.csv);
        }
    }
    MPI_Bcast(&fatal, 1, MPI_INT, 0, x.comm);
    if (fatal) {
        MPI_Comm_free(&x.comm);
        opts_free(&o);
        return 2;
    }
    for (int ci = 0; ci < o.ncolls; ci++) {
        const bench_coll *coll = bench_coll_find(o.colls[ci]);
        x.cells += (coll->vector ? o.ndists : 1) * o.ncounts[coll - bench_colls];
    }
    if (x.rank == 0 && !o.quiet) bench_print_header(stdout, &x.meta, &o);

    for (int ci = 0; ci < o.ncolls; ci++) {
        const bench_coll *coll = bench_coll_find(o.colls[ci]);
        char **algos = NULL;
        int nalgos = 0;
        if (resolve_algos(&o, coll, &algos, &nalgos)) out_of_memory(&x);
        if (nalgos == 0) {
            free(algos);
            continue;
        }
        if (x.rank == 0 && !o.quiet) bench_print_table_head(stdout, coll, &o, algos, nalgos);
        int ndist = coll->vector ? o.ndists : 1, kc = (int)(coll - bench_colls);
        for (int di = 0; di < ndist; di++)
            for (int k = 0; k < o.ncounts[kc]; k++)
                run_cell(&x, coll, coll->vector ? o.dists[di] : "-", o.counts[kc][k], algos,
                         nalgos);
        free(algos);
    }
    if (x.rank == 0) {
        progress_clear(&x);
        if (x.csv) fclose(x.csv);
        if (!o.quiet) {
            printf("\n# %d cells in %.1f s; %s", x.cells_done, MPI_Wtime() - x.t_start,
                   x.failures ? "" : "every result matched native\n");
            if (x.failures) printf("%d MISMATCHES OR FAILURES (see stderr)\n", x.failures);
            if (o.csv) printf("# CSV: %s\n", o.csv);
            fflush(stdout);
        }
    }
    /* Rank 0 counted the failures it judged; every rank returns the same status. */
    MPI_Bcast(&x.failures, 1, MPI_INT, 0, x.comm);
    rc = x.failures ? 1 : 0;
    MPI_Comm_free(&x.comm);
    opts_free(&o);
    return rc;
}
