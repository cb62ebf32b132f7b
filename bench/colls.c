/*
 * The table of collectives convoy-bench measures (see bench_coll in bench.h): buffers,
 * input data, one call through a given implementation, and the part of the receive buffer
 * that is a rank's result.
 *
 * Input data are small integers, stored in the chosen type, so that every algorithm's
 * result must equal native's bit for bit even for floating types: sums of small integers
 * are exact in any order, products are of 1, -1 and 2 only, and signed char sums stay below
 * 127. A result that differs in any byte is therefore a wrong result, not rounding.
 *
 * Rooted collectives read c->root, which the runner rotates with the repetition (or fixes
 * with --root); every rank holds the root's input for any root, so the rotation costs no
 * setup inside the timed loop.
 */
#define _POSIX_C_SOURCE 200809L

#include "bench.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "check/dist.h"
#include "select/select.h"

const char *const bench_type_names[BT_NTYPES] = {"int", "double", "float", "long", "char"};
const char *const bench_op_names[BO_NOPS] = {"sum", "max", "min", "prod"};

/* --- cells ------------------------------------------------------------------------------ */

void bench_cell_init(bench_cell *c, MPI_Comm comm, const bench_opts *o, int reduces)
{
    memset(c, 0, sizeof *c);
    c->comm = comm;
    MPI_Comm_rank(comm, &c->rank);
    MPI_Comm_size(comm, &c->size);
    c->type = o->type;
    c->op = o->op;
    c->inplace = o->inplace;
    c->seed = o->seed;
    c->dist = "-";
    c->root = o->root < 0 ? 0 : o->root % c->size;
    static const MPI_Op ops[BO_NOPS] = {MPI_SUM, MPI_MAX, MPI_MIN, MPI_PROD};
    c->mop = ops[o->op];
    switch (o->type) {
    case BT_INT: c->dtype = MPI_INT; break;
    case BT_DOUBLE: c->dtype = MPI_DOUBLE; break;
    case BT_FLOAT: c->dtype = MPI_FLOAT; break;
    case BT_LONG: c->dtype = MPI_LONG; break;
    /* MPI allows reductions on signed char but not on MPI_CHAR (a character type). */
    default: c->dtype = reduces ? MPI_SIGNED_CHAR : MPI_CHAR; break;
    }
    int tsize;
    MPI_Type_size(c->dtype, &tsize);
    c->tsize = tsize;
}

/* Stores the integer v as element i of a buffer of the cell's type. */
void bench_store(const bench_cell *c, char *buf, int64_t i, long v)
{
    switch (c->type) {
    case BT_INT: ((int *)buf)[i] = (int)v; break;
    case BT_DOUBLE: ((double *)buf)[i] = (double)v; break;
    case BT_FLOAT: ((float *)buf)[i] = (float)v; break;
    case BT_LONG: ((long *)buf)[i] = v; break;
    default: ((signed char *)buf)[i] = (signed char)v; break;
    }
}

void bench_format_elem(const bench_cell *c, const char *buf, int64_t i, char *out, int len)
{
    switch (c->type) {
    case BT_INT: snprintf(out, (size_t)len, "%d", ((const int *)buf)[i]); break;
    case BT_DOUBLE: snprintf(out, (size_t)len, "%.17g", ((const double *)buf)[i]); break;
    case BT_FLOAT: snprintf(out, (size_t)len, "%.9g", (double)((const float *)buf)[i]); break;
    case BT_LONG: snprintf(out, (size_t)len, "%ld", ((const long *)buf)[i]); break;
    default: snprintf(out, (size_t)len, "%d", ((const signed char *)buf)[i]); break;
    }
}

/* Data-movement input: distinct across ranks and positions (mod 101), so a block placed at
 * the wrong displacement or taken from the wrong rank shows. */
long bench_data_value(int r, int64_t i)
{
    return (long)(((int64_t)r * 131 + i * 7) % 101);
}

/* Reduction input for element i on rank r: exact under the operation in any order. */
long bench_reduce_value(const bench_cell *c, int r, int64_t i)
{
    int64_t k = i;
    switch (c->op) {
    case BO_SUM:
        /* Signed char: at most one per rank, from at most 120 ranks, never overflows. */
        if (c->type == BT_CHAR) return r < 120 ? (long)((r + k) % 2) : 0;
        return (long)((r * 7 + k * 3) % 4);
    case BO_PROD:
        /* Powers of two and signs only: exact in float and double, and integer products
         * wrap identically in any order. */
        if ((r + k) % 8 == 0) return 2;
        return (r + 3 * k) % 5 == 0 ? -1 : 1;
    default:
        if (c->type == BT_CHAR) return (long)((r * 31 + k * 17) % 200) - 100;
        return (long)((r * 31 + k * 17) % 1000) - 500;
    }
}

