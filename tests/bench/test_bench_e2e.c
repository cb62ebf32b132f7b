/*
 * End-to-end tests of convoy-bench, run inside this MPI job through convoy_bench_main():
 *
 *   test_bench_e2e csv FILE   a tiny benchmark writing FILE; then rank 0 checks the CSV:
 *                             the header's columns, one row per algorithm per cell, numbers
 *                             that parse and make sense, native present, np/nodes/ppn as
 *                             Convoy's topology says. Also: bad usage gives status 2; and
 *                             by default rooted collectives start in windows, the others
 *                             after a barrier (the sync column).
 *   test_bench_e2e full CSV JSON
 *                             every collective of the table (native only where Convoy has
 *                             none), every guideline, both lane benchmarks, --sync window,
 *                             rotating roots: rank 0 checks that the CSV has each of them
 *                             with valid results, valid <= total repetitions, the window and
 *                             root columns; tests/bench/check_json.py checks the JSON after.
 *   test_bench_e2e inject     one algorithm's result is corrupted on one rank
 *                             (--inject-error): the run must fail (status 1) and report the
 *                             mismatch with the algorithm, the rank and the element; with
 *                             --no-check the same run passes. Likewise a guideline's
 *                             mock-up, validated against the collective it stands for.
 *   test_bench_e2e steady     (one node) a Barrier cell whose Convoy variants are forced in
 *                             turn: every timed call of node_flags must run in the direct
 *                             kernel, i.e. be the kept repeated call a program makes, not
 *                             the first call after the forcing changed the settings.
 *
 * The expected algorithms come from Convoy's registry, so a newly registered algorithm is
 * expected in the CSV without editing this test.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "bench.h"
#include "select/select.h"

static int failures;
static int rank, size;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "[%d] %s:%d: check failed: %s\n", rank, __FILE__, __LINE__, #cond);    \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

static int run(int argc, const char **argv)
{
    /* convoy_bench_main takes argv as main() does; it does not modify the strings. */
    return convoy_bench_main(argc, (char **)argv, MPI_COMM_WORLD);
}

/* The required columns, in the order the issue fixes them. */
static const char *const required[] = {"coll",   "algo",  "dist", "count",     "bytes",
                                       "np",     "nodes", "ppn",  "median_us", "min_us",
                                       "max_us", "reps",  "valid"};
enum { NREQ = sizeof required / sizeof required[0], MAXF = 64 };

/* Splits a CSV line (no quoting: convoy-bench never writes commas inside fields). */
static int split(char *line, char **f)
{
    int n = 0;
    line[strcspn(line, "\r\n")] = '\0';
    for (char *p = line;; p++) {
        f[n++] = p;
        p = strchr(p, ',');
        if (!p || n == MAXF) break;
        *p = '\0';
    }
    return n;
}

static int parse_num(const char *s, double *v)
{
    char *end;
    *v = strtod(s, &end);
    return *s && *end == '\0' && isfinite(*v);
}

static int column(char **head, int nhead, const char *name)
{
    for (int i = 0; i < nhead; i++)
        if (!strcmp(head[i], name)) return i;
    return -1;
}

/* The cells of the tiny benchmark below. */
static const char *const colls[] = {"allgatherv", "allreduce"};
static const char *const dists[] = {"regular", "spike"};
static const long counts[] = {1024, 4096};

/* How many rows of (coll, dist, count, algo) the CSV holds. */
typedef struct seen {
    char key[160];
    int n;
} seen;

