/*
 * The single-copy bound: see bound.h.
 *
 * Each process must end with its result, and what of it comes from other processes must be
 * copied at least once (by the process itself or by a peer, through a segment or a kernel
 * copy: on one host the copying takes a core either way). A process copies with one core at
 * a time, and a host's processes together with no more cores than it has: so no algorithm
 * finishes before the neediest process's bytes at one core's rate, nor before any host's
 * processes' bytes at its cores' rate. With every process receiving alike (the regular
 * distribution, Allreduce) the second is the processes per host times one's bytes over the
 * cores they share; with a few large blocks (broadcast, spike) it is the sum, which is less
 * than the neediest process's bytes times the processes (convoy-bench's first formula, which
 * put those cells' bound up to 4/3 too high at np 4 on one host, and a rooted collective's up
 * to the processes over the cores).
 */
#include "bound.h"

#include <stdlib.h>
#include <string.h>

static int is(const char *coll, const char *name)
{
    return strcmp(coll, name) == 0;
}

double bench_receives(const char *coll, int size, int64_t tsize, int64_t count, const int *rcounts,
                      int rank, int root)
{
    const double u = (double)tsize, n = (double)count;
    double total = 0; /* v-collectives: the elements of every rank */
    if (rcounts)
        for (int i = 0; i < size; i++)
            total += rcounts[i];
    if (size < 2) return 0;
    if (is(coll, "allgatherv")) return rcounts ? (total - rcounts[rank]) * u : 0;
    if (is(coll, "allgather") || is(coll, "alltoall")) return (size - 1) * n * u;
    if (is(coll, "allreduce") || is(coll, "reduce_scatter_block")) return n * u;
    if (is(coll, "scan") || is(coll, "exscan")) return rank > 0 ? n * u : 0;
    if (is(coll, "bcast") || is(coll, "scatter")) return rank != root ? n * u : 0;
    if (is(coll, "scatterv")) return rcounts && rank != root ? rcounts[rank] * u : 0;
    if (is(coll, "gather")) return rank == root ? (size - 1) * n * u : 0;
    if (is(coll, "gatherv")) return rcounts && rank == root ? (total - rcounts[root]) * u : 0;
    if (is(coll, "reduce")) return rank == root ? n * u : 0;
    return 0; /* barrier, reduce_local: nothing from other processes */
}

/* The bound for one root; sum and procs: scratch of size entries. */
static double bound_at(const char *coll, int size, int64_t tsize, int64_t count, const int *rcounts,
                       int root, const int *host_of, const int *cores_of, double *sum, int *procs)
{
    double t = 0;
    for (int h = 0; h < size; h++)
        sum[h] = 0, procs[h] = 0;
    for (int i = 0; i < size; i++) {
        const double r = bench_receives(coll, size, tsize, count, rcounts, i, root);
        if (r > t) t = r;
        sum[host_of[i]] += r;
        procs[host_of[i]]++;
    }
    for (int i = 0; i < size; i++) {
        const int h = host_of[i];
        if (procs[h] == 0) continue; /* (this host is done) */
        const int k = cores_of[i] > 0 && cores_of[i] < procs[h] ? cores_of[i] : procs[h];
        if (sum[h] / k > t) t = sum[h] / k;
        procs[h] = 0;
    }
    return t;
}

double bench_bound_time(const char *coll, int size, int64_t tsize, int64_t count,
                        const int *rcounts, int root, const int *host_of, const int *cores_of,
                        double bw)
{
    if (bw <= 0 || size < 1) return 0;
    const int rooted = is(coll, "bcast") || is(coll, "scatter") || is(coll, "scatterv") ||
                       is(coll, "gather") || is(coll, "gatherv") || is(coll, "reduce");
    double *sum = malloc((size_t)size * sizeof *sum);
    int *procs = malloc((size_t)size * sizeof *procs);
    double best = 0;
    if (sum && procs) {
        const int first = root < 0 ? 0 : root, last = rooted && root < 0 ? size - 1 : first;
        for (int r = first; r <= last; r++) {
            const double t =
                bound_at(coll, size, tsize, count, rcounts, r, host_of, cores_of, sum, procs);
            if (r == first || t < best) best = t;
        }
    }
    free(sum);
    free(procs);
    return best / bw;
}
