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

/* What a rank receives, by collective. */
typedef enum {
    R_NONE,       /* barrier, reduce_local: nothing from other processes */
    R_OTHERS_V,   /* allgatherv: every block but its own */
    R_OTHERS,     /* allgather, alltoall: size - 1 blocks of count */
    R_RESULT,     /* allreduce, reduce_scatter_block: its result of count */
    R_NOT_FIRST,  /* scan, exscan: count, but rank 0 */
    R_NOT_ROOT,   /* bcast, scatter: count, but the root */
    R_NOT_ROOT_V, /* scatterv: its block, but the root */
    R_ROOT,       /* reduce: count, the root only */
    R_ROOT_ALL,   /* gather: size - 1 blocks of count, the root only */
    R_ROOT_V,     /* gatherv: every block but its own, the root only */
} receives_kind;

static receives_kind kind_of(const char *coll)
{
    static const struct {
        const char *name;
        receives_kind k;
    } table[] = {{"allgatherv", R_OTHERS_V},
                 {"allgather", R_OTHERS},
                 {"alltoall", R_OTHERS},
                 {"allreduce", R_RESULT},
                 {"reduce_scatter_block", R_RESULT},
                 {"scan", R_NOT_FIRST},
                 {"exscan", R_NOT_FIRST},
                 {"bcast", R_NOT_ROOT},
                 {"scatter", R_NOT_ROOT},
                 {"scatterv", R_NOT_ROOT_V},
                 {"reduce", R_ROOT},
                 {"gather", R_ROOT_ALL},
                 {"gatherv", R_ROOT_V}};
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(coll, table[i].name) == 0) return table[i].k;
    return R_NONE;
}

/* Bytes rank `rank` must copy into its result from the others; total: the elements of
 * all of rcounts (v-collectives). */
static double receives(receives_kind k, int size, double u, double n, const int *rcounts,
                       double total, int rank, int root)
{
    switch (k) {
    case R_OTHERS_V: return (total - rcounts[rank]) * u;
    case R_OTHERS: return (size - 1) * n * u;
    case R_RESULT: return n * u;
    case R_NOT_FIRST: return rank > 0 ? n * u : 0;
    case R_NOT_ROOT: return rank != root ? n * u : 0;
    case R_NOT_ROOT_V: return rank != root ? rcounts[rank] * u : 0;
    case R_ROOT: return rank == root ? n * u : 0;
    case R_ROOT_ALL: return rank == root ? (size - 1) * n * u : 0;
    case R_ROOT_V: return rank == root ? (total - rcounts[root]) * u : 0;
    case R_NONE: break;
    }
    return 0;
}

/* The bound's bytes for one root; sum and procs: scratch of size entries. */
static double bound_at(receives_kind k, int size, double u, double n, const int *rcounts,
                       double total, int root, const int *host_of, const int *cores_of, double *sum,
                       int *procs)
{
    double t = 0;
    for (int h = 0; h < size; h++)
        sum[h] = 0, procs[h] = 0;
    for (int i = 0; i < size; i++) {
        const double r = receives(k, size, u, n, rcounts, total, i, root);
        if (r > t) t = r;
        sum[host_of[i]] += r;
        procs[host_of[i]]++;
    }
    for (int i = 0; i < size; i++) {
        const int h = host_of[i];
        if (procs[h] == 0) continue; /* (this host is done) */
        const int c = cores_of[i] > 0 && cores_of[i] < procs[h] ? cores_of[i] : procs[h];
        if (sum[h] / c > t) t = sum[h] / c;
        procs[h] = 0;
    }
    return t;
}

double bench_bound_time(const char *coll, int size, int64_t tsize, int64_t count,
                        const int *rcounts, int root, const int *host_of, const int *cores_of,
                        double bw)
{
    receives_kind k = kind_of(coll);
    if ((k == R_OTHERS_V || k == R_NOT_ROOT_V || k == R_ROOT_V) && !rcounts) k = R_NONE;
    if (bw <= 0 || size < 2 || k == R_NONE) return 0;
    const int rooted =
        k == R_NOT_ROOT || k == R_NOT_ROOT_V || k == R_ROOT || k == R_ROOT_ALL || k == R_ROOT_V;
    double total = 0;
    if (rcounts)
        for (int i = 0; i < size; i++)
            total += rcounts[i];
    double *sum = malloc((size_t)size * sizeof *sum);
    int *procs = malloc((size_t)size * sizeof *procs);
    double best = 0;
    if (sum && procs) {
        const int first = root < 0 ? 0 : root, last = rooted && root < 0 ? size - 1 : first;
        for (int r = first; r <= last; r++) {
            const double t = bound_at(k, size, (double)tsize, (double)count, rcounts, total, r,
                                      host_of, cores_of, sum, procs);
            if (r == first || t < best) best = t;
        }
    }
    free(sum);
    free(procs);
    return best / bw;
}