static void check_csv(const char *path, const convoy__topo *topo)
{
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (!f) return;
    char head_line[4096], line[4096];
    char *head[MAXF], *fld[MAXF];
    CHECK(fgets(head_line, sizeof head_line, f) != NULL);
    int nhead = split(head_line, head);
    CHECK(nhead >= NREQ);
    for (int i = 0; i < NREQ && i < nhead; i++) {
        if (strcmp(head[i], required[i]))
            fprintf(stderr, "column %d is '%s', want '%s'\n", i, head[i], required[i]);
        CHECK(strcmp(head[i], required[i]) == 0);
    }
    int c_coll = column(head, nhead, "coll"), c_algo = column(head, nhead, "algo"),
        c_dist = column(head, nhead, "dist"), c_count = column(head, nhead, "count"),
        c_bytes = column(head, nhead, "bytes"), c_np = column(head, nhead, "np"),
        c_nodes = column(head, nhead, "nodes"), c_ppn = column(head, nhead, "ppn"),
        c_med = column(head, nhead, "median_us"), c_min = column(head, nhead, "min_us"),
        c_max = column(head, nhead, "max_us"), c_reps = column(head, nhead, "reps"),
        c_valid = column(head, nhead, "valid");

    seen rows[256];
    int nrows = 0, lines = 0;
    while (fgets(line, sizeof line, f)) {
        lines++;
        int n = split(line, fld);
        CHECK(n == nhead);
        if (n != nhead) continue;
        double v[NREQ];
        int num[] = {c_count, c_bytes, c_np, c_nodes, c_ppn, c_med, c_min, c_max, c_reps, c_valid};
        for (size_t k = 0; k < sizeof num / sizeof num[0]; k++) {
            if (!parse_num(fld[num[k]], &v[k]))
                fprintf(stderr, "field %s = '%s' is not a number\n", head[num[k]], fld[num[k]]);
            CHECK(parse_num(fld[num[k]], &v[k]));
        }
        double count = v[0], bytes = v[1], np = v[2], nodes = v[3], ppn = v[4], med = v[5],
               mn = v[6], mx = v[7], reps = v[8], valid = v[9];
        CHECK(np == size);
        CHECK(nodes == topo->nnodes);
        CHECK(ppn == topo->max_ppn);
        CHECK(mn > 0 && mn <= med && med <= mx);
        CHECK(reps >= 1 && reps <= 30);
        CHECK(valid == 1);
        CHECK(count == 1024 || count == 4096);
        if (!strcmp(fld[c_coll], "allreduce")) {
            CHECK(strcmp(fld[c_dist], "-") == 0);
            CHECK(bytes == count * (double)sizeof(int));
        } else {
            CHECK(strcmp(fld[c_coll], "allgatherv") == 0);
            if (!strcmp(fld[c_dist], "regular")) CHECK(bytes == count * size * sizeof(int));
        }
        char key[160];
        snprintf(key, sizeof key, "%s/%s/%s/%s", fld[c_coll], fld[c_dist], fld[c_count],
                 fld[c_algo]);
        int k;
        for (k = 0; k < nrows && strcmp(rows[k].key, key); k++) {
        }
        if (k == nrows && nrows < 256) {
            snprintf(rows[nrows].key, sizeof rows[nrows].key, "%s", key);
            rows[nrows++].n = 0;
        }
        if (k < 256) rows[k].n++;
    }
    fclose(f);

    /* Exactly one row per algorithm (native and every registered one) per cell. */
    int expected = 0;
    for (int ci = 0; ci < 2; ci++) {
        int ccoll = convoy__coll_parse(colls[ci]);
        int nd = ci == 0 ? 2 : 1;
        for (int di = 0; di < nd; di++)
            for (int k = 0; k < 2; k++)
                for (int a = -1; a < convoy__nalgos; a++) {
                    if (a >= 0 && convoy__algos[a].coll != ccoll) continue;
                    char key[160];
                    snprintf(key, sizeof key, "%s/%s/%ld/%s", colls[ci], ci == 0 ? dists[di] : "-",
                             counts[k], a < 0 ? "native" : convoy__algos[a].name);
                    int found = 0;
                    for (int r = 0; r < nrows; r++)
                        if (!strcmp(rows[r].key, key)) found = rows[r].n;
                    if (found != 1) fprintf(stderr, "%d rows for %s, want 1\n", found, key);
                    CHECK(found == 1);
                    expected++;
                }
    }
    CHECK(lines == expected);
}

