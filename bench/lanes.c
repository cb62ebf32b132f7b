/*
 * The lane benchmarks of papers/004 §2, on Convoy's node definition (real shared-memory
 * nodes, cut into virtual ones by CONVOY_PPN / CONVOY_NODEMAP: convoy__comm_topo), so
 * that they measure what the library's lane algorithms see.
 *
 * Lane pattern (--lanes pattern): every node sends c elements to the next node and
 * receives c from the previous one, spread over k virtual lanes: the first k processes of
 * each node each send c/k of them (the first also the remainder) to the process with the
 * same node rank on the next node, receiving likewise from the previous node. One timed
 * repetition is --lane-iters such exchanges back to back (no barrier between them, as in
 * the paper); repetitions are synchronised like any other (barrier or window). With k
 * physical lanes, k virtual lanes should be up to k times faster than one.
 *
 * Multi-collective (--lanes multi): the communicator split into lane communicators (one
 * per node rank); the first k of them run MPI_Alltoall concurrently, c elements per
 * process in all. A system with k lanes should sustain k concurrent alltoalls at the
 * cost of one.
 *
 * The variants of a cell are the values of k (--lane-k, default 1..ppn), interleaved and
 * reported as algorithms "k=1", "k=2", ...; both need at least two nodes.
 */
#include "bench.h"

#include <stdlib.h>
#include <string.h>

#include "topo/topo.h"

typedef struct lane_ctx {
    const convoy__topo *t;
    int multi;
    int64_t *k;
    int iters;
    MPI_Comm lane; /* multi: my lane communicator */
    int lane_size;
    int64_t block; /* multi: elements per destination */
} lane_ctx;

int bench_lane_cells(const bench_opts *o, int ppn)
{
    (void)ppn;
    return (o->lane_pattern + o->lane_multi) * o->nlane_counts;
}

static void lane_prepare(bench_job *j, int v)
{
    (void)j;
    (void)v;
}

static int pattern_call(bench_job *j, int v)
{
    const lane_ctx *l = j->ctx;
    const convoy__topo *t = l->t;
    bench_cell *c = j->cell;
    int64_t k = l->k[v];
    int nr = t->node_rank;
    if (nr >= k) return MPI_SUCCESS;
    int64_t cnt = c->count / k + (nr == 0 ? c->count % k : 0);
    int to = convoy__topo_rank_at(t, (t->node + 1) % t->nnodes, nr);
    int from = convoy__topo_rank_at(t, (t->node + t->nnodes - 1) % t->nnodes, nr);
    for (int it = 0; it < l->iters; it++) {
        MPI_Request rq[2];
        int n = 0, rc;
        if (from >= 0 &&
            (rc = PMPI_Irecv(c->recvbuf, (int)cnt, c->dtype, from, 91, c->comm, &rq[n++])))
            return rc;
        if (to >= 0 && (rc = PMPI_Isend(c->sendbuf, (int)cnt, c->dtype, to, 91, c->comm, &rq[n++])))
            return rc;
        if ((rc = PMPI_Waitall(n, rq, MPI_STATUSES_IGNORE))) return rc;
    }
    return MPI_SUCCESS;
}

static int multi_call(bench_job *j, int v)
{
    const lane_ctx *l = j->ctx;
    bench_cell *c = j->cell;
    if (l->t->node_rank >= l->k[v]) return MPI_SUCCESS;
    return PMPI_Alltoall(c->sendbuf, (int)l->block, c->dtype, c->recvbuf, (int)l->block, c->dtype,
                         l->lane);
}

