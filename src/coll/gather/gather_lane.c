/*
 * Gather and Gatherv, full-lane (papers/004 §3.2, Listing 3), on any layout and counts.
 *
 * Idea: the blocks are gathered over all lanes at once, then collected on the root node.
 *   1. Every process off the root node packs its block (one local copy, m_i bytes).
 *   2. Lane gathers: virtual lane j (lane.h) gathers the packed blocks of the processes
 *      with node rank j on every other node to the root node's process j mod n_R, packed
 *      in node order (a registered Gatherv on the lane's members, all lanes at once).
 *   3. Root node: each of its processes sends the root its own block (in the user's
 *      types, straight into place) and each lane's packed data it collected (one message
 *      per lane); the root unpacks every block into its place.
 * Irregular counts (Gatherv) are no different: every rank knows every block's size (the
 * API's counts exchange), so the lanes' pieces are known everywhere; a block of any size,
 * zero included, travels in its lane.
 * Copies: the non-root blocks are packed once by their owner and unpacked once by the root
 * (MPI's type matching: packed bytes travel as bytes; the paper avoids that with derived
 * datatypes on regular, consecutive layouts only); the root node's blocks are not copied.
 *
 * Bytes leaving each node (regular layout, N nodes of n processes, m bytes per process):
 * n m from every node but the root's, m per process, one lane each; the root node receives
 * (N - 1) n m, (N - 1) m per process. Inside the root node, (N - 1) n m + (n - 1) m more
 * (the paper's note: the node gather on the root node is the bottleneck).
 *
 * Cost: T_gatherv(N, m, n lanes at once) + (n_R - 1 + L) alpha_node + beta_node n_total +
 * 2 gamma (bytes off the root node).
 *
 * Restrictions: more than one node, some node with more than one process, every block's
 * size on every rank (not a nonblocking Gatherv). Source: papers/004 §3.2; irregular
 * counts (open in §6) and any layout, beyond the paper.
 */
#include <stdlib.h>

#include "coll/rooted_lane.h"

enum { TAG_OWN = 0, TAG_LANE = 1 };

int convoy__gather_lane_applicable(const convoy__args *a)
{
    return a->topo->nnodes > 1 && a->topo->max_ppn > 1 && !a->counts_local;
}

int convoy__gather_lane(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    convoy__rooted_lane p;
    if (convoy__rooted_lane_plan(a, &p)) return s->err = CONVOY_ERR_NO_MEM;
    const int N = p.N, L = p.L, R = p.R, nR = p.nR, r0 = p.r0, me = t->node_rank;
    int64_t *rc = malloc(2 * (size_t)N * sizeof *rc);
    int *child = malloc((size_t)L * sizeof *child);
    convoy__topo lane;
    if (!rc || !child || convoy__lane_group_topo(&lane, N, t->node)) {
        free(rc);
        free(child);
        convoy__rooted_lane_free(&p);
        return s->err = CONVOY_ERR_NO_MEM;
    }
    s->tmp_bytes = p.tmp;
    /* 1. Pack the own block. */
    const convoy__region mine = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, 0, p.own);
    const int packed = p.own > 0 ? convoy__add_copy(s, convoy__rooted_own(a), mine, 0, NULL) : -1;
    /* 2. One Gatherv child per lane, every lane in order. */
    for (int j = 0; j < L; j++) {
        child[j] = -1;
        if (!convoy__lane_serves(t, j)) {
            convoy__lane_placeholder(s, 0, NULL);
            continue;
        }
        convoy__args sub;
        convoy__rooted_lane_child(a, &p, j, &lane, rc, &sub);
        convoy__lane_map(t, j, p.map);
        /* Only the lane's root (on the root node) receives: the others have no area. */
        const convoy__region area = t->node == R ? convoy__rooted_lane_area(&p, j) : mine;
        child[j] = convoy__lane_child(s, &sub, p.map, mine, area, CONVOY_DEP(packed));
    }
    /* 3. The root node collects at the root. */
    if (t->node == R && me != r0) {
        if (a->count * a->stype.size > 0)
            convoy__add_send(s, CONVOY_COMM_NODE, r0, TAG_OWN, convoy__rooted_own(a), 0, NULL);
        for (int j = me; j < L; j += nR)
            if (p.base[j + 1] > p.base[j])
                convoy__add_send(s, CONVOY_COMM_NODE, r0, TAG_LANE + j,
                                 convoy__rooted_lane_area(&p, j), CONVOY_DEP(child[j]));
    } else if (t->node == R) {
        if (!a->inplace && a->rcounts[a->root] > 0)
            convoy__add_copy(s, convoy__rooted_own(a), convoy__rooted_block(a, a->root), 0, NULL);
        for (int q = 0; q < nR; q++) {
            const int r = convoy__topo_rank_at(t, R, q);
            if (q != r0 && convoy__rooted_bytes(a, r) > 0)
                convoy__add_recv(s, CONVOY_COMM_NODE, q, TAG_OWN, convoy__rooted_block(a, r), 0,
                                 NULL);
        }
        for (int j = 0; j < L; j++) {
            if (p.base[j + 1] == p.base[j]) continue;
            const int q = j % nR;
            const int got = q == r0 ? child[j]
                                    : convoy__add_recv(s, CONVOY_COMM_NODE, q, TAG_LANE + j,
                                                       convoy__rooted_lane_area(&p, j), 0, NULL);
            for (int l = 0; l < N; l++) {
                const convoy__region piece = convoy__rooted_lane_piece(&p, j, l);
                if (piece.count > 0)
                    convoy__add_copy(s, piece,
                                     convoy__rooted_block(a, convoy__topo_rank_at(t, l, j)),
                                     CONVOY_DEP(got));
            }
        }
    }
    s->tag_blocks = 1 + L;
    convoy__topo_free(&lane);
    free(rc);
    free(child);
    convoy__rooted_lane_free(&p);
    return s->err;
}

double convoy__gather_lane_cost(const convoy__args *a, const convoy__machine *m)
{
    return convoy__rooted_lane_cost(a, m);
}