static void test_csv(const char *path)
{
    const char *argv[] = {"convoy-bench",
                          "--coll",
                          "allgatherv,allreduce",
                          "--algo",
                          "all",
                          "--dist",
                          "regular,spike",
                          "--count",
                          "1K,4K",
                          "--reps",
                          "30",
                          "--warmup",
                          "1",
                          "--time-cap",
                          "2",
                          "--csv",
                          path,
                          "--quiet"};
    int rc = run((int)(sizeof argv / sizeof argv[0]), argv);
    CHECK(rc == 0);
    const convoy__topo *topo;
    CHECK(convoy__comm_topo(MPI_COMM_WORLD, &topo) == MPI_SUCCESS);
    if (rank == 0) check_csv(path, topo);

    /* Usage errors: every rank returns 2 without communicating. */
    const char *bad1[] = {"convoy-bench", "--no-such-option"};
    CHECK(run(2, bad1) == 2);
    const char *bad2[] = {"convoy-bench", "--count", "1X"};
    CHECK(run(3, bad2) == 2);
    const char *bad3[] = {"convoy-bench", "--algo", "no-such-algorithm"};
    CHECK(run(3, bad3) == 2);
    const char *bad4[] = {"convoy-bench", "--dist", "no-such-distribution"};
    CHECK(run(3, bad4) == 2);
    const char *bad5[] = {"convoy-bench", "--sync", "no-such-mode"};
    CHECK(run(3, bad5) == 2);
}

/* The default start (--sync auto): rooted collectives in windows, the others after a
 * barrier; every row valid. */
static void test_auto_sync(const char *path)
{
    const char *argv[] = {"convoy-bench",
                          "--coll",
                          "allreduce,reduce,bcast",
                          "--algo",
                          "native",
                          "--count",
                          "1K",
                          "--reps",
                          "10",
                          "--warmup",
                          "1",
                          "--time-cap",
                          "1",
                          "--csv",
                          path,
                          "--quiet"};
    CHECK(run((int)(sizeof argv / sizeof argv[0]), argv) == 0);
    if (rank != 0) return;
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (!f) return;
    char line[1024], *head[MAXF], *row[MAXF];
    CHECK(fgets(line, sizeof line, f) != NULL);
    const int nh = split(line, head), c_coll = column(head, nh, "coll"),
              c_sync = column(head, nh, "sync"), c_valid = column(head, nh, "valid");
    CHECK(c_coll >= 0 && c_sync >= 0 && c_valid >= 0);
    int rows = 0;
    char buf[1024];
    while (c_coll >= 0 && c_sync >= 0 && c_valid >= 0 && fgets(buf, sizeof buf, f)) {
        CHECK(split(buf, row) == nh);
        const int rooted = strcmp(row[c_coll], "allreduce") != 0;
        if (strcmp(row[c_sync], rooted ? "window" : "barrier") != 0)
            fprintf(stderr, "%s started by %s\n", row[c_coll], row[c_sync]);
        CHECK(!strcmp(row[c_sync], rooted ? "window" : "barrier"));
        CHECK(!strcmp(row[c_valid], "1"));
        rows++;
    }
    CHECK(rows == 3);
    fclose(f);
}

/* Reads the CSV into rows of fields; returns the number of rows (header excluded). */
enum { MAXROWS = 512 };
typedef struct csv {
    char *head[MAXF];
    int nhead;
    char *rows[MAXROWS][MAXF];
    int nrows;
    char buf[MAXROWS + 1][1024];
} csv;

