/*
 * The collectives convoy-bench measures: buffers, input data, and the native and Convoy
 * calls for each.
 *
 * Input data are small integers, stored in the chosen type, so that every algorithm's
 * result must equal native's bit for bit even for floating types: sums of small integers
 * are exact in any order, products are of 1, -1 and 2 only, and signed char sums stay below
 * 127. A result that differs in any byte is therefore a wrong result, not rounding.
 *
 * The native collective is called through PMPI_*: convoy-bench links Convoy statically,
 * and if that archive ever carries the MPI_* interposition wrappers the linker could bind
 * MPI_Allgatherv to Convoy itself, silently comparing Convoy with Convoy.
 */
#include "bench.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "check/dist.h"
#include "coll/coll.h"
#include "convoy.h"

const char *const bench_type_names[BT_NTYPES] = {"int", "double", "float", "long", "char"};
const char *const bench_op_names[BO_NOPS] = {"sum", "max", "min", "prod"};

/* Stores the integer v as element i of a buffer of the cell's type. */
static void store(const bench_cell *c, char *buf, int64_t i, long v)
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

/* Reduction input for element i on rank r: exact under the operation in any order. */
static long reduce_value(const bench_cell *c, int r, int64_t i)
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

static int alloc_buffers(bench_cell *c)
{
    c->sendbuf = xmalloc(c->send_elems * c->tsize);
    c->recvbuf = xmalloc(c->recv_elems * c->tsize);
    c->expected = xmalloc(c->recv_elems * c->tsize);
    return c->sendbuf && c->recvbuf && c->expected ? 0 : -1;
}

void bench_cell_free(bench_cell *c)
{
    free(c->rcounts);
    free(c->displs);
    free(c->sendbuf);
    free(c->recvbuf);
    free(c->expected);
    c->rcounts = c->displs = NULL;
    c->sendbuf = c->recvbuf = c->expected = NULL;
}

/* --- Allgatherv ------------------------------------------------------------------------ */

static int allgatherv_setup(bench_cell *c, char *why, int whylen)
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
        if (counts[r] < 0 || total + counts[r] > INT_MAX) {
            snprintf(why, (size_t)whylen, "%lld elements in all do not fit MPI's int "
                     "displacements", (long long)(total + counts[r]));
            free(counts);
            return 1;
        }
        c->rcounts[r] = (int)counts[r];
        c->displs[r] = (int)total;
        total += counts[r];
    }
    free(counts);
    c->send_elems = c->rcounts[c->rank];
    c->recv_elems = total;
    c->bytes = total * c->tsize;
    if (alloc_buffers(c)) return -1;
    /* Every element is distinct across ranks and positions (mod 101), so a block placed at
     * the wrong displacement or taken from the wrong rank shows. */
    for (int64_t i = 0; i < c->send_elems; i++)
        store(c, c->sendbuf, i, (long)(((int64_t)c->rank * 131 + i * 7) % 101));
    return 0;
}

static void allgatherv_prepare(bench_cell *c)
{
    /* In place, the own block is already in recvbuf; it is the only input. */
    if (c->inplace)
        memcpy(c->recvbuf + (int64_t)c->displs[c->rank] * c->tsize, c->sendbuf,
               (size_t)(c->send_elems * c->tsize));
}

static int allgatherv_native(bench_cell *c)
{
    return PMPI_Allgatherv(c->inplace ? MPI_IN_PLACE : c->sendbuf, (int)c->send_elems,
                           c->dtype, c->recvbuf, c->rcounts, c->displs, c->dtype, c->comm);
}

static int allgatherv_convoy(bench_cell *c)
{
    return convoy_Allgatherv(c->inplace ? MPI_IN_PLACE : c->sendbuf, (int)c->send_elems,
                             c->dtype, c->recvbuf, c->rcounts, c->displs, c->dtype, c->comm);
}

/* --- Allreduce ------------------------------------------------------------------------- */

static int allreduce_setup(bench_cell *c, char *why, int whylen)
{
    if (c->count > INT_MAX) {
        snprintf(why, (size_t)whylen, "count %lld does not fit MPI's int count",
                 (long long)c->count);
        return 1;
    }
    c->send_elems = c->recv_elems = c->count;
    c->bytes = c->count * c->tsize;
    if (alloc_buffers(c)) return -1;
    for (int64_t i = 0; i < c->count; i++) store(c, c->sendbuf, i, reduce_value(c, c->rank, i));
    return 0;
}

static void allreduce_prepare(bench_cell *c)
{
    /* In place, recvbuf is the input and the previous call overwrote it with a result. */
    if (c->inplace) memcpy(c->recvbuf, c->sendbuf, (size_t)(c->count * c->tsize));
}

static int allreduce_native(bench_cell *c)
{
    return PMPI_Allreduce(c->inplace ? MPI_IN_PLACE : c->sendbuf, c->recvbuf, (int)c->count,
                          c->dtype, c->mop, c->comm);
}

static int allreduce_convoy(bench_cell *c)
{
    return convoy_Allreduce(c->inplace ? MPI_IN_PLACE : c->sendbuf, c->recvbuf, (int)c->count,
                            c->dtype, c->mop, c->comm);
}

const bench_coll bench_colls[] = {
    {"allgatherv", CONVOY_COLL_ALLGATHERV, 1, 0, allgatherv_setup, allgatherv_prepare,
     allgatherv_native, allgatherv_convoy},
    {"allreduce", CONVOY_COLL_ALLREDUCE, 0, 1, allreduce_setup, allreduce_prepare,
     allreduce_native, allreduce_convoy},
};
const int bench_ncolls = (int)(sizeof bench_colls / sizeof bench_colls[0]);

const bench_coll *bench_coll_find(const char *name)
{
    for (int i = 0; i < bench_ncolls; i++)
        if (strcmp(bench_colls[i].name, name) == 0) return &bench_colls[i];
    return NULL;
}