static void *xmalloc(int64_t bytes)
{
    /* Never malloc(0): a NULL buffer would read as an error and, for MPI, as an argument
     * error on some libraries even when the count is zero. */
    return malloc(bytes > 0 ? (size_t)bytes : 1);
}

int bench_cell_alloc(bench_cell *c)
{
    c->sendbuf = xmalloc(c->send_elems * c->tsize);
    c->recvbuf = xmalloc(c->recv_elems * c->tsize);
    c->aux = xmalloc(c->aux_elems * c->tsize);
    c->expected = xmalloc(c->recv_elems * c->tsize);
    c->res_off = 0;
    c->res_elems = c->recv_elems;
    return c->sendbuf && c->recvbuf && c->aux && c->expected ? 0 : -1;
}

void bench_cell_free(bench_cell *c)
{
    free(c->rcounts);
    free(c->displs);
    free(c->sendbuf);
    free(c->recvbuf);
    free(c->aux);
    free(c->expected);
    c->rcounts = c->displs = NULL;
    c->sendbuf = c->recvbuf = c->aux = c->expected = NULL;
}

/* Fails the setup when n elements do not fit MPI's int counts and displacements. */
static int too_big(const bench_cell *c, int64_t n, char *why, int whylen)
{
    if (n <= INT_MAX) return 0;
    snprintf(why, (size_t)whylen, "%lld elements do not fit MPI's int counts (count %lld)",
             (long long)n, (long long)c->count);
    return 1;
}

static void fill_data(const bench_cell *c, char *buf, int64_t n, int r)
{
    for (int64_t i = 0; i < n; i++)
        bench_store(c, buf, i, bench_data_value(r, i));
}

static void fill_reduce(const bench_cell *c, char *buf, int64_t n, int r)
{
    for (int64_t i = 0; i < n; i++)
        bench_store(c, buf, i, bench_reduce_value(c, r, i));
}

static void copy_elems(const bench_cell *c, char *dst, const char *src, int64_t n)
{
    memcpy(dst, src, (size_t)(n * c->tsize));
}

static const void *in_or_inplace(const bench_cell *c)
{
    return c->inplace ? MPI_IN_PLACE : c->sendbuf;
}

static void no_prepare(bench_cell *c)
{
    (void)c;
}

/* The result is defined at the root only (Gather, Reduce). */
static void result_at_root(bench_cell *c, int64_t n)
{
    c->res_off = 0;
    c->res_elems = c->rank == c->root ? n : 0;
}

/* --- Allgatherv ------------------------------------------------------------------------ */

/* Counts of the distribution c->dist (base c->count) and packed displacements in
 * c->rcounts / c->displs; *total = their sum. Returns 0, 1 (does not fit: why) or -1. */
static int dist_setup(bench_cell *c, int64_t *total_out, char *why, int whylen)
{
    int p = c->size;
    int64_t *counts = malloc((size_t)p * sizeof *counts);
    c->rcounts = malloc((size_t)p * sizeof *c->rcounts);
    c->displs = malloc((size_t)p * sizeof *c->displs);
    if (!counts || !c->rcounts || !c->displs) {
        free(counts);
        return -1;
    }
    if (convoy__dist_counts(c->dist, p, c->count, c->seed, counts) != 0) {
        snprintf(why, (size_t)whylen, "distribution %s failed for p=%d c=%lld", c->dist, p,
                 (long long)c->count);
        free(counts);
        return 1;
    }
    int64_t total = 0;
    for (int r = 0; r < p; r++) {
        /* MPI's displacements are ints: the whole result must be addressable by one. */
        if (counts[r] < 0 || too_big(c, total + counts[r], why, whylen)) {
            free(counts);
            return 1;
        }
        c->rcounts[r] = (int)counts[r];
        c->displs[r] = (int)total;
        total += counts[r];
    }
    free(counts);
    *total_out = total;
    return 0;
}

static int allgatherv_setup(bench_cell *c, char *why, int whylen)
{
    int64_t total;
    int rc = dist_setup(c, &total, why, whylen);
    if (rc) return rc;
    c->send_elems = c->rcounts[c->rank];
    c->recv_elems = total;
    c->bytes = total * c->tsize;
    if (bench_cell_alloc(c)) return -1;
    fill_data(c, c->sendbuf, c->send_elems, c->rank);
    return 0;
}