static int csv_read(const char *path, csv *t)
{
    FILE *f = fopen(path, "r");
    CHECK(f != NULL);
    if (!f) return 0;
    t->nrows = 0;
    CHECK(fgets(t->buf[0], sizeof t->buf[0], f) != NULL);
    t->nhead = split(t->buf[0], t->head);
    while (t->nrows < MAXROWS && fgets(t->buf[t->nrows + 1], sizeof t->buf[0], f)) {
        int n = split(t->buf[t->nrows + 1], t->rows[t->nrows]);
        CHECK(n == t->nhead);
        if (n == t->nhead) t->nrows++;
    }
    fclose(f);
    return t->nrows;
}

/* The rows with coll = name and algo = algo (NULL: any). */
static int csv_count(const csv *t, const char *coll, const char *algo)
{
    int cc = column((char **)t->head, t->nhead, "coll");
    int ca = column((char **)t->head, t->nhead, "algo");
    int n = 0;
    for (int r = 0; r < t->nrows; r++)
        n += !strcmp(t->rows[r][cc], coll) && (!algo || !strcmp(t->rows[r][ca], algo));
    return n;
}

static const char *const all_colls[] = {
    "allgatherv", "allreduce", "barrier",      "bcast",   "scatter",
    "gather",     "allgather", "alltoall",     "reduce",  "reduce_scatter_block",
    "scan",       "exscan",    "reduce_local", "gatherv", "scatterv"};
static const char *const rooted[] = {"bcast", "scatter", "gather", "reduce", "gatherv", "scatterv"};
static const char *const all_guidelines[] = {"bcast<=scatter+allgather",
                                             "allreduce<=reduce+bcast",
                                             "allreduce<=reduce_scatter_block+allgather",
                                             "allgather<=allgatherv",
                                             "allgather<=alltoall",
                                             "allgather<=gather+bcast",
                                             "gather<=allgather",
                                             "reduce<=allreduce",
                                             "reduce_scatter_block<=reduce+scatter",
                                             "scan<=exscan+reduce_local",
                                             "barrier<=allreduce"};