static void lane_cell(bench_ctx *x, lane_ctx *l, char **names, int nk, int64_t count)
{
    double t_cell = MPI_Wtime();
    const bench_opts *o = x->o;
    bench_cell c;
    bench_cell_init(&c, x->comm, o, 0);
    c.count = count;
    int64_t elems = count;
    if (l->multi) {
        l->block = count / l->lane_size > 0 ? count / l->lane_size : 1;
        elems = l->block * l->lane_size;
    }
    c.send_elems = c.recv_elems = elems;
    c.bytes = count * c.tsize;
    int st = elems > 0x7fffffff ? 1 : bench_cell_alloc(&c) ? 2 : 0, all_st;
    MPI_Allreduce(&st, &all_st, 1, MPI_INT, MPI_MAX, x->comm);
    if (all_st) {
        if (x->rank == 0)
            fprintf(stderr, "convoy-bench: lane benchmark count %lld %s\n", (long long)count,
                    all_st == 2 ? "failed: out of memory" : "skipped: too large");
        x->failures += all_st == 2;
        bench_cell_free(&c);
        x->cells_done++;
        return;
    }
    for (int64_t i = 0; i < elems; i++)
        bench_store(&c, c.sendbuf, i, bench_data_value(x->rank, i));
    const char *what = l->multi ? "lane_alltoall" : "lane_pattern";
    bench_job j = {.x = x,
                   .what = what,
                   .cell = &c,
                   .nvar = nk,
                   .names = names,
                   .rooted = 0,
                   .prepare = lane_prepare,
                   .call = l->multi ? multi_call : pattern_call,
                   .has_ref = 0,
                   .ref_variant = -1,
                   .ctx = l};
    bench_result *res = calloc((size_t)nk, sizeof *res);
    if (!res) bench_out_of_memory(x);
    bench_run_job(&j, res, t_cell);
    bench_row_ctx rc = {"lane", what, 0, 0, 0, NULL};
    bench_emit(x, &rc, &c, res, nk);
    free(res);
    bench_cell_free(&c);
    x->cells_done++;
}

void bench_run_lanes(bench_ctx *x)
{
    const bench_opts *o = x->o;
    const convoy__topo *t = x->topo;
    if (t->nnodes < 2) {
        if (x->rank == 0)
            fprintf(stderr, "convoy-bench: lane benchmarks need at least two nodes (set "
                            "CONVOY_PPN or CONVOY_NODEMAP for virtual ones); skipped\n");
        x->cells_done += bench_lane_cells(o, t->max_ppn);
        return;
    }
    lane_ctx l = {.t = t, .iters = (int)o->lane_iters};
    int nk = o->nlane_k ? o->nlane_k : t->max_ppn;
    l.k = malloc((size_t)nk * sizeof *l.k);
    char **names = calloc((size_t)nk, sizeof *names);
    if (!l.k || !names) bench_out_of_memory(x);
    for (int i = 0; i < nk; i++) {
        l.k[i] = o->nlane_k ? o->lane_k[i] : i + 1;
        names[i] = malloc(32);
        if (!names[i]) bench_out_of_memory(x);
        snprintf(names[i], 32, "k=%lld", (long long)l.k[i]);
    }
    MPI_Comm_split(x->comm, t->node_rank, t->node, &l.lane);
    MPI_Comm_size(l.lane, &l.lane_size);
    for (int m = 0; m < 2; m++) {
        if (m == 0 ? !o->lane_pattern : !o->lane_multi) continue;
        l.multi = m;
        if (x->rank == 0 && !o->quiet) {
            char title[160];
            if (m)
                snprintf(title, sizeof title,
                         "lane_alltoall: k concurrent Alltoall on lane communicators, count = "
                         "elements per process (%s)",
                         bench_type_names[o->type]);
            else
                snprintf(title, sizeof title,
                         "lane_pattern: count elements per node over k virtual lanes, "
                         "%d exchanges per repetition (%s)",
                         l.iters, bench_type_names[o->type]);
            bench_print_table_head(stdout, title, names, nk);
        }
        for (int i = 0; i < o->nlane_counts; i++)
            lane_cell(x, &l, names, nk, o->lane_counts[i]);
    }
    MPI_Comm_free(&l.lane);
    for (int i = 0; i < nk; i++)
        free(names[i]);
    free(names);
    free(l.k);
}