static void allgatherv_prepare(bench_cell *c)
{
    /* In place, the own block is already in recvbuf; it is the only input. */
    if (c->inplace)
        copy_elems(c, c->recvbuf + (int64_t)c->displs[c->rank] * c->tsize, c->sendbuf,
                   c->send_elems);
}

static int allgatherv_run(bench_cell *c, bench_fn f)
{
    return ((bench_allgatherv_fn)f)(in_or_inplace(c), (int)c->send_elems, c->dtype, c->recvbuf,
                                    c->rcounts, c->displs, c->dtype, c->comm);
}

/* --- Allreduce, Scan, Exscan --------------------------------------------------------------- */

static int allreduce_setup(bench_cell *c, char *why, int whylen)
{
    if (too_big(c, c->count, why, whylen)) return 1;
    c->send_elems = c->recv_elems = c->count;
    c->bytes = c->count * c->tsize;
    if (bench_cell_alloc(c)) return -1;
    fill_reduce(c, c->sendbuf, c->count, c->rank);
    return 0;
}

static void allreduce_prepare(bench_cell *c)
{
    /* In place, recvbuf is the input and the previous call overwrote it with a result. */
    if (c->inplace) copy_elems(c, c->recvbuf, c->sendbuf, c->count);
}

static int allreduce_run(bench_cell *c, bench_fn f)
{
    return ((bench_allreduce_fn)f)(in_or_inplace(c), c->recvbuf, (int)c->count, c->dtype, c->mop,
                                   c->comm);
}

static int exscan_setup(bench_cell *c, char *why, int whylen)
{
    int rc = allreduce_setup(c, why, whylen);
    if (rc == 0 && c->rank == 0) c->res_elems = 0; /* MPI leaves rank 0's result undefined */
    return rc;
}

/* --- Barrier ------------------------------------------------------------------------------- */

static int barrier_setup(bench_cell *c, char *why, int whylen)
{
    (void)why;
    (void)whylen;
    c->send_elems = c->recv_elems = 0;
    c->bytes = 0;
    return bench_cell_alloc(c);
}

static int barrier_run(bench_cell *c, bench_fn f)
{
    return ((bench_barrier_fn)f)(c->comm);
}

/* --- Bcast ------------------------------------------------------------------------------- */

static int bcast_setup(bench_cell *c, char *why, int whylen)
{
    if (too_big(c, c->count, why, whylen)) return 1;
    c->send_elems = c->recv_elems = c->count;
    c->bytes = c->count * c->tsize;
    if (bench_cell_alloc(c)) return -1;
    fill_data(c, c->sendbuf, c->count, c->rank); /* what this rank sends when it is root */
    return 0;
}

static void bcast_prepare(bench_cell *c)
{
    if (c->rank == c->root) copy_elems(c, c->recvbuf, c->sendbuf, c->count);
}

static int bcast_run(bench_cell *c, bench_fn f)
{
    return ((bench_bcast_fn)f)(c->recvbuf, (int)c->count, c->dtype, c->root, c->comm);
}

/* --- Scatter, Gather --------------------------------------------------------------------- */

static int scatter_setup(bench_cell *c, char *why, int whylen)
{
    int64_t all = c->count * c->size;
    if (too_big(c, all, why, whylen)) return 1;
    c->send_elems = all;
    c->recv_elems = c->count;
    c->bytes = c->count * c->tsize;
    if (bench_cell_alloc(c)) return -1;
    fill_data(c, c->sendbuf, all, c->rank);
    return 0;
}

static int scatter_run(bench_cell *c, bench_fn f)
{
    return ((bench_rooted_fn)f)(c->sendbuf, (int)c->count, c->dtype, c->recvbuf, (int)c->count,
                                c->dtype, c->root, c->comm);
}

static int gather_setup(bench_cell *c, char *why, int whylen)
{
    int64_t all = c->count * c->size;
    if (too_big(c, all, why, whylen)) return 1;
    c->send_elems = c->count;
    c->recv_elems = all;
    c->bytes = all * c->tsize;
    if (bench_cell_alloc(c)) return -1;
    fill_data(c, c->sendbuf, c->count, c->rank);
    return 0;
}

static void gather_prepare(bench_cell *c)
{
    result_at_root(c, c->recv_elems);
}

static int gather_run(bench_cell *c, bench_fn f)
{
    return ((bench_rooted_fn)f)(c->sendbuf, (int)c->count, c->dtype, c->recvbuf, (int)c->count,
                                c->dtype, c->root, c->comm);
}

