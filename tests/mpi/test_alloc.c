/*
 * Blocking calls allocate nothing in the steady state: this program replaces malloc,
 * calloc and realloc with counting wrappers around glibc's (__libc_malloc, ...) and counts
 * the calls made directly by code of this executable, which holds Convoy (linked
 * statically) and not the MPI library: allocations inside MPI (its own free lists) are
 * the MPI library's business and are counted separately, for information only.
 *
 * For each collective: warm-up calls (the communicator's state, the plan, the schedule
 * cache, the request pool), then REPS calls with equal arguments; the check is that
 * Convoy made no allocation in them, and that the results match the native collective's
 * (so that the zero is not that of a call that did nothing). A control case proves the
 * counting works: one call with new arguments (a schedule to build) must allocate.
 *
 * Settings are read once (src/api/config.c): setenv and unsetenv between calls must still
 * be seen (the environment snapshot), an in-place edit of a putenv'd string only after
 * convoy_config_refresh().
 */
#define _GNU_SOURCE
#include "common.h"

#include "api/api.h"
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

enum { WARMUP = 20, REPS = 1000 };

/* One collective, called through Convoy (impl 0) or natively (impl 1). */
typedef struct {
    const char *name;
    void (*call)(int impl, int *in, int *out, int n, MPI_Comm comm);
} coll;

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
    int size;
    MPI_Comm_size(comm, &size);
    int counts[64], displs[64];
    for (int i = 0; i < size && i < 64; i++)
        counts[i] = n, displs[i] = (size - 1 - i) * n; /* blocks in reverse order */
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

static const coll colls[] = {{"Barrier", c_barrier},
                             {"Allreduce", c_allreduce},
                             {"Allgather", c_allgather},
                             {"Allgatherv", c_allgatherv},
                             {"Reduce_scatter_block", c_reduce_scatter_block}};

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

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    tc_guard_init(120);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int counts[] = {1, 8, 255};
    const int cap = 255 * (size < 64 ? size : 64);
    int *in = calloc((size_t)cap, sizeof *in), *out = calloc((size_t)cap, sizeof *out);
    int *ref = calloc((size_t)cap, sizeof *ref);
    for (int i = 0; i < cap; i++)
        in[i] = (int)(tc_hash(7, rank, i) % 1000);
    for (size_t c = 0; c < sizeof colls / sizeof *colls && size <= 64; c++) {
        for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
            const int n = counts[k];
            char what[128], detail[256] = "";
            snprintf(what, sizeof what, "%s of %d ints: no allocation in %d calls", colls[c].name,
                     n, REPS);
            for (int i = 0; i < WARMUP; i++)
                colls[c].call(0, in, out, n, MPI_COMM_WORLD);
            own_allocs = all_allocs = 0;
            counting = 1;
            for (int i = 0; i < REPS; i++)
                colls[c].call(0, in, out, n, MPI_COMM_WORLD);
            counting = 0;
            colls[c].call(1, in, ref, n, MPI_COMM_WORLD);
            int same = memcmp(out, ref, (size_t)n * (size_t)size * sizeof *out) == 0 ||
                       !strcmp(colls[c].name, "Barrier");
            if (!strcmp(colls[c].name, "Allreduce") ||
                !strcmp(colls[c].name, "Reduce_scatter_block"))
                same = memcmp(out, ref, (size_t)n * sizeof *out) == 0;
            snprintf(detail, sizeof detail,
                     "%ld allocations by Convoy (%ld with the MPI library's), result %s native",
                     own_allocs, all_allocs, same ? "equal to" : "DIFFERENT from");
            if (rank == 0)
                printf("%-22s %3d ints: %ld allocations by Convoy, %ld in all (%s)\n",
                       colls[c].name, n, own_allocs, all_allocs,
                       convoy__comm_last_algo(MPI_COMM_WORLD));
            tc_check(MPI_COMM_WORLD, own_allocs == 0 && same, what, detail);
        }
    }
    check_settings(in, out);
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
