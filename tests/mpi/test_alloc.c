/*
 * Blocking calls allocate nothing in the steady state: this program replaces malloc,
 * calloc and realloc with counting wrappers around glibc's (__libc_malloc, ...) and counts
 * the calls made directly by code of this executable, which holds Convoy (linked
 * statically) and not the MPI library: allocations inside MPI (its own free lists) are
 * the MPI library's business and are counted separately, for information only.
 *
 * For each collective: warm-up calls (the communicator's state, the plan, the schedule
 * cache, the request pool, and the trial's calls where it times the kind), then REPS calls with
 * equal arguments; the check is that Convoy made no allocation in them, and that the results match
 * the native collective's (so that the zero is not that of a call that did nothing). A control case
 * proves the counting works: one call with new arguments (a schedule to build) must allocate.
 *
 * The direct kernel (src/api/kernel.c): where the communicator is one node and the choice
 * is Barrier node_flags or Allreduce node_dissem, every repeated call must have run in it;
 * with CONVOY_KERNEL=0 none (the executor), results equal to native and no allocation
 * either way.
 *
 * The kept one-round message path (src/api/round.c): a one-round Barrier dissem runs
 * there on every repeated call, a several-round one and CONVOY_KERNEL=0 never.
 *
 * Settings are read once (src/api/config.c): setenv and unsetenv between calls must still
 * be seen (the environment snapshot), an in-place edit of a putenv'd string only after
 * convoy_config_refresh().
 */
#define _GNU_SOURCE
#include "common.h"

#include "api/api.h"
#include "api/internal.h"
#include "convoy.h"

#include <stddef.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern char __executable_start, etext;

static long own_allocs, all_allocs;
static int counting;

static void count(const void *caller)
{
    if (!counting) return;
    __atomic_add_fetch(&all_allocs, 1, __ATOMIC_RELAXED);
    if ((const char *)caller >= &__executable_start && (const char *)caller < &etext)
        __atomic_add_fetch(&own_allocs, 1, __ATOMIC_RELAXED);
}

void *malloc(size_t n)
{
    count(__builtin_return_address(0));
    return __libc_malloc(n);
}

void *calloc(size_t k, size_t n)
{
    count(__builtin_return_address(0));
    return __libc_calloc(k, n);
}

void *realloc(void *p, size_t n)
{
    count(__builtin_return_address(0));
    return __libc_realloc(p, n);
}

enum { WARMUP = 5, REPS = 100, MAXP = 64 };

/* One collective, called through Convoy (impl 0) or natively (impl 1); len: how many ints
 * of out hold this rank's result (rooted collectives: root 0). */
typedef struct {
    const char *name;
    void (*call)(int impl, int *in, int *out, int n, MPI_Comm comm);
    int (*len)(int n, int size, int rank);
} coll;

static int len_none(int n, int size, int rank)
{
    (void)n, (void)size, (void)rank;
    return 0;
}

static int len_one(int n, int size, int rank)
{
    (void)size, (void)rank;
    return n;
}

static int len_all(int n, int size, int rank)
{
    (void)rank;
    return n * size;
}

static int len_root_one(int n, int size, int rank)
{
    (void)size;
    return rank == 0 ? n : 0;
}

static int len_root_all(int n, int size, int rank)
{
    return rank == 0 ? n * size : 0;
}

static int len_not_first(int n, int size, int rank)
{
    (void)size;
    return rank == 0 ? 0 : n; /* Exscan: rank 0's result is undefined */
}

/* Counts n for every rank, blocks in reverse order. */
static void vec(int n, MPI_Comm comm, int counts[MAXP], int displs[MAXP])
{
    int size;
    MPI_Comm_size(comm, &size);
    for (int i = 0; i < size && i < MAXP; i++)
        counts[i] = n, displs[i] = (size - 1 - i) * n;
}

static void c_barrier(int impl, int *in, int *out, int n, MPI_Comm comm)
{
    (void)in, (void)out, (void)n;
    if (impl)
        PMPI_Barrier(comm);
    else
        convoy_Barrier(comm);
}