/* --- Gatherv, Scatterv (counts of a distribution, packed in rank order) ------------------- */

static int gatherv_setup(bench_cell *c, char *why, int whylen)
{
    int64_t total;
    int rc = dist_setup(c, &total, why, whylen);
    if (rc) return rc;
    c->send_elems = c->rcounts[c->rank];
    c->recv_elems = total;
    c->bytes = total * c->tsize;
    if (bench_cell_alloc(c)) return -1;
    fill_data(c, c->sendbuf, c->send_elems, c->rank);
    return 0;
}

static int gatherv_run(bench_cell *c, bench_fn f)
{
    return ((bench_gatherv_fn)f)(c->sendbuf, c->rcounts[c->rank], c->dtype, c->recvbuf, c->rcounts,
                                 c->displs, c->dtype, c->root, c->comm);
}

static int scatterv_setup(bench_cell *c, char *why, int whylen)
{
    int64_t total;
    int rc = dist_setup(c, &total, why, whylen);
    if (rc) return rc;
    c->send_elems = total;
    c->recv_elems = c->rcounts[c->rank];
    c->bytes = total * c->tsize;
    if (bench_cell_alloc(c)) return -1;
    fill_data(c, c->sendbuf, total, c->rank);
    return 0;
}

static int scatterv_run(bench_cell *c, bench_fn f)
{
    return ((bench_scatterv_fn)f)(c->sendbuf, c->rcounts, c->displs, c->dtype, c->recvbuf,
                                  c->rcounts[c->rank], c->dtype, c->root, c->comm);
}

/* --- Allgather, Alltoall ------------------------------------------------------------------ */

static int allgather_setup(bench_cell *c, char *why, int whylen)
{
    int rc = gather_setup(c, why, whylen);
    return rc;
}

static void allgather_prepare(bench_cell *c)
{
    if (c->inplace) copy_elems(c, c->recvbuf + c->rank * c->count * c->tsize, c->sendbuf, c->count);
}

static int allgather_run(bench_cell *c, bench_fn f)
{
    return ((bench_a2a_fn)f)(in_or_inplace(c), (int)c->count, c->dtype, c->recvbuf, (int)c->count,
                             c->dtype, c->comm);
}

static int alltoall_setup(bench_cell *c, char *why, int whylen)
{
    int64_t all = c->count * c->size;
    if (too_big(c, all, why, whylen)) return 1;
    c->send_elems = c->recv_elems = all;
    c->bytes = all * c->tsize;
    if (bench_cell_alloc(c)) return -1;
    /* Block j of rank r: element i of it is data(r * p + j, i), unique per pair. */
    for (int j = 0; j < c->size; j++)
        for (int64_t i = 0; i < c->count; i++)
            bench_store(c, c->sendbuf, j * c->count + i,
                        bench_data_value(c->rank * c->size + j, i));
    return 0;
}

static int alltoall_run(bench_cell *c, bench_fn f)
{
    return ((bench_a2a_fn)f)(c->sendbuf, (int)c->count, c->dtype, c->recvbuf, (int)c->count,
                             c->dtype, c->comm);
}

/* --- Reduce, Reduce_scatter_block, Reduce_local ----------------------------------------- */

static void reduce_prepare(bench_cell *c)
{
    result_at_root(c, c->count);
    if (c->inplace && c->rank == c->root) copy_elems(c, c->recvbuf, c->sendbuf, c->count);
}

static int reduce_run(bench_cell *c, bench_fn f)
{
    const void *in = c->inplace && c->rank == c->root ? MPI_IN_PLACE : c->sendbuf;
    return ((bench_reduce_fn)f)(in, c->recvbuf, (int)c->count, c->dtype, c->mop, c->root, c->comm);
}

/* count = the block each rank receives; the input is p blocks. In place the receive buffer
 * holds the input, so it has p blocks too; the result is the first. */
static int rsb_setup(bench_cell *c, char *why, int whylen)
{
    int64_t all = c->count * c->size;
    if (too_big(c, all, why, whylen)) return 1;
    c->send_elems = c->recv_elems = all;
    c->bytes = c->count * c->tsize;
    if (bench_cell_alloc(c)) return -1;
    fill_reduce(c, c->sendbuf, all, c->rank);
    c->res_elems = c->count;
    return 0;
}

static void rsb_prepare(bench_cell *c)
{
    if (c->inplace) copy_elems(c, c->recvbuf, c->sendbuf, c->recv_elems);
}