static void test_full(const char *csv_path, const char *json_path)
{
    const char *argv[] = {"convoy-bench",
                          "--coll",
                          "all",
                          "--algo",
                          "all",
                          "--dist",
                          "regular,geometric",
                          "--count",
                          "1K",
                          "--guidelines",
                          "--guideline-count",
                          "5,1K",
                          "--lanes",
                          "all",
                          "--lane-count",
                          "1K",
                          "--sync",
                          "window",
                          "--reps",
                          "15",
                          "--min-reps",
                          "5",
                          "--warmup",
                          "1",
                          "--time-cap",
                          "0.5",
                          "--csv",
                          csv_path,
                          "--json",
                          json_path,
                          "--quiet"};
    int rc = run((int)(sizeof argv / sizeof argv[0]), argv);
    CHECK(rc == 0);
    /* Collective (made on first use): every rank, before rank 0 goes on alone. */
    const convoy__topo *topo;
    CHECK(convoy__comm_topo(MPI_COMM_WORLD, &topo) == MPI_SUCCESS);
    if (rank != 0) return;
    static csv t;
    CHECK(csv_read(csv_path, &t) > 0);
    int c_kind = column(t.head, t.nhead, "kind"), c_sync = column(t.head, t.nhead, "sync"),
        c_root = column(t.head, t.nhead, "root"), c_reps = column(t.head, t.nhead, "reps"),
        c_total = column(t.head, t.nhead, "reps_total"), c_valid = column(t.head, t.nhead, "valid"),
        c_coll = column(t.head, t.nhead, "coll"), c_count = column(t.head, t.nhead, "count");
    CHECK(c_kind >= 0 && c_sync >= 0 && c_root >= 0 && c_total >= 0);
    if (c_kind < 0 || c_sync < 0 || c_root < 0 || c_total < 0) return;
    /* Every collective of the table, native at least; two distributions for Allgatherv. */
    for (size_t i = 0; i < sizeof all_colls / sizeof *all_colls; i++) {
        /* Two distributions for the v-forms. */
        int want = !strcmp(all_colls[i], "allgatherv") || !strcmp(all_colls[i], "gatherv") ||
                           !strcmp(all_colls[i], "scatterv")
                       ? 2
                       : 1;
        int got = csv_count(&t, all_colls[i], "native");
        if (got != want)
            fprintf(stderr, "%d native rows of %s, want %d\n", got, all_colls[i], want);
        CHECK(got == want);
    }
    /* Both sides of every guideline at both counts (Barrier's once). Counts of guidelines
     * that split into p blocks are rounded up to a multiple of p. */
    for (size_t g = 0; g < sizeof all_guidelines / sizeof *all_guidelines; g++) {
        int want = !strcmp(all_guidelines[g], "barrier<=allreduce") ? 1 : 2;
        CHECK(csv_count(&t, all_guidelines[g], "native") == want);
        CHECK(csv_count(&t, all_guidelines[g], "native-mockup") == want);
    }
    /* The lane benchmarks: k = 1 .. ppn. */
    for (int k = 1; k <= topo->max_ppn; k++) {
        char name[16];
        snprintf(name, sizeof name, "k=%d", k);
        CHECK(csv_count(&t, "lane_pattern", name) == 1);
        CHECK(csv_count(&t, "lane_alltoall", name) == 1);
    }
    for (int r = 0; r < t.nrows; r++) {
        char **f = t.rows[r];
        CHECK(!strcmp(f[c_sync], "window"));
        CHECK(!strcmp(f[c_valid], "1"));
        long reps = atol(f[c_reps]), total = atol(f[c_total]);
        CHECK(reps >= 0 && reps <= total && reps <= 15);
        const char *kind = f[c_kind];
        CHECK(!strcmp(kind, "coll") || !strcmp(kind, "guideline") || !strcmp(kind, "lane"));
        int is_rooted = 0;
        for (size_t i = 0; i < sizeof rooted / sizeof *rooted; i++)
            is_rooted |= !strcmp(f[c_coll], rooted[i]);
        if (!strcmp(kind, "coll")) CHECK(!strcmp(f[c_root], is_rooted ? "rotate" : "-"));
        if (!strcmp(f[c_coll], "bcast<=scatter+allgather")) CHECK(atol(f[c_count]) % size == 0);
    }
}

/* The first registered algorithm of a collective. */
static const char *first_algo(const char *coll)
{
    int c = convoy__coll_parse(coll);
    for (int a = 0; a < convoy__nalgos; a++)
        if (convoy__algo_serves(&convoy__algos[a], c)) return convoy__algos[a].name;
    return NULL;
}

/* A guideline's mock-up that computes a wrong result is caught like an algorithm. */
static void test_inject_guideline(void)
{
    char inject[64];
    snprintf(inject, sizeof inject, "native-mockup:%d", size - 1);
    const char *argv[] = {"convoy-bench",
                          "--coll",
                          "none",
                          "--guideline",
                          "allreduce<=reduce+bcast",
                          "--guideline-count",
                          "64",
                          "--reps",
                          "3",
                          "--warmup",
                          "0",
                          "--inject-error",
                          inject,
                          "--quiet"};
    CHECK(run((int)(sizeof argv / sizeof argv[0]), argv) == 1);
    if (rank == 0) {
        const char *msg = convoy_bench_first_mismatch();
        fprintf(stderr, "(expected) %s\n", msg);
        CHECK(strstr(msg, "MISMATCH allreduce<=reduce+bcast") != NULL);
        CHECK(strstr(msg, "'native-mockup'") != NULL);
        CHECK(strstr(msg, "element 32 ") != NULL);
    }
}