static void c_allreduce(int impl, int *in, int *out, int n, MPI_Comm comm)
{
    if (impl)
        PMPI_Allreduce(in, out, n, MPI_INT, MPI_SUM, comm);
    else
        convoy_Allreduce(in, out, n, MPI_INT, MPI_SUM, comm);
}

static void c_allgather(int impl, int *in, int *out, int n, MPI_Comm comm)
{
    if (impl)
        PMPI_Allgather(in, n, MPI_INT, out, n, MPI_INT, comm);
    else
        convoy_Allgather(in, n, MPI_INT, out, n, MPI_INT, comm);
}

static void c_allgatherv(int impl, int *in, int *out, int n, MPI_Comm comm)
{
    int counts[MAXP], displs[MAXP];
    vec(n, comm, counts, displs);
    if (impl)
        PMPI_Allgatherv(in, n, MPI_INT, out, counts, displs, MPI_INT, comm);
    else
        convoy_Allgatherv(in, n, MPI_INT, out, counts, displs, MPI_INT, comm);
}

static void c_reduce_scatter_block(int impl, int *in, int *out, int n, MPI_Comm comm)
{
    if (impl)
        PMPI_Reduce_scatter_block(in, out, n, MPI_INT, MPI_SUM, comm);
    else
        convoy_Reduce_scatter_block(in, out, n, MPI_INT, MPI_SUM, comm);
}

static void c_reduce_scatter(int impl, int *in, int *out, int n, MPI_Comm comm)
{
    int counts[MAXP], displs[MAXP];
    vec(n, comm, counts, displs);
    if (impl)
        PMPI_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, comm);
    else
        convoy_Reduce_scatter(in, out, counts, MPI_INT, MPI_SUM, comm);
}

static void c_bcast(int impl, int *in, int *out, int n, MPI_Comm comm)
{
    memcpy(out, in, (size_t)n * sizeof *out); /* the root's input, the others' overwritten */
    if (impl)
        PMPI_Bcast(out, n, MPI_INT, 0, comm);
    else
        convoy_Bcast(out, n, MPI_INT, 0, comm);
}

static void c_reduce(int impl, int *in, int *out, int n, MPI_Comm comm)
{
    if (impl)
        PMPI_Reduce(in, out, n, MPI_INT, MPI_SUM, 0, comm);
    else
        convoy_Reduce(in, out, n, MPI_INT, MPI_SUM, 0, comm);
}

static void c_scan(int impl, int *in, int *out, int n, MPI_Comm comm)
{
    if (impl)
        PMPI_Scan(in, out, n, MPI_INT, MPI_SUM, comm);
    else
        convoy_Scan(in, out, n, MPI_INT, MPI_SUM, comm);
}

static void c_exscan(int impl, int *in, int *out, int n, MPI_Comm comm)
{
    if (impl)
        PMPI_Exscan(in, out, n, MPI_INT, MPI_SUM, comm);
    else
        convoy_Exscan(in, out, n, MPI_INT, MPI_SUM, comm);
}

static void c_alltoall(int impl, int *in, int *out, int n, MPI_Comm comm)
{
    if (impl)
        PMPI_Alltoall(in, n, MPI_INT, out, n, MPI_INT, comm);
    else
        convoy_Alltoall(in, n, MPI_INT, out, n, MPI_INT, comm);
}

static void c_gather(int impl, int *in, int *out, int n, MPI_Comm comm)
{
    if (impl)
        PMPI_Gather(in, n, MPI_INT, out, n, MPI_INT, 0, comm);
    else
        convoy_Gather(in, n, MPI_INT, out, n, MPI_INT, 0, comm);
}