static int rsb_run(bench_cell *c, bench_fn f)
{
    return ((bench_allreduce_fn)f)(in_or_inplace(c), c->recvbuf, (int)c->count, c->dtype, c->mop,
                                   c->comm);
}

static int reduce_local_setup(bench_cell *c, char *why, int whylen)
{
    if (too_big(c, c->count, why, whylen)) return 1;
    c->send_elems = c->recv_elems = c->aux_elems = c->count;
    c->bytes = c->count * c->tsize;
    if (bench_cell_alloc(c)) return -1;
    fill_reduce(c, c->sendbuf, c->count, c->rank);
    fill_reduce(c, c->aux, c->count, c->rank + c->size); /* the inout operand */
    return 0;
}

static void reduce_local_prepare(bench_cell *c)
{
    copy_elems(c, c->recvbuf, c->aux, c->count);
}

static int reduce_local_run(bench_cell *c, bench_fn f)
{
    return ((bench_reduce_local_fn)f)(c->sendbuf, c->recvbuf, (int)c->count, c->dtype, c->mop);
}

/* --- the table ---------------------------------------------------------------------------- */

#define V BENCH_VECTOR
#define R BENCH_REDUCES
#define ROOT BENCH_ROOTED
#define IP BENCH_INPLACE

const bench_coll bench_colls[] = {
    {"allgatherv", BC_ALLGATHERV, "allgatherv", V | IP, allgatherv_setup, allgatherv_prepare,
     allgatherv_run},
    {"allreduce", BC_ALLREDUCE, "allreduce", R | IP, allreduce_setup, allreduce_prepare,
     allreduce_run},
    {"barrier", BC_BARRIER, "barrier", BENCH_NOCOUNT, barrier_setup, no_prepare, barrier_run},
    {"bcast", BC_BCAST, "bcast", ROOT, bcast_setup, bcast_prepare, bcast_run},
    {"scatter", BC_SCATTER, "scatter", ROOT, scatter_setup, no_prepare, scatter_run},
    {"gather", BC_GATHER, "gather", ROOT, gather_setup, gather_prepare, gather_run},
    /* convoy_Allgather has its own table (the Allgatherv algorithms and its own). */
    {"allgather", BC_ALLGATHER, "allgather", IP, allgather_setup, allgather_prepare, allgather_run},
    {"alltoall", BC_ALLTOALL, "alltoall", 0, alltoall_setup, no_prepare, alltoall_run},
    {"reduce", BC_REDUCE, "reduce", R | ROOT | IP, allreduce_setup, reduce_prepare, reduce_run},
    {"reduce_scatter_block", BC_REDUCE_SCATTER_BLOCK, "reduce_scatter_block", R | IP, rsb_setup,
     rsb_prepare, rsb_run},
    {"scan", BC_SCAN, "scan", R | IP, allreduce_setup, allreduce_prepare, allreduce_run},
    {"exscan", BC_EXSCAN, "exscan", R | IP, exscan_setup, allreduce_prepare, allreduce_run},
    {"reduce_local", BC_REDUCE_LOCAL, NULL, R, reduce_local_setup, reduce_local_prepare,
     reduce_local_run},
    {"gatherv", BC_GATHERV, "gatherv", V | ROOT, gatherv_setup, gather_prepare, gatherv_run},
    {"scatterv", BC_SCATTERV, "scatterv", V | ROOT, scatterv_setup, no_prepare, scatterv_run},
};
const int bench_ncolls = (int)(sizeof bench_colls / sizeof bench_colls[0]);

const bench_coll *bench_coll_find(const char *name)
{
    for (int i = 0; i < bench_ncolls; i++)
        if (strcmp(bench_colls[i].name, name) == 0) return &bench_colls[i];
    return NULL;
}

const bench_coll *bench_coll_by_id(int id)
{
    for (int i = 0; i < bench_ncolls; i++)
        if (bench_colls[i].id == id) return &bench_colls[i];
    return NULL;
}

int bench_coll_convoy(const bench_coll *coll)
{
    return coll->convoy_name ? convoy__coll_parse(coll->convoy_name) : -1;
}

void bench_clear_algo_env(void)
{
    for (int i = 0; i < bench_ncolls; i++) {
        const char *n = bench_colls[i].convoy_name;
        if (!n) continue;
        char env[64];
        int k = snprintf(env, sizeof env, "CONVOY_");
        for (; *n && k < 50; n++)
            env[k++] = (char)toupper((unsigned char)*n);
        snprintf(env + k, sizeof env - (size_t)k, "_ALGO");
        unsetenv(env);
    }
}
