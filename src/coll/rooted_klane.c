/* The tree of the k-ported Gather(v) and Scatter(v) (see rooted_klane.h). */
#include <stdlib.h>

#include "coll/rooted_lane.h"
#include "coll/rooted_klane.h"

int convoy__rooted_klane_applicable(const convoy__args *a)
{
    return convoy__bcast_klane_pipeline_applicable(a) && !a->counts_local;
}

/* (k+1)^q of relative node v's lowest non-zero digit (v > 0), and that digit. */
static long low_span(long v, int k, int *digit)
{
    long span = 1;
    while ((v / span) % (k + 1) == 0)
        span *= k + 1;
    *digit = (int)((v / span) % (k + 1));
    return span;
}

int convoy__rooted_klane_plan(const convoy__args *a, convoy__rooted_klane *p)
{
    const convoy__topo *t = a->topo;
    p->N = t->nnodes;
    p->k = t->ppn;
    p->R = t->node_of[a->root];
    p->rot = t->node_rank_of[a->root];
    p->v = (t->node - p->R + p->N) % p->N;
    p->off = malloc((size_t)(p->N + 1) * sizeof *p->off);
    if (!p->off) return CONVOY_ERR_NO_MEM;
    p->off[0] = 0;
    for (int u = 0; u < p->N; u++)
        p->off[u + 1] = p->off[u] + convoy__rooted_hier_in_node(a, (p->R + u) % p->N, p->k);
    if (p->v == 0) {
        p->end = p->N;
        p->entry = t->node_rank_of[a->root];
        p->parent = -1;
    } else {
        int digit;
        const long span = low_span(p->v, p->k, &digit);
        p->end = p->v + span < p->N ? (int)(p->v + span) : p->N;
        p->entry = (digit - 1 + p->rot) % p->k;
        p->parent = convoy__topo_rank_at(t, (int)((p->R + p->v - digit * span) % p->N), p->entry);
    }
    return 0;
}

void convoy__rooted_klane_free(convoy__rooted_klane *p)
{
    free(p->off);
    p->off = NULL;
}

int convoy__rooted_klane_children(const convoy__rooted_klane *p, int port, int *child, int *end,
                                  int *lvl)
{
    long top = 1;
    int levels = 0, digit, n = 0;
    const long span = p->v > 0 ? low_span(p->v, p->k, &digit) : 0;
    while (p->v == 0 ? top < p->N : top < span)
        top *= p->k + 1, levels++;
    /* Port index of node rank `port` (the root is port 0), largest subtree first (it has
     * the longest way to go). */
    const int idx = (port - p->rot + p->k) % p->k;
    for (long q = top / (p->k + 1); q >= 1 && n < CONVOY_KLANE_MAXCHILD; q /= p->k + 1) {
        levels--;
        const long c = p->v + (long)(idx + 1) * q;
        if (c >= p->N) continue;
        child[n] = (int)c;
        end[n] = c + q < p->N ? (int)(c + q) : p->N;
        lvl[n++] = levels;
    }
    return n;
}

convoy__region convoy__rooted_klane_range(const convoy__rooted_klane *p, int u0, int u1)
{
    return convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, p->off[u0] - p->off[p->v],
                       p->off[u1] - p->off[u0]);
}

convoy__region convoy__rooted_klane_piece(const convoy__args *a, int q)
{
    const convoy__topo *t = a->topo;
    return convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, convoy__rooted_hier_in_node(a, t->node, q),
                       convoy__rooted_bytes(a, convoy__topo_rank_at(t, t->node, q)));
}

int convoy__rooted_klane_root_range(const convoy__args *a, const convoy__rooted_klane *p,
                                    convoy__schedule *s, int comm, int peer, int tag, int u0,
                                    int u1)
{
    const convoy__topo *t = a->topo;
    /* The range's blocks in the order the other end packs them: relative nodes in order,
     * each node's in node-rank order. */
    const int n = (u1 - u0) * p->k;
    int32_t *rk = malloc((size_t)(n > 0 ? n : 1) * sizeof *rk);
    if (!rk) {
        s->err = CONVOY_ERR_NO_MEM;
        return -1;
    }
    for (int u = u0, i = 0; u < u1; u++)
        for (int q = 0; q < p->k; q++)
            rk[i++] = convoy__topo_rank_at(t, (p->R + u) % p->N, q);
    const int step = convoy__rooted_run_root(a, s, comm, peer, tag, rk, n);
    free(rk);
    return step;
}

double convoy__rooted_klane_cost(const convoy__args *a, const convoy__machine *m)
{
    const convoy__topo *t = a->topo;
    const int k = t->max_ppn;
    int depth = 0;
    for (long r = 1; r < t->nnodes; r *= k + 1)
        depth++;
    const double total = (double)convoy__rooted_total(a);
    const convoy__machine lane = convoy__lane_level(m, k), node = convoy__lane_level(m, 0);
    /* Per level one inter-node and k - 1 node-internal messages; the root node's ports
     * carry the other nodes' bytes, 1/k each, and they all cross the root node once more
     * (the node phase); every byte off the root node is copied once (packed by its owner
     * for a Gather, unpacked for a Scatter; the root moves them in place). */
    return depth * (lane.alpha + (k - 1) * node.alpha) + lane.beta * total / k + node.beta * total +
           m->gamma * total;
}