static void test_inject(const char *coll, int elems_total)
{
    const char *algo = first_algo(coll);
    CHECK(algo != NULL);
    if (!algo) return;
    int victim = size - 1;
    char inject[128];
    snprintf(inject, sizeof inject, "%s:%d", algo, victim);
    const char *argv[] = {
        "convoy-bench", "--coll", coll,     "--algo", "native,all", "--dist", "regular",
        "--count",      "1K",     "--reps", "3",      "--warmup",   "0",      "--inject-error",
        inject,         "--quiet"};
    int argc = (int)(sizeof argv / sizeof argv[0]);
    CHECK(run(argc, argv) == 1);
    if (rank == 0) {
        const char *msg = convoy_bench_first_mismatch();
        char want[128];
        fprintf(stderr, "(expected) %s\n", msg);
        CHECK(strstr(msg, "MISMATCH") != NULL);
        snprintf(want, sizeof want, "'%s'", algo);
        CHECK(strstr(msg, want) != NULL);
        snprintf(want, sizeof want, "rank %d differs", victim);
        CHECK(strstr(msg, want) != NULL);
        /* The corrupted element is the middle one of the result. */
        snprintf(want, sizeof want, "element %d ", elems_total / 2);
        CHECK(strstr(msg, want) != NULL);
        CHECK(strstr(msg, "1 of") != NULL);
    }
    /* The same corruption unchecked goes unnoticed: --no-check really skips validation. */
    const char *argv2[] = {
        "convoy-bench", "--coll",     coll,     "--algo", "all",      "--dist", "regular",
        "--count",      "1K",         "--reps", "3",      "--warmup", "0",      "--inject-error",
        inject,         "--no-check", "--quiet"};
    CHECK(run((int)(sizeof argv2 / sizeof argv2[0]), argv2) == 0);
    if (rank == 0) CHECK(convoy_bench_first_mismatch()[0] == '\0');
}

/* The forced variants change the settings before each of their calls; the runner makes one
 * untimed call after such a change, so that the timed one is a repeated call. The direct
 * kernel runs only a kept call (Barrier node_flags on one node), so counting its runs tells
 * whether every timed node_flags call was one: reps timed rounds, no warm-up. */
static void test_steady(void)
{
    enum { REPS = 40 };
    char reps[16];
    snprintf(reps, sizeof reps, "%d", REPS);
    const long k0 = convoy__kernel_count();
    const char *argv[] = {"convoy-bench",
                          "--coll",
                          "barrier",
                          "--algo",
                          "native,dissem,node_flags,linear",
                          "--reps",
                          reps,
                          "--min-reps",
                          reps,
                          "--warmup",
                          "0",
                          "--time-cap",
                          "60",
                          "--quiet"};
    CHECK(run((int)(sizeof argv / sizeof *argv), argv) == 0);
    const long runs = convoy__kernel_count() - k0;
    if (runs < REPS)
        fprintf(stderr, "[%d] %ld of %d timed node_flags calls ran in the direct kernel\n", rank,
                runs, REPS);
    CHECK(runs >= REPS);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc >= 3 && !strcmp(argv[1], "csv")) {
        test_csv(argv[2]);
        char path[4096];
        snprintf(path, sizeof path, "%s.auto.csv", argv[2]);
        test_auto_sync(path);
    } else if (argc >= 4 && !strcmp(argv[1], "full")) {
        test_full(argv[2], argv[3]);
    } else if (argc >= 2 && !strcmp(argv[1], "inject")) {
        test_inject("allgatherv", 1024 * size);
        test_inject("allreduce", 1024);
        test_inject_guideline();
    } else if (argc >= 2 && !strcmp(argv[1], "steady")) {
        test_steady();
    } else {
        if (rank == 0)
            fprintf(stderr, "usage: test_bench_e2e csv FILE | full CSV JSON | inject | steady\n");
        failures++;
    }
    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("test_bench_e2e %s: %s\n", argc >= 2 ? argv[1] : "?", all ? "FAILED" : "passed");
    MPI_Finalize();
    return all ? 1 : 0;
}
