/*
 * Gather and Gatherv, hierarchical (papers/004 §3.2, Listing 4), on any layout and counts.
 *
 * Idea: on every node the member of the root's lane (virtual lane r0 = the root's node
 * rank: node rank r0 mod n_l, lane.h) collects its node's blocks, packed in node-rank
 * order; those node leaders gather the nodes' packed data to the root (a registered
 * Gatherv on the lane's members); the root unpacks every block into its place. On the root
 * node the processes send the root their blocks straight into place (no copies).
 * Elsewhere each block is packed by its owner and unpacked by the root (packed bytes travel
 * as bytes: MPI's type matching).
 *
 * Bytes leaving each node (regular layout, N nodes of n processes, m bytes per process):
 * n m from every node but the root's, all through its leader (the other processes send
 * nothing between nodes: the contrast to `lane`); the root node receives (N - 1) n m, all
 * into the root.
 *
 * Cost: (n - 1)(alpha_node + beta_node m) + T_gatherv(N leaders, n m) + 2 gamma (bytes off
 * the root node).
 *
 * Restrictions: more than one node, some node with more than one process, every block's
 * size on every rank. Source: papers/004 §3.2 (Listing 4); any layout and counts.
 */
#include <stdlib.h>

#include "coll/rooted_hier.h"

int convoy__gather_hier_applicable(const convoy__args *a)
{
    return convoy__gather_lane_applicable(a);
}

int convoy__gather_hier(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    convoy__rooted_hier h;
    if (convoy__rooted_hier_plan(a, &h)) return s->err = CONVOY_ERR_NO_MEM;
    const int N = t->nnodes, R = h.R;
    convoy__lane_deps ready = {0};
    s->tmp_bytes = h.tmp;
    if (t->node == R) {
        /* The root node: straight into place. */
        if (t->rank != a->root) {
            if (a->count * a->stype.size > 0)
                convoy__add_send(s, CONVOY_COMM_NODE, h.r0, 0, convoy__rooted_own(a), 0, NULL);
        } else {
            if (!a->inplace && a->rcounts[a->root] > 0)
                convoy__add_copy(s, convoy__rooted_own(a), convoy__rooted_block(a, a->root), 0,
                                 NULL);
            for (int q = 0; q < t->ppn; q++) {
                const int r = convoy__topo_rank_at(t, R, q);
                if (r != a->root && convoy__rooted_bytes(a, r) > 0)
                    convoy__add_recv(s, CONVOY_COMM_NODE, q, 0, convoy__rooted_block(a, r), 0,
                                     NULL);
            }
        }
    } else {
        /* Pack the own block; the leader collects the node's packed blocks. */
        const int64_t at = t->node_rank == h.lead ? h.noff[t->node_rank] : 0;
        const convoy__region mine =
            convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, at, convoy__rooted_bytes(a, t->rank));
        const int packed =
            mine.count > 0 ? convoy__add_copy(s, convoy__rooted_own(a), mine, 0, NULL) : -1;
        if (t->node_rank != h.lead) {
            if (mine.count > 0) convoy__add_send(s, CONVOY_COMM_NODE, h.lead, 0, mine, 1, &packed);
        } else {
            convoy__lane_deps_add(&ready, packed, s);
            for (int q = 0; q < t->ppn; q++)
                if (q != h.lead && h.noff[q + 1] > h.noff[q])
                    convoy__lane_deps_add(
                        &ready,
                        convoy__add_recv(s, CONVOY_COMM_NODE, q, 0,
                                         convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, h.noff[q],
                                                     h.noff[q + 1] - h.noff[q]),
                                         0, NULL),
                        s);
        }
    }
    /* The leaders' Gatherv of the nodes' packed data; the root unpacks. */
    if (convoy__lane_serves(t, h.r0)) {
        const convoy__region all = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, 0, h.tmp);
        const int got = convoy__lane_child(s, &h.sub, h.map, all, all, ready.n, ready.v);
        for (int l = 0; t->rank == a->root && l < N; l++)
            for (int q = 0; l != R && q < t->node_size[l]; q++) {
                const int r = convoy__topo_rank_at(t, l, q);
                const int64_t b = convoy__rooted_bytes(a, r);
                if (b > 0)
                    convoy__add_copy(s,
                                     convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE,
                                                 h.rc[N + l] + convoy__rooted_hier_in_node(a, l, q),
                                                 b),
                                     convoy__rooted_block(a, r), 1, &got);
            }
    } else {
        convoy__lane_placeholder(s, 0, NULL);
    }
    s->tag_blocks = 2;
    convoy__lane_deps_free(&ready);
    convoy__rooted_hier_free(&h);
    return s->err;
}

double convoy__gather_hier_cost(const convoy__args *a, const convoy__machine *m)
{
    return convoy__rooted_hier_cost(a, m);
}
