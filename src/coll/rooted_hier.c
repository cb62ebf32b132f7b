/* The plan of the hierarchical Gather(v) and Scatter(v) (see rooted_hier.h). */
#include <stdlib.h>
#include <string.h>

#include "coll/rooted_hier.h"

int64_t convoy__rooted_hier_in_node(const convoy__args *a, int l, int q)
{
    int64_t off = 0;
    for (int k = 0; k < q; k++)
        off += convoy__rooted_bytes(a, convoy__topo_rank_at(a->topo, l, k));
    return off;
}

static int64_t node_bytes(const convoy__args *a, int l)
{
    return convoy__rooted_hier_in_node(a, l, a->topo->node_size[l]);
}

int convoy__rooted_hier_plan(const convoy__args *a, convoy__rooted_hier *h)
{
    const convoy__topo *t = a->topo;
    const int N = t->nnodes;
    memset(h, 0, sizeof *h);
    h->R = t->node_of[a->root];
    h->r0 = t->node_rank_of[a->root];
    h->lead = h->r0 % t->ppn;
    h->noff = malloc((size_t)(t->ppn + 1) * sizeof *h->noff);
    h->rc = malloc(2 * (size_t)N * sizeof *h->rc);
    h->map = malloc((size_t)N * sizeof *h->map);
    if (!h->noff || !h->rc || !h->map || convoy__lane_group_topo(&h->lane, N, t->node)) {
        free(h->noff), free(h->rc), free(h->map);
        return CONVOY_ERR_NO_MEM;
    }
    for (int q = 0; q <= t->ppn; q++)
        h->noff[q] = convoy__rooted_hier_in_node(a, t->node, q);
    int64_t pos = 0;
    for (int l = 0; l < N; l++) {
        h->rc[l] = l == h->R ? 0 : node_bytes(a, l);
        h->rc[N + l] = pos;
        pos += h->rc[l];
    }
    const convoy__dtype byte = {1, 1, 0, 1};
    const int g = convoy__rooted_gathers(a);
    convoy__lane_sub_args(a, g ? CONVOY_COLL_GATHERV : CONVOY_COLL_SCATTERV, &h->lane, 1, &h->sub);
    h->sub.rcounts = h->rc;
    h->sub.displs = h->rc + N;
    h->sub.stype = h->sub.rtype = byte;
    h->sub.packed = 1;
    h->sub.counts_local = 0;
    h->sub.root = h->R;
    h->sub.count = h->rc[t->node];
    convoy__lane_map(t, h->r0, h->map);
    h->tmp = t->rank == a->root        ? pos
             : t->node == h->R         ? 0
             : t->node_rank == h->lead ? h->noff[t->ppn]
                                       : convoy__rooted_bytes(a, t->rank);
    return 0;
}

void convoy__rooted_hier_free(convoy__rooted_hier *h)
{
    convoy__topo_free(&h->lane);
    free(h->noff);
    free(h->rc);
    free(h->map);
}

double convoy__rooted_hier_cost(const convoy__args *a, const convoy__machine *m)
{
    const convoy__topo *t = a->topo;
    const int R = t->node_of[a->root];
    const int64_t total = convoy__rooted_total(a), onR = node_bytes(a, R);
    convoy__args b = *a;
    b.machine = *m;
    b.stype = b.rtype = (convoy__dtype){1, 1, 0, 1};
    b.counts_local = 0;
    b.root = R;
    const convoy__machine node = convoy__lane_level(m, 0);
    const int64_t per_node = t->nnodes > 1 ? (total - onR) / (t->nnodes - 1) : 0;
    return (t->max_ppn - 1) * node.alpha + node.beta * (double)(per_node + onR) +
           convoy__lane_cost_equal(&b, CONVOY_COLL_GATHERV, t->nnodes, 1, per_node) +
           m->gamma * 2.0 * (double)(total - onR);
}