static void c_gatherv(int impl, int *in, int *out, int n, MPI_Comm comm)
{
    int counts[MAXP], displs[MAXP];
    vec(n, comm, counts, displs);
    if (impl)
        PMPI_Gatherv(in, n, MPI_INT, out, counts, displs, MPI_INT, 0, comm);
    else
        convoy_Gatherv(in, n, MPI_INT, out, counts, displs, MPI_INT, 0, comm);
}

static void c_scatter(int impl, int *in, int *out, int n, MPI_Comm comm)
{
    if (impl)
        PMPI_Scatter(in, n, MPI_INT, out, n, MPI_INT, 0, comm);
    else
        convoy_Scatter(in, n, MPI_INT, out, n, MPI_INT, 0, comm);
}

static void c_scatterv(int impl, int *in, int *out, int n, MPI_Comm comm)
{
    int counts[MAXP], displs[MAXP];
    vec(n, comm, counts, displs);
    if (impl)
        PMPI_Scatterv(in, counts, displs, MPI_INT, out, n, MPI_INT, 0, comm);
    else
        convoy_Scatterv(in, counts, displs, MPI_INT, out, n, MPI_INT, 0, comm);
}

static const coll colls[] = {{"Barrier", c_barrier, len_none},
                             {"Allreduce", c_allreduce, len_one},
                             {"Allgather", c_allgather, len_all},
                             {"Allgatherv", c_allgatherv, len_all},
                             {"Reduce_scatter_block", c_reduce_scatter_block, len_one},
                             {"Reduce_scatter", c_reduce_scatter, len_one},
                             {"Bcast", c_bcast, len_one},
                             {"Reduce", c_reduce, len_root_one},
                             {"Scan", c_scan, len_one},
                             {"Exscan", c_exscan, len_not_first},
                             {"Alltoall", c_alltoall, len_all},
                             {"Gather", c_gather, len_root_all},
                             {"Gatherv", c_gatherv, len_root_all},
                             {"Scatter", c_scatter, len_one},
                             {"Scatterv", c_scatterv, len_one}};

