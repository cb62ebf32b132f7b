/*
 * Scatter and Scatterv, hierarchical (papers/004 §3.2), on any layout and counts: the
 * mirror of the hierarchical Gather (gather_hier.c).
 *
 * Idea: the root packs each other node's blocks in node-rank order and scatters the nodes'
 * packed data to their leaders (the members of the root's virtual lane r0, lane.h; a
 * registered Scatterv on the lane's members); each leader sends its node's processes their
 * packed blocks, which they unpack. On the root node the root sends its processes their
 * blocks straight from the send buffer into place (no copies).
 *
 * Bytes leaving each node (regular layout, N nodes of n processes, m bytes per process):
 * the root node sends (N - 1) n m, all from the root; every other node receives n m, all
 * through its leader.
 *
 * Cost: as the hierarchical Gather (rooted_hier.c). Restrictions: more than one node, some
 * node with more than one process, every block's size on every rank. Source: papers/004
 * §3.2; any layout and counts.
 */
#include <stdlib.h>

#include "coll/rooted_hier.h"

int convoy__scatter_hier_applicable(const convoy__args *a)
{
    return convoy__gather_lane_applicable(a);
}

int convoy__scatter_hier(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    convoy__rooted_hier h;
    if (convoy__rooted_hier_plan(a, &h)) return s->err = CONVOY_ERR_NO_MEM;
    const int N = t->nnodes, R = h.R;
    convoy__lane_deps packs = {0};
    s->tmp_bytes = h.tmp;
    if (t->node == R && t->rank == a->root) {
        if (!a->inplace && a->rcounts[a->root] > 0)
            convoy__add_copy(s, convoy__rooted_block(a, a->root), convoy__rooted_own(a), 0, NULL);
        for (int q = 0; q < t->ppn; q++) {
            const int r = convoy__topo_rank_at(t, R, q);
            if (r != a->root && convoy__rooted_bytes(a, r) > 0)
                convoy__add_send(s, CONVOY_COMM_NODE, q, 0, convoy__rooted_block(a, r), 0, NULL);
        }
        /* Pack the other nodes' blocks for the leaders. */
        for (int l = 0; l < N; l++)
            for (int q = 0; l != R && q < t->node_size[l]; q++) {
                const int r = convoy__topo_rank_at(t, l, q);
                const int64_t b = convoy__rooted_bytes(a, r);
                if (b > 0)
                    convoy__lane_deps_add(
                        &packs,
                        convoy__add_copy(
                            s, convoy__rooted_block(a, r),
                            convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE,
                                        h.rc[N + l] + convoy__rooted_hier_in_node(a, l, q), b),
                            0, NULL),
                        s);
            }
    } else if (t->node == R) {
        if (a->count * a->rtype.size > 0)
            convoy__add_recv(s, CONVOY_COMM_NODE, h.r0, 0, convoy__rooted_own(a), 0, NULL);
    }
    /* The leaders' Scatterv of the nodes' packed data. */
    int got = -1;
    if (convoy__lane_serves(t, h.r0)) {
        const convoy__region all = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, 0, h.tmp);
        got = convoy__lane_child(s, &h.sub, h.map, all, all, packs.n, packs.v);
    } else {
        convoy__lane_placeholder(s, 0, NULL);
    }
    if (t->node != R) {
        /* The leader passes each process its packed block; everyone unpacks its own. */
        const int64_t b = convoy__rooted_bytes(a, t->rank);
        if (t->node_rank == h.lead) {
            for (int q = 0; q < t->ppn; q++)
                if (q != h.lead && h.noff[q + 1] > h.noff[q])
                    convoy__add_send(s, CONVOY_COMM_NODE, q, 0,
                                     convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, h.noff[q],
                                                 h.noff[q + 1] - h.noff[q]),
                                     CONVOY_DEP(got));
            if (b > 0)
                convoy__add_copy(s, convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, h.noff[h.lead], b),
                                 convoy__rooted_own(a), CONVOY_DEP(got));
        } else if (b > 0) {
            const convoy__region mine = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, 0, b);
            const int in = convoy__add_recv(s, CONVOY_COMM_NODE, h.lead, 0, mine, 0, NULL);
            convoy__add_copy(s, mine, convoy__rooted_own(a), 1, &in);
        }
    }
    s->tag_blocks = 2;
    convoy__lane_deps_free(&packs);
    convoy__rooted_hier_free(&h);
    return s->err;
}

double convoy__scatter_hier_cost(const convoy__args *a, const convoy__machine *m)
{
    return convoy__rooted_hier_cost(a, m);
}
