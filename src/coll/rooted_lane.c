/*
 * The lane layout the full-lane Gather(v) and Scatter(v) share (gather_lane.c,
 * scatter_lane.c): which bytes travel in which virtual lane, and where they are packed.
 */
#include <stdlib.h>

#include "coll/rooted_lane.h"

int convoy__rooted_lane_plan(const convoy__args *a, convoy__rooted_lane *p)
{
    const convoy__topo *t = a->topo;
    const int N = t->nnodes, L = convoy__lane_count(t);
    p->N = N;
    p->L = L;
    p->R = t->node_of[a->root];
    p->nR = t->node_size[p->R];
    p->r0 = t->node_rank_of[a->root];
    p->base = malloc((size_t)(L + 1) * sizeof *p->base);
    p->loff = malloc((size_t)L * (N + 1) * sizeof *p->loff);
    p->map = malloc((size_t)N * sizeof *p->map);
    if (!p->base || !p->loff || !p->map) {
        convoy__rooted_lane_free(p);
        return CONVOY_ERR_NO_MEM;
    }
    p->base[0] = 0;
    for (int j = 0; j < L; j++) {
        int64_t *o = p->loff + (size_t)j * (N + 1);
        o[0] = 0;
        for (int l = 0; l < N; l++) {
            const int r = l != p->R && t->node_size[l] > j ? convoy__topo_rank_at(t, l, j) : -1;
            o[l + 1] = o[l] + (r >= 0 ? convoy__rooted_bytes(a, r) : 0);
        }
        p->base[j + 1] = p->base[j] + o[N];
    }
    /* Packed own block first (processes off the root node), then the lanes (root node). */
    p->own = t->node != p->R ? convoy__rooted_bytes(a, t->rank) : 0;
    p->tmp = p->own + (t->node == p->R ? p->base[L] : 0);
    return 0;
}

void convoy__rooted_lane_free(convoy__rooted_lane *p)
{
    free(p->base);
    free(p->loff);
    free(p->map);
    p->base = p->loff = NULL;
    p->map = NULL;
}

void convoy__rooted_lane_child(const convoy__args *a, const convoy__rooted_lane *p, int j,
                               const convoy__topo *lane, int64_t *rc, convoy__args *sub)
{
    const convoy__topo *t = a->topo;
    const int64_t *o = p->loff + (size_t)j * (p->N + 1);
    const convoy__dtype byte = {1, 1, 0, 1};
    convoy__lane_sub_args(a,
                          a->coll == CONVOY_COLL_GATHER    ? CONVOY_COLL_GATHERV
                          : a->coll == CONVOY_COLL_SCATTER ? CONVOY_COLL_SCATTERV
                                                           : a->coll,
                          lane, t->max_ppn, sub);
    for (int l = 0; l < p->N; l++) {
        rc[l] = o[l + 1] - o[l];
        rc[p->N + l] = o[l];
    }
    sub->rcounts = rc;
    sub->displs = rc + p->N;
    sub->stype = sub->rtype = byte;
    sub->packed = 1;
    sub->counts_local = 0;
    sub->root = p->R;
    sub->count = rc[t->node];
}

convoy__region convoy__rooted_lane_area(const convoy__rooted_lane *p, int j)
{
    return convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, p->own + p->base[j],
                       p->base[j + 1] - p->base[j]);
}

convoy__region convoy__rooted_lane_piece(const convoy__rooted_lane *p, int j, int l)
{
    const int64_t *o = p->loff + (size_t)j * (p->N + 1);
    return convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, p->own + p->base[j] + o[l], o[l + 1] - o[l]);
}

double convoy__rooted_lane_cost(const convoy__args *a, const convoy__machine *m)
{
    const convoy__topo *t = a->topo;
    const int R = t->node_of[a->root], nR = t->node_size[R];
    /* In bytes on every rank alike (the root's types are significant there only). */
    const int64_t total = convoy__rooted_total(a);
    int64_t onR = 0;
    for (int k = t->node_first[R]; k < t->node_first[R + 1]; k++)
        onR += convoy__rooted_bytes(a, t->members[k]);
    const int L = convoy__lane_count(t);
    const double per_lane = (double)(total - onR) / L;
    convoy__args b = *a;
    b.machine = *m;
    b.stype = b.rtype = (convoy__dtype){1, 1, 0, 1};
    b.counts_local = 0;
    b.root = R;
    const convoy__machine node = convoy__lane_level(m, 0);
    /* Lanes at once (each member block: per_lane / (N - 1)), then the root node's
     * collection: every byte but the root's own crosses the node once, packed and
     * unpacked (gamma). */
    const int64_t member = t->nnodes > 1 ? (int64_t)(per_lane / (t->nnodes - 1)) : 0;
    return convoy__lane_cost_equal(&b, CONVOY_COLL_GATHERV, t->nnodes, L, member) +
           (nR - 1 + L) * node.alpha + node.beta * (double)(total) +
           m->gamma * 2.0 * (double)(total - onR);
}