/* The algorithm the next 1-int Allreduce runs with the current environment. */
static const char *algo_now(const int *in, int *out)
{
    convoy_Allreduce(in, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    const char *a = convoy__comm_last_algo(MPI_COMM_WORLD);
    return a ? a : "(none)";
}

static void check_settings(const int *in, int *out)
{
    char detail[256];
    const char *a;
    setenv("CONVOY_ALLREDUCE_ALGO", "ring", 1);
    a = algo_now(in, out);
    snprintf(detail, sizeof detail, "ran %s", a);
    tc_check(MPI_COMM_WORLD, !strcmp(a, "ring"), "setenv between calls is seen (ring)", detail);
    setenv("CONVOY_ALLREDUCE_ALGO", "rabenseifner", 1);
    a = algo_now(in, out);
    snprintf(detail, sizeof detail, "ran %s", a);
    tc_check(MPI_COMM_WORLD, !strcmp(a, "rabenseifner"), "a changed value is seen (rabenseifner)",
             detail);
    unsetenv("CONVOY_ALLREDUCE_ALGO");
    char def[64];
    snprintf(def, sizeof def, "%s", algo_now(in, out));
    static char var[] = "CONVOY_ALLREDUCE_ALGO=ring\0\0\0\0\0\0\0\0";
    putenv(var);
    a = algo_now(in, out);
    snprintf(detail, sizeof detail, "ran %s", a);
    tc_check(MPI_COMM_WORLD, !strcmp(a, "ring"), "putenv is seen (ring)", detail);
    memcpy(var + strlen("CONVOY_ALLREDUCE_ALGO="), "recdbl", 7); /* edited in place */
    a = algo_now(in, out);
    snprintf(detail, sizeof detail, "ran %s", a);
    tc_check(MPI_COMM_WORLD, !strcmp(a, "ring"),
             "an in-place edit is not seen without convoy_config_refresh()", detail);
    convoy_config_refresh();
    a = algo_now(in, out);
    snprintf(detail, sizeof detail, "ran %s", a);
    tc_check(MPI_COMM_WORLD, !strcmp(a, "recdbl"), "... and is after it (recdbl)", detail);
    unsetenv("CONVOY_ALLREDUCE_ALGO");
    a = algo_now(in, out);
    snprintf(detail, sizeof detail, "ran %s, before %s", a, def);
    tc_check(MPI_COMM_WORLD, !strcmp(a, def), "unsetenv restores the default", detail);
}

/* A repeated call is recognised from its arguments as given (src/api/fast.c): calls that
 * differ from the last in one argument each — buffers, MPI_IN_PLACE, op, root, the content
 * of a count vector at the same address, a derived type freed and made again (its handle
 * may repeat) — must each get the native result. */
static void check_repeats(int rank, int size)
{
    enum { N = 8 };
    int x[N * MAXP], y[N * MAXP], out[N * MAXP], ref[N * MAXP], counts[MAXP], displs[MAXP];
    int bad = 0;
    for (int i = 0; i < N * MAXP; i++)
        x[i] = (int)(tc_hash(11, rank, i) % 1000), y[i] = (int)(tc_hash(13, rank, i) % 1000);
    for (int it = 0; it < 24; it++) {
        const int *in = it % 2 ? y : x;
        const MPI_Op op = it % 4 < 2 ? MPI_SUM : MPI_MAX;
        memset(out, 0, sizeof out);
        if (it % 3 == 2) {
            memcpy(out, in, N * sizeof *out);
            memcpy(ref, in, N * sizeof *ref);
            convoy_Allreduce(MPI_IN_PLACE, out, N, MPI_INT, op, MPI_COMM_WORLD);
            PMPI_Allreduce(MPI_IN_PLACE, ref, N, MPI_INT, op, MPI_COMM_WORLD);
        } else {
            convoy_Allreduce(in, out, N, MPI_INT, op, MPI_COMM_WORLD);
            PMPI_Allreduce(in, ref, N, MPI_INT, op, MPI_COMM_WORLD);
        }
        bad |= memcmp(out, ref, N * sizeof *out) != 0;
        const int root = it % 2 ? size - 1 : 0;
        memcpy(out, in, N * sizeof *out);
        memcpy(ref, in, N * sizeof *ref);
        convoy_Bcast(out, N, MPI_INT, root, MPI_COMM_WORLD);
        PMPI_Bcast(ref, N, MPI_INT, root, MPI_COMM_WORLD);
        bad |= memcmp(out, ref, N * sizeof *out) != 0;
        /* The same vectors' address, another content: rank i's block at (it + i) mod P;
         * every fourth time all counts zero (a kept call with nothing to run, fast.c). */
        for (int i = 0; i < size; i++)
            counts[i] = it % 4 == 3 ? 0 : 1 + (i + it) % 2, displs[i] = N * ((i + it) % size);
        memset(out, 0, sizeof out);
        memset(ref, 0, sizeof ref);
        convoy_Allgatherv(in, counts[rank], MPI_INT, out, counts, displs, MPI_INT, MPI_COMM_WORLD);
        PMPI_Allgatherv(in, counts[rank], MPI_INT, ref, counts, displs, MPI_INT, MPI_COMM_WORLD);
        bad |= memcmp(out, ref, (size_t)N * (size_t)size * sizeof *out) != 0;
        /* A derived type made again each time, of another size every other time. */
        MPI_Datatype t;
        MPI_Type_contiguous(1 + it % 2, MPI_INT, &t);
        MPI_Type_commit(&t);
        memset(out, 0, sizeof out);
        memset(ref, 0, sizeof ref);
        convoy_Allgather(in, 1, t, out, 1, t, MPI_COMM_WORLD);
        PMPI_Allgather(in, 1, t, ref, 1, t, MPI_COMM_WORLD);
        bad |= memcmp(out, ref, (size_t)N * (size_t)size * sizeof *out) != 0;
        MPI_Type_free(&t);
    }
    tc_check(MPI_COMM_WORLD, !bad,
             "repeated calls differing in buffers, MPI_IN_PLACE, op, root, vector content (all "
             "counts zero among them) or a remade derived type each match native",
             "a result differed from native");
}

/* Several calls of one collective stay kept (src/api/fast.c, CONVOY_FAST_WAYS): on one
 * node, Allreduces of 1 and 8 ints alternating both run in the direct kernel when both chose
 * it (with one kept call per collective, each would replace the other and none would); and
 * Bcasts with rotating roots match native. */
static void check_ways(int rank, int size, int one_node, const int *in, int *out, int *ref)
{
    enum { N = 8 };
    const char *algo[2];
    for (int k = 0; k < 2; k++) {
        convoy_Allreduce(in, out, k ? N : 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        algo[k] = convoy__comm_last_algo(MPI_COMM_WORLD);
    }
    const long k0 = convoy__kernel_count();
    int bad = 0;
    for (int i = 0; i < 2 * REPS; i++) {
        const int n = i % 2 ? N : 1;
        memset(out, 0xff, N * sizeof *out);
        convoy_Allreduce(in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        PMPI_Allreduce(in, ref, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        bad |= memcmp(out, ref, (size_t)n * sizeof *out) != 0;
    }
    const long kruns = convoy__kernel_count() - k0;
    const int kernel = one_node && size > 1 && algo[0] && algo[1] &&
                       !strcmp(algo[0], "node_dissem") && !strcmp(algo[1], "node_dissem");
    char detail[256];
    snprintf(detail, sizeof detail, "%ld of %d calls in the direct kernel (%s, %s), results %s",
             kruns, 2 * REPS, algo[0] ? algo[0] : "?", algo[1] ? algo[1] : "?",
             bad ? "DIFFERENT from native" : "equal to native");
    if (rank == 0) printf("alternating Allreduce 1 / %d ints: %s\n", N, detail);
    tc_check(MPI_COMM_WORLD, !bad && (!kernel || kruns == 2 * REPS),
             "alternating Allreduce counts stay kept (one node: both in the kernel)", detail);
    bad = 0;
    for (int i = 0; i < 4 * size; i++) {
        memcpy(out, in, N * sizeof *out);
        memcpy(ref, in, N * sizeof *ref);
        convoy_Bcast(out, N, MPI_INT, i % size, MPI_COMM_WORLD);
        PMPI_Bcast(ref, N, MPI_INT, i % size, MPI_COMM_WORLD);
        bad |= memcmp(out, ref, N * sizeof *out) != 0;
    }
    tc_check(MPI_COMM_WORLD, !bad, "Bcast with rotating roots (kept per root) matches native",
             "a result differed from native");
}

static void check_native(int blocking, const int *in, int *out, int *ref)
{
    setenv("CONVOY_ALLREDUCE_ALGO", "native", 1);
    if (blocking) setenv("CONVOY_NATIVE_BLOCKING", "1", 1);
    for (int i = 0; i < WARMUP; i++)
        c_allreduce(0, (int *)in, out, 8, MPI_COMM_WORLD);
    own_allocs = 0;
    counting = 1;
    for (int i = 0; i < REPS; i++) {
        if (i == REPS - 1) memset(out, 0xff, 8 * sizeof *out);
        c_allreduce(0, (int *)in, out, 8, MPI_COMM_WORLD);
    }
    counting = 0;
    const char *ran = convoy__comm_last_algo(MPI_COMM_WORLD);
    c_allreduce(1, (int *)in, ref, 8, MPI_COMM_WORLD);
    unsetenv("CONVOY_ALLREDUCE_ALGO");
    unsetenv("CONVOY_NATIVE_BLOCKING");
    const int same = !memcmp(out, ref, 8 * sizeof *out);
    char what[128], detail[160];
    snprintf(what, sizeof what, "Allreduce forced native%s: no allocation, result equal",
             blocking ? " (CONVOY_NATIVE_BLOCKING=1)" : "");
    snprintf(detail, sizeof detail, "%ld allocations by Convoy, ran %s, result %s native",
             own_allocs, ran ? ran : "(none)", same ? "equal to" : "DIFFERENT from");
    tc_check(MPI_COMM_WORLD, own_allocs == 0 && ran && !strcmp(ran, "native") && same, what,
             detail);
}

/* CONVOY_KERNEL=0: repeated Barriers and 1-int Allreduces run through the executor (no
 * kernel run), equal to native, with no allocation; unset again, the kernel is back where it
 * applies. */
static void check_kernel_off(const int *in, int *out, int *ref, int one_node)
{
    setenv("CONVOY_KERNEL", "0", 1);
    for (int i = 0; i < WARMUP; i++) {
        convoy_Barrier(MPI_COMM_WORLD);
        convoy_Allreduce(in, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    const long k0 = convoy__kernel_count();
    own_allocs = 0;
    counting = 1;
    for (int i = 0; i < REPS; i++) {
        convoy_Barrier(MPI_COMM_WORLD);
        out[0] = -1;
        convoy_Allreduce(in, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    }
    counting = 0;
    const long off = convoy__kernel_count() - k0;
    PMPI_Allreduce(in, ref, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    char detail[160];
    snprintf(detail, sizeof detail, "%ld kernel runs, %ld allocations, result %s native", off,
             own_allocs, out[0] == ref[0] ? "equal to" : "DIFFERENT from");
    tc_check(MPI_COMM_WORLD, off == 0 && own_allocs == 0 && out[0] == ref[0],
             "CONVOY_KERNEL=0: Barrier and Allreduce 1 int through the executor", detail);
    unsetenv("CONVOY_KERNEL");
    for (int i = 0; i < WARMUP; i++)
        convoy_Allreduce(in, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    const long k1 = convoy__kernel_count();
    convoy_Allreduce(in, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    const char *algo = convoy__comm_last_algo(MPI_COMM_WORLD);
    const int expect = one_node && !strcmp(algo, "node_dissem");
    snprintf(detail, sizeof detail, "%ld kernel runs (%s)", convoy__kernel_count() - k1, algo);
    tc_check(MPI_COMM_WORLD, convoy__kernel_count() - k1 == expect,
             "CONVOY_KERNEL unset again: the kernel runs where it applies", detail);
}

/* The kept message path (src/api/round.c): a repeated Barrier `dissem` with n = P - 1 (one
 * round: every rank sends to all others) runs there on every call, also with a nonblocking
 * Allreduce pending (which it must progress: its result equals native); so does n = 1 on
 * more than two processes (several rounds: a phase per round) and `linear` (two phases on
 * rank 0, one elsewhere), also with the Allreduce pending; with CONVOY_KERNEL=0 none. No
 * allocation in any of them. */
static void check_round(int rank, int size, const int *in, int *out, int *ref)
{
    if (size < 3 || size > 8) return; /* (n = P - 1 within dissem's 1..7; n = 1 has rounds) */
    char n[16], what[160], detail[160];
    snprintf(n, sizeof n, "%d", size - 1);
    const struct {
        const char *algo, *n, *kernel;
        int pending, expect;
    } cases[] = {{"dissem", n, NULL, 0, 1},   {"dissem", n, NULL, 1, 1},
                 {"dissem", "1", NULL, 0, 1}, {"dissem", "1", NULL, 1, 1},
                 {"dissem", n, "0", 0, 0},    {"linear", n, NULL, 0, 1},
                 {"linear", n, NULL, 1, 1},   {"linear", n, "0", 0, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        setenv("CONVOY_BARRIER_ALGO", cases[c].algo, 1);
        setenv("CONVOY_DISSEM_N", cases[c].n, 1);
        if (cases[c].kernel) setenv("CONVOY_KERNEL", cases[c].kernel, 1);
        convoy_request q = CONVOY_REQUEST_NULL;
        out[0] = -1;
        if (cases[c].pending) convoy_Iallreduce(in, out, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q);
        for (int i = 0; i < WARMUP; i++)
            convoy_Barrier(MPI_COMM_WORLD);
        const long r0 = convoy__round_count();
        own_allocs = 0;
        counting = 1;
        for (int i = 0; i < REPS; i++)
            convoy_Barrier(MPI_COMM_WORLD);
        counting = 0;
        const long runs = convoy__round_count() - r0;
        const char *algo = convoy__comm_last_algo(MPI_COMM_WORLD);
        int ok =
            runs == (cases[c].expect ? REPS : 0) && own_allocs == 0 && !strcmp(algo, cases[c].algo);
        if (cases[c].pending) {
            convoy_wait(&q);
            PMPI_Allreduce(in, ref, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
            ok = ok && out[0] == ref[0];
        }
        snprintf(what, sizeof what, "Barrier %s%s%s%s%s: %s message path", cases[c].algo,
                 strcmp(cases[c].algo, "dissem") ? "" : " n = ",
                 strcmp(cases[c].algo, "dissem") ? "" : cases[c].n,
                 cases[c].pending ? ", an Iallreduce pending" : "",
                 cases[c].kernel ? ", CONVOY_KERNEL=0" : "",
                 cases[c].expect ? "all in the" : "none in the");
        snprintf(detail, sizeof detail, "%ld of %d in the message path (%s), %ld allocations%s",
                 runs, REPS, algo, own_allocs,
                 cases[c].pending ? (out[0] == ref[0] ? ", Iallreduce equal to native"
                                                      : ", Iallreduce DIFFERENT from native")
                                  : "");
        if (rank == 0) printf("%s: %s\n", what, detail);
        tc_check(MPI_COMM_WORLD, ok, what, detail);
        unsetenv("CONVOY_KERNEL");
    }
    unsetenv("CONVOY_DISSEM_N");
    unsetenv("CONVOY_BARRIER_ALGO");
    /* Allgather direct (one round with a copy): every repeat there, its result native's. */
    setenv("CONVOY_ALLGATHER_ALGO", "direct", 1);
    for (int i = 0; i < WARMUP; i++)
        convoy_Allgather(in, 3, MPI_INT, out, 3, MPI_INT, MPI_COMM_WORLD);
    const long r0 = convoy__round_count();
    own_allocs = 0;
    counting = 1;
    for (int i = 0; i < REPS; i++) {
        if (i == REPS - 1) memset(out, 0xff, (size_t)(3 * size) * sizeof *out);
        convoy_Allgather(in, 3, MPI_INT, out, 3, MPI_INT, MPI_COMM_WORLD);
    }
    counting = 0;
    const long runs = convoy__round_count() - r0;
    const char *algo = convoy__comm_last_algo(MPI_COMM_WORLD);
    PMPI_Allgather(in, 3, MPI_INT, ref, 3, MPI_INT, MPI_COMM_WORLD);
    const int same = !memcmp(out, ref, (size_t)(3 * size) * sizeof *out);
    snprintf(detail, sizeof detail, "%ld of %d in the one-round path (%s), %ld allocations, %s",
             runs, REPS, algo, own_allocs, same ? "equal to native" : "DIFFERENT from native");
    if (rank == 0) printf("Allgather direct 3 ints: %s\n", detail);
    tc_check(MPI_COMM_WORLD, runs == REPS && own_allocs == 0 && same && !strcmp(algo, "direct"),
             "Allgather direct of 3 ints: all in the one-round path, equal to native", detail);
    unsetenv("CONVOY_ALLGATHER_ALGO");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tc_guard_init(120);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int counts[] = {1, 8, 255};
    const convoy__topo *topo;
    int one_node = 0, kernel_cells = 0;
    if (convoy__comm_topo(MPI_COMM_WORLD, &topo) == MPI_SUCCESS) one_node = topo->nnodes == 1;
    const int cap = 255 * (size < MAXP ? size : MAXP);
    int *in = calloc((size_t)cap, sizeof *in), *out = calloc((size_t)cap, sizeof *out);
    int *ref = calloc((size_t)cap, sizeof *ref);
    for (int i = 0; i < cap; i++)
        in[i] = (int)(tc_hash(7, rank, i) % 1000);
    for (size_t c = 0; c < sizeof colls / sizeof *colls && size <= MAXP; c++) {
        for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
            const int n = counts[k], len = colls[c].len(n, size, rank);
            char what[128], detail[256] = "";
            snprintf(what, sizeof what, "%s of %d ints: no allocation in %d calls", colls[c].name,
                     n, REPS);
            /* (WARMUP calls after the trial's timed calls, which plan in full, where it
             * times the kind: src/api/trial.c.) */
            for (int i = 0, warm = 0; warm < WARMUP && i < WARMUP + CONVOY_TRIAL_CALLS_MAX; i++) {
                colls[c].call(0, in, out, n, MPI_COMM_WORLD);
                warm = convoy__comm_trials_open(MPI_COMM_WORLD) ? 0 : warm + 1;
            }
            own_allocs = all_allocs = 0;
            const long k0 = convoy__kernel_count();
            counting = 1;
            for (int i = 0; i < REPS; i++) {
                /* The last call must make the result itself (not find the last one's). */
                if (i == REPS - 1) memset(out, 0xff, (size_t)cap * sizeof *out);
                colls[c].call(0, in, out, n, MPI_COMM_WORLD);
            }
            counting = 0;
            const long kruns = convoy__kernel_count() - k0;
            const char *algo = convoy__comm_last_algo(MPI_COMM_WORLD);
            colls[c].call(1, in, ref, n, MPI_COMM_WORLD);
            const int same = memcmp(out, ref, (size_t)len * sizeof *out) == 0;
            snprintf(detail, sizeof detail,
                     "%ld allocations by Convoy (%ld with the MPI library's), result %s native",
                     own_allocs, all_allocs, same ? "equal to" : "DIFFERENT from");
            if (rank == 0)
                printf("%-22s %3d ints: %ld allocations by Convoy, %ld in all (%s; %ld in the "
                       "direct kernel)\n",
                       colls[c].name, n, own_allocs, all_allocs, algo, kruns);
            tc_check(MPI_COMM_WORLD, own_allocs == 0 && same, what, detail);
            if (one_node && (!strcmp(algo, "node_flags") || !strcmp(algo, "node_dissem"))) {
                kernel_cells++;
                snprintf(what, sizeof what, "%s of %d ints (%s, one node): all %d in the kernel",
                         colls[c].name, n, algo, REPS);
                snprintf(detail, sizeof detail, "%ld of %d calls ran in the direct kernel", kruns,
                         REPS);
                tc_check(MPI_COMM_WORLD, kruns == REPS, what, detail);
            }
        }
    }
    if (one_node && size > 1 && rank == 0)
        printf("%d cells on one node chose node_flags or node_dissem\n", kernel_cells);
    check_kernel_off(in, out, ref, one_node);
    check_round(rank, size, in, out, ref);
    check_settings(in, out);
    check_repeats(rank, size);
    check_ways(rank, size, one_node, in, out, ref);
    /* Forced to the MPI library, through its nonblocking collective and under
     * CONVOY_NATIVE_BLOCKING=1 its blocking one: kept like Convoy's (no allocation). */
    for (int blocking = 0; blocking < 2; blocking++)
        check_native(blocking, in, out, ref);
    /* Control: new arguments need a new schedule, which allocates: the counter sees it. */
    own_allocs = 0;
    counting = 1;
    convoy_Allreduce(in, out, 3, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    counting = 0;
    tc_check(MPI_COMM_WORLD, own_allocs > 0, "control: a call with new arguments allocates",
             "no allocation counted: the counter does not work");
    free(in);
    free(out);
    free(ref);
    int rc = tc_finish();
    MPI_Finalize();
    return rc;
}
