/*
 * convoy-tune: writes a CONVOY_TUNING_FILE for this machine and process layout.
 *
 *   mpirun -n P convoy-tune [--out FILE] [--budget SECONDS] [--coll a,b,...]
 *                           [--count LIST] [--no-verify]
 *
 * 1. The machine parameters (alpha, beta, gamma, Convoy's per-call overhead) as Convoy
 *    measures them at a communicator's setup (src/api/machine.c); recorded in the file.
 * 2. Per collective, convoy-bench's timing (convoy_bench_main, in process: the same cells,
 *    interleaved variants, medians and confidence intervals, results checked against
 *    native) of every applicable Convoy algorithm and native over the count sweep; the
 *    fastest per count wins (a Convoy algorithm only when more than 5% faster than native),
 *    neighbouring counts with the same winner merge into one rule,
 *    and rule boundaries lie at the geometric mean of the neighbouring sizes.
 * 3. The rules, for this communicator's node count and processes per node, go to the file.
 * 4. A second pass calls each collective at every swept count, first without the file (the
 *    model's choice, native a candidate as under the drop-in), then with CONVOY_TUNING_FILE
 *    set: prints what tuning changed and checks that Convoy now chooses the tuned algorithm
 *    (exit status 1 if not).
 *
 * Progress on stderr (rank 0). --budget caps the whole sweep (split over the collectives).
 */
#define _POSIX_C_SOURCE 200809L

#include "api/api.h"
#include "bench.h"
#include "convoy.h"
#include "select/select.h"
#include "select/tuning.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A tuned collective: its convoy-bench name, Convoy's collective and how many elements of
 * the whole vector a count means (P: per-rank blocks, 1: the vector itself). */
typedef struct tcoll {
    const char *bench;
    int coll;
    int per_rank;
} tcoll;

static const tcoll tcolls[] = {
    {"allreduce", CONVOY_COLL_ALLREDUCE, 0},
    {"allgatherv", CONVOY_COLL_ALLGATHERV, 1},
    {"reduce_scatter_block", CONVOY_COLL_REDUCE_SCATTER_BLOCK, 1},
    {"barrier", CONVOY_COLL_BARRIER, 0},
};
enum { NT = sizeof tcolls / sizeof tcolls[0], MAXC = 64, MAXV = 32 };

typedef struct point {
    long long count;
    char winner[48];
    double best_us, native_us;
} point;

/* A Convoy algorithm replaces native only when faster by more than this fraction of
 * native's median (the benchmark's stopping precision): a drop-in must not be slower. */
static const double margin = 0.05;

static int rank, size;

static void say(const char *fmt, ...)
{
    if (rank != 0) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "convoy-tune: ");
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fflush(stderr);
}

/* The fastest variant per count of one collective, from convoy-bench's CSV (rank 0). */
static int read_csv(const char *path, const char *coll, point *pts, int max)
{
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    char line[2048];
    int n = 0;
    if (!fgets(line, sizeof line, f)) line[0] = '\0'; /* the header */
    while (fgets(line, sizeof line, f)) {
        char *fld[10], *save = NULL, *p = line;
        int k = 0;
        for (char *t = strtok_r(p, ",", &save); t && k < 10; t = strtok_r(NULL, ",", &save))
            fld[k++] = t;
        /* coll,algo,dist,count,bytes,np,nodes,ppn,median_us,... */
        if (k < 9 || strcmp(fld[0], coll) != 0 || strcmp(fld[1], "auto") == 0 || !*fld[8]) continue;
        long long count = atoll(fld[3]);
        double us = atof(fld[8]);
        int i = 0;
        while (i < n && pts[i].count != count)
            i++;
        if (i == n) {
            if (n == max) continue;
            pts[n].count = count;
            pts[n].best_us = pts[n].native_us = -1;
            n++;
        }
        if (strcmp(fld[1], "native") == 0) pts[i].native_us = us;
        if (pts[i].best_us < 0 || us < pts[i].best_us) {
            pts[i].best_us = us;
            snprintf(pts[i].winner, sizeof pts[i].winner, "%s", fld[1]);
        }
    }
    fclose(f);
    for (int i = 0; i < n; i++)
        if (pts[i].native_us >= 0 && pts[i].best_us > (1 - margin) * pts[i].native_us) {
            pts[i].best_us = pts[i].native_us;
            snprintf(pts[i].winner, sizeof pts[i].winner, "native");
        }
    /* In count order (the sweep may come back in any order). */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && pts[j].count < pts[j - 1].count; j--) {
            point t = pts[j];
            pts[j] = pts[j - 1];
            pts[j - 1] = t;
        }
    return n;
}

static long long bytes_of(const tcoll *t, long long count)
{
    return count * (long long)sizeof(int) * (t->per_rank ? size : 1);
}

