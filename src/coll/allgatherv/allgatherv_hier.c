/*
 * Hierarchical Allgather(v) (papers/004 §3.3, Listing 6): one process per node (its
 * leader, node rank 0) talks between nodes.
 *
 * Idea: every process sends its block to its node's leader (a linear gather straight into
 * the leader's receive buffer); the leaders run an allgatherv of their nodes' data (a
 * registered algorithm on the leaders' group, lane.h); each leader broadcasts the result
 * on its node by a binomial tree. Zero copy: every block is received in its final place
 * and no scratch is allocated; the broadcast sends the receive buffer as maximal runs of
 * adjacent blocks (one run for MPI_Allgather; gaps between Allgatherv blocks stay
 * untouched, as MPI requires).
 *
 * Bytes leaving each node (regular layout, N nodes of n processes, m bytes per process):
 * (N - 1) n m with the ring among leaders, all of it from the leader: the inter-node
 * spread is n : 0 (the `lane` algorithm's contrast).
 *
 * Cost: (n - 1)(alpha_node + beta_node m) + T_allgather(N leaders, n m) +
 * ceil(log2 n)(alpha_node + beta_node P m).
 *
 * Restrictions: none (any layout: the leaders' blocks are one block each where the node's
 * ranks' blocks are adjacent, else one leaders' allgatherv per node rank). Applicable with
 * more than one node and some node of more than one process.
 */
#include <stdlib.h>

#include "coll/lane.h"

static int runs(const convoy__args *a, convoy__region *reg);

/* The node broadcast sends each run of adjacent blocks with a step tag of its own (tags 1 ..
 * runs), so a receive buffer with more runs than step tags is declined. (Gapped buffers were
 * once declined altogether for an MPI_ERR_TRUNCATE with overlapping operations at np 8: the
 * tags of operations in flight collided on split communicators, fixed in the executor's tag
 * layout, commit 09a55f5.) */
int convoy__allgatherv_hier_applicable(const convoy__args *a)
{
    if (!convoy__allgatherv_lane_applicable(a)) return 0;
    convoy__region *reg = malloc((size_t)a->topo->size * sizeof *reg);
    const int n = reg ? runs(a, reg) : -1;
    free(reg);
    return n >= 0 && n < CONVOY_STEP_TAGS - 1;
}

static int by_displ(const void *x, const void *y, void *ctx)
{
    const int64_t *d = ctx;
    int64_t a = d[*(const int *)x], b = d[*(const int *)y];
    return a < b ? -1 : a > b;
}

/* The receive buffer's blocks as maximal runs of adjacent non-empty blocks. */
static int runs(const convoy__args *a, convoy__region *reg)
{
    const int P = a->topo->size;
    int *ord = malloc((size_t)P * sizeof *ord), nreg = 0;
    if (!ord) return -1;
    int k = 0;
    for (int i = 0; i < P; i++)
        if (a->rcounts[i] > 0) ord[k++] = i;
    /* Insertion sort by displacement (P is small next to the data moved). */
    for (int i = 1; i < k; i++)
        for (int j = i; j > 0 && by_displ(&ord[j - 1], &ord[j], (void *)a->displs) > 0; j--) {
            int x = ord[j];
            ord[j] = ord[j - 1];
            ord[j - 1] = x;
        }
    for (int i = 0; i < k; i++) {
        const int r = ord[i];
        if (nreg > 0 && reg[nreg - 1].off + reg[nreg - 1].count * a->rtype.extent ==
                            a->displs[r] * a->rtype.extent)
            reg[nreg - 1].count += a->rcounts[r];
        else
            reg[nreg++] = convoy__agv_block(a, r);
    }
    free(ord);
    return nreg;
}

int convoy__allgatherv_hier(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int N = t->nnodes, n = t->ppn, me = t->node_rank;
    const int own_copy = convoy__agv_copy_own(a, s);
    convoy__lane_deps gathered = {0}, done = {0};
    int *first = malloc((size_t)(N + 1) * sizeof *first);
    int *own = malloc((size_t)t->size * sizeof *own);
    int32_t *map = malloc((size_t)N * sizeof *map);
    convoy__region *reg = malloc((size_t)t->size * sizeof *reg);
    if (!first || !own || !map || !reg) {
        s->err = CONVOY_ERR_NO_MEM;
        goto out;
    }
    convoy__lane_deps_add(&gathered, own_copy, s);
    if (me == 0) {
        for (int q = 1; q < n; q++) {
            const int r = convoy__topo_rank_at(t, t->node, q);
            if (a->rcounts[r] > 0)
                convoy__lane_deps_add(
                    &gathered,
                    convoy__add_recv(s, CONVOY_COMM_NODE, q, 0, convoy__agv_block(a, r), 0, NULL),
                    s);
        }
        /* Leaders: leader l owns its node's blocks in node-rank order. */
        int k = 0;
        for (int l = 0; l < N; l++) {
            first[l] = k;
            for (int q = 0; q < t->node_size[l]; q++)
                own[k++] = convoy__topo_rank_at(t, l, q);
        }
        first[N] = k;
        convoy__lane_map(t, 0, map);
        convoy__lane_agv_group(s, a, N, t->node, map, 1, first, own, gathered.n, gathered.v, &done,
                               NULL);
    } else if (a->rcounts[t->rank] > 0) {
        convoy__lane_deps_add(
            &done, convoy__add_send(s, CONVOY_COMM_NODE, 0, 0, convoy__agv_own(a), 0, NULL), s);
        convoy__lane_deps_add(&done, own_copy, s);
    }
    const int nreg = runs(a, reg);
    if (nreg < 0) s->err = CONVOY_ERR_NO_MEM;
    if (!s->err) {
        convoy__lane_deps out = {0};
        convoy__lane_node_bcast(s, t, 0, reg, nreg, 1, done.n, done.v, &out);
        convoy__lane_deps_free(&out);
    }
    /* Only leaders have children, all alike: a common tag block bound for every rank. */
    s->tag_blocks = 1 + t->max_ppn;
out:
    convoy__lane_deps_free(&gathered);
    convoy__lane_deps_free(&done);
    free(first);
    free(own);
    free(map);
    free(reg);
    return s->err;
}

double convoy__allgatherv_hier_cost(const convoy__args *a, const convoy__machine *m)
{
    const convoy__topo *t = a->topo;
    int64_t total = 0;
    for (int i = 0; i < t->size; i++)
        total += a->rcounts[i];
    const double per = t->size ? (double)total / t->size : 0, bytes = per * a->rtype.size;
    const int n = t->max_ppn;
    convoy__args b = *a;
    b.machine = *m;
    const convoy__machine node = convoy__lane_level(m, 0);
    const double tnode = node.alpha + node.beta * bytes;
    return (n - 1) * tnode +
           convoy__lane_cost_equal(&b, CONVOY_COLL_ALLGATHERV, t->nnodes, 1, (int64_t)(per * n)) +
           convoy__log2_floor(2 * n - 1) * (node.alpha + node.beta * bytes * t->size);
}
