/*
 * Scatter and Scatterv, full-lane (papers/004 §3.2), on any layout and counts: the mirror
 * of the full-lane Gather (gather_lane.c).
 *
 * Idea:
 *   1. Root node: the root sends each of its node's processes its own block (in the user's
 *      types, straight into place) and each lane's blocks, packed in node order (one
 *      message per lane, to the root node's process j mod n_R that roots virtual lane j).
 *   2. Lane scatters: virtual lane j (lane.h) scatters the packed blocks of the processes
 *      with node rank j on the other nodes (a registered Scatterv on the lane's members,
 *      all lanes at once).
 *   3. Every process off the root node unpacks its block into its receive buffer.
 * Irregular counts (Scatterv) are no different (every rank knows every block's size).
 * Copies: the root packs every block of the other nodes once, each owner unpacks its own;
 * the root node's blocks are not copied.
 *
 * Bytes leaving each node (regular layout, N nodes of n processes, m bytes per process):
 * the root node sends (N - 1) n m, (N - 1) m per process (lane); every other node receives
 * n m, m per process. Inside the root node (N - 1) n m + (n - 1) m (the bottleneck the
 * paper notes).
 *
 * Cost: as the full-lane Gather (rooted_lane.c). Restrictions: more than one node, some
 * node with more than one process, every block's size on every rank (not a nonblocking
 * Scatterv). Source: papers/004 §3.2; irregular counts and any layout beyond the paper.
 */
#include <stdlib.h>

#include "coll/rooted_lane.h"

enum { TAG_OWN = 0, TAG_LANE = 1 };

int convoy__scatter_lane_applicable(const convoy__args *a)
{
    return convoy__gather_lane_applicable(a);
}

int convoy__scatter_lane(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    convoy__rooted_lane p;
    if (convoy__rooted_lane_plan(a, &p)) return s->err = CONVOY_ERR_NO_MEM;
    const int N = p.N, L = p.L, R = p.R, nR = p.nR, r0 = p.r0, me = t->node_rank;
    int64_t *rc = malloc(2 * (size_t)N * sizeof *rc);
    int *ready = malloc((size_t)L * sizeof *ready), *deps = malloc((size_t)(N + 1) * sizeof *deps);
    convoy__topo lane;
    if (!rc || !ready || !deps || convoy__lane_group_topo(&lane, N, t->node)) {
        free(rc);
        free(ready);
        free(deps);
        convoy__rooted_lane_free(&p);
        return s->err = CONVOY_ERR_NO_MEM;
    }
    s->tmp_bytes = p.tmp;
    const convoy__region mine = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, 0, p.own);
    /* 1. The root node: lane data ready on its lane roots (ready[j], -1: at once). */
    for (int j = 0; j < L; j++)
        ready[j] = -1;
    if (t->node == R && me == r0) {
        if (!a->inplace && a->rcounts[a->root] > 0)
            convoy__add_copy(s, convoy__rooted_block(a, a->root), convoy__rooted_own(a), 0, NULL);
        for (int q = 0; q < nR; q++) {
            const int r = convoy__topo_rank_at(t, R, q);
            if (q != r0 && convoy__rooted_bytes(a, r) > 0)
                convoy__add_send(s, CONVOY_COMM_NODE, q, TAG_OWN, convoy__rooted_block(a, r), 0,
                                 NULL);
        }
        for (int j = 0; j < L; j++) {
            if (p.base[j + 1] == p.base[j]) continue;
            int nd = 0;
            for (int l = 0; l < N; l++) {
                const convoy__region piece = convoy__rooted_lane_piece(&p, j, l);
                if (piece.count > 0)
                    deps[nd++] = convoy__add_copy(
                        s, convoy__rooted_block(a, convoy__topo_rank_at(t, l, j)), piece, 0, NULL);
            }
            if (j % nR == r0) {
                /* A lane this root serves itself starts once packed: one step joins them. */
                ready[j] =
                    convoy__add_copy(s, convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, 0, 0),
                                     convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, 0, 0), nd, deps);
            } else {
                convoy__add_send(s, CONVOY_COMM_NODE, j % nR, TAG_LANE + j,
                                 convoy__rooted_lane_area(&p, j), nd, deps);
            }
        }
    } else if (t->node == R) {
        if (a->count * a->rtype.size > 0)
            convoy__add_recv(s, CONVOY_COMM_NODE, r0, TAG_OWN, convoy__rooted_own(a), 0, NULL);
        for (int j = me; j < L; j += nR)
            if (p.base[j + 1] > p.base[j])
                ready[j] = convoy__add_recv(s, CONVOY_COMM_NODE, r0, TAG_LANE + j,
                                            convoy__rooted_lane_area(&p, j), 0, NULL);
    }
    /* 2. One Scatterv child per lane, every lane in order. */
    int got = -1;
    for (int j = 0; j < L; j++) {
        if (!convoy__lane_serves(t, j)) {
            convoy__lane_placeholder(s, 0, NULL);
            continue;
        }
        convoy__args sub;
        convoy__rooted_lane_child(a, &p, j, &lane, rc, &sub);
        convoy__lane_map(t, j, p.map);
        const convoy__region area = t->node == R ? convoy__rooted_lane_area(&p, j) : mine;
        const int c = convoy__lane_child(s, &sub, p.map, area, mine, CONVOY_DEP(ready[j]));
        if (t->node != R && j == me) got = c;
    }
    /* 3. Unpack the own block. */
    if (p.own > 0) convoy__add_copy(s, mine, convoy__rooted_own(a), CONVOY_DEP(got));
    s->tag_blocks = 1 + L;
    convoy__topo_free(&lane);
    free(rc);
    free(ready);
    free(deps);
    convoy__rooted_lane_free(&p);
    return s->err;
}

double convoy__scatter_lane_cost(const convoy__args *a, const convoy__machine *m)
{
    return convoy__rooted_lane_cost(a, m);
}