/* Rules of one collective: runs of equal winners, split at the geometric mean. */
static void write_rules(FILE *f, const tcoll *t, const point *pts, int n, int nodes, int ppn,
                        int *first_coll)
{
    fprintf(f, "%s\n  \"%s\": [", *first_coll ? "" : ",", convoy__coll_name(t->coll));
    *first_coll = 0;
    int first = 1;
    for (int i = 0; i < n;) {
        int j = i;
        while (j + 1 < n && strcmp(pts[j + 1].winner, pts[i].winner) == 0)
            j++;
        long long lo = i == 0 ? 0
                              : (long long)ceil(sqrt((double)bytes_of(t, pts[i - 1].count) *
                                                     (double)bytes_of(t, pts[i].count)));
        char hi[32] = "null";
        if (j + 1 < n)
            snprintf(hi, sizeof hi, "%lld",
                     (long long)ceil(sqrt((double)bytes_of(t, pts[j].count) *
                                          (double)bytes_of(t, pts[j + 1].count))));
        fprintf(
            f, "%s\n    {\"bytes\": [%lld, %s], \"nodes\": %d, \"ppn\": %d, \"algorithm\": \"%s\"}",
            first ? "" : ",", lo, hi, nodes, ppn, pts[i].winner);
        first = 0;
        i = j + 1;
    }
    fprintf(f, "\n  ]");
}

/* One call of the collective with `count` through Convoy; the algorithm it chose. */
static const char *chosen(const tcoll *t, long long count)
{
    const long long n = t->per_rank ? count * size : count;
    int *a = calloc((size_t)n + 1, sizeof *a), *b = calloc((size_t)n + 1, sizeof *b);
    int *rc = malloc((size_t)size * sizeof *rc), *dp = malloc((size_t)size * sizeof *dp);
    for (int i = 0; i < size; i++)
        rc[i] = (int)count, dp[i] = i * (int)count;
    switch (t->coll) {
    case CONVOY_COLL_ALLREDUCE:
        convoy_Allreduce(a, b, (int)n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case CONVOY_COLL_ALLGATHERV:
        convoy_Allgatherv(a, (int)count, MPI_INT, b, rc, dp, MPI_INT, MPI_COMM_WORLD);
        break;
    case CONVOY_COLL_REDUCE_SCATTER_BLOCK:
        convoy_Reduce_scatter_block(a, b, (int)count, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        break;
    default: convoy_Barrier(MPI_COMM_WORLD);
    }
    free(a), free(b), free(rc), free(dp);
    const char *name = convoy__comm_last_algo(MPI_COMM_WORLD);
    return name ? name : "?";
}

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr, "usage: mpirun -n P convoy-tune [--out FILE] [--budget SECONDS] "
                        "[--coll allreduce,allgatherv,reduce_scatter_block,barrier] "
                        "[--count LIST (convoy-bench syntax)] [--no-verify]\n");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *out = "convoy-tuning.json", *colls = "allreduce,allgatherv,reduce_scatter_block",
               *counts = "1:1M:8";
    double budget = 120;
    int verify = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc)
            out = argv[++i];
        else if (!strcmp(argv[i], "--budget") && i + 1 < argc)
            budget = atof(argv[++i]);
        else if (!strcmp(argv[i], "--coll") && i + 1 < argc)
            colls = argv[++i];
        else if (!strcmp(argv[i], "--count") && i + 1 < argc)
            counts = argv[++i];
        else if (!strcmp(argv[i], "--no-verify"))
            verify = 0;
        else {
            usage();
            MPI_Finalize();
            return 2;
        }
    }
    if (budget <= 0) {
        usage();
        MPI_Finalize();
        return 2;
    }
    unsetenv("CONVOY_TUNING_FILE"); /* measure the algorithms, not an older file's rules */

    /* 1. Machine parameters and layout, from the communicator's setup. */
    convoy__machine m;
    const char *how;
    const convoy__topo *topo;
    if (convoy__comm_machine(MPI_COMM_WORLD, &m, &how) ||
        convoy__comm_topo(MPI_COMM_WORLD, &topo)) {
        say("cannot set up Convoy on MPI_COMM_WORLD\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    const int nodes = topo->nnodes, ppn = topo->max_ppn;
    say("%d processes, %d nodes, up to %d per node; machine (%s): alpha %.2f us, beta %.3f "
        "ns/B, gamma %.3f ns/B, Convoy overhead %.2f us\n",
        size, nodes, ppn, how, 1e6 * m.alpha, 1e9 * m.beta, 1e9 * m.gamma, 1e6 * m.overhead);

    /* 2. The sweep, one convoy-bench run per collective. */
    int ntc = 0, use[NT];
    for (int i = 0; i < NT; i++) {
        const char *p = strstr(colls, tcolls[i].bench);
        size_t n = strlen(tcolls[i].bench);
        use[i] = p && (p == colls || p[-1] == ',') && (p[n] == ',' || p[n] == '\0');
        ntc += use[i];
    }
    if (!ntc) {
        usage();
        MPI_Finalize();
        return 2;
    }
    char csv[64] = "";
    if (rank == 0) {
        snprintf(csv, sizeof csv, "/tmp/convoy-tune-%d.csv", (int)getpid());
    }
    MPI_Bcast(csv, sizeof csv, MPI_CHAR, 0, MPI_COMM_WORLD);
    static point pts[NT][MAXC];
    int npts[NT] = {0};
    int status = 0;
    for (int i = 0; i < NT; i++) {
        if (!use[i]) continue;
        char b[32];
        snprintf(b, sizeof b, "%.1f", budget / ntc);
        char *av[] = {"convoy-bench",
                      "--coll",
                      (char *)tcolls[i].bench,
                      "--algo",
                      "all",
                      "--count",
                      (char *)counts,
                      "--dist",
                      "regular",
                      "--budget",
                      b,
                      "--csv",
                      csv,
                      "--quiet",
                      NULL};
        say("timing %s: every algorithm and native, counts %s, budget %s s\n", tcolls[i].bench,
            tcolls[i].coll == CONVOY_COLL_BARRIER ? "-" : counts, b);
        if (convoy_bench_main((int)(sizeof av / sizeof av[0]) - 1, av, MPI_COMM_WORLD) == 1) {
            say("%s: an algorithm's result differed from native (see above)\n", tcolls[i].bench);
            status = 1;
        }
        if (rank == 0) npts[i] = read_csv(csv, tcolls[i].bench, pts[i], MAXC);
        MPI_Bcast(&npts[i], 1, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Bcast(pts[i], (int)(npts[i] * sizeof(point)), MPI_BYTE, 0, MPI_COMM_WORLD);
        for (int k = 0; k < npts[i]; k++)
            say("  %-22s count %-9lld native %10.1f us, chosen %-14s %10.1f us\n", tcolls[i].bench,
                pts[i][k].count, pts[i][k].native_us, pts[i][k].winner, pts[i][k].best_us);
    }
    if (rank == 0) remove(csv);

    /* 3. The file. */
    if (rank == 0) {
        FILE *f = fopen(out, "w");
        if (!f) {
            fprintf(stderr, "convoy-tune: cannot write %s\n", out);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        fprintf(f,
                "{\n  \"convoy_tuning\": 1,\n  \"comment\": \"convoy-tune: %d processes, %d "
                "nodes, %d per node, counts %s of int\",\n",
                size, nodes, ppn, counts);
        fprintf(f,
                "  \"machine\": {\"alpha\": %.3e, \"beta\": %.3e, \"gamma\": %.3e, "
                "\"overhead\": %.3e, \"how\": \"%s\"}",
                m.alpha, m.beta, m.gamma, m.overhead, how);
        int first = 0;
        for (int i = 0; i < NT; i++)
            if (use[i] && npts[i]) write_rules(f, &tcolls[i], pts[i], npts[i], nodes, ppn, &first);
        fprintf(f, "\n}\n");
        fclose(f);
        say("wrote %s\n", out);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    /* 4. The choices with the file. */
    if (verify) {
        /* convoy-bench forces its variants through CONVOY_<COLL>_ALGO; none may remain. */
        for (int c = 0; c < CONVOY_NCOLL; c++) {
            char var[64];
            int n = snprintf(var, sizeof var, "CONVOY_");
            for (const char *p = convoy__coll_name(c); *p && n < 48; p++)
                var[n++] = (char)(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p);
            snprintf(var + n, sizeof var - (size_t)n, "_ALGO");
            unsetenv(var);
        }
        /* The drop-in's choices without the file (the model, native a candidate; not the
         * trial's, which would time the first calls), then with it: what tuning changed,
         * and whether the file reproduces the sweep. */
        setenv("CONVOY_NATIVE_CANDIDATE", "1", 1);
        setenv("CONVOY_TRIAL", "0", 1);
        static char model[NT][MAXC][48];
        for (int i = 0; i < NT; i++)
            for (int k = 0; use[i] && k < npts[i]; k++)
                snprintf(model[i][k], sizeof model[i][k], "%s",
                         chosen(&tcolls[i], pts[i][k].count));
        setenv("CONVOY_TUNING_FILE", out, 1);
        int bad = 0, total = 0, changed = 0;
        for (int i = 0; i < NT; i++)
            for (int k = 0; use[i] && k < npts[i]; k++) {
                const char *got = chosen(&tcolls[i], pts[i][k].count);
                total++;
                changed += strcmp(model[i][k], pts[i][k].winner) != 0;
                if (strcmp(got, pts[i][k].winner) != 0) bad++;
                say("  %-22s count %-9lld model %-14s tuned %-14s with the file %s%s\n",
                    tcolls[i].bench, pts[i][k].count, model[i][k], pts[i][k].winner, got,
                    strcmp(got, pts[i][k].winner) != 0 ? "  MISMATCH" : "");
            }
        say("tuning changed %d of %d choices of the model\n", changed, total);
        say("with CONVOY_TUNING_FILE=%s: %d of %d tuned choices reproduced\n", out, total - bad,
            total);
        if (bad) status = 1;
    }
    MPI_Finalize();
    return status;
}
