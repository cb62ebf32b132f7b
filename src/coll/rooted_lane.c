/*
 * The full-lane Gather(v) and Scatter(v) (gather_lane.c, scatter_lane.c say what they do
 * and cost) and the runs both they and the hierarchical versions use (rooted_lane.h): one
 * message per run, straight in the root's vector through a strided or indexed region.
 */
#include <stdlib.h>

#include "coll/rooted_lane.h"

int convoy__rooted_run_root(const convoy__args *a, convoy__schedule *s, int comm, int peer, int tag,
                            const int32_t *rk, int n)
{
    const int g = convoy__rooted_gathers(a);
    const int64_t ext = g ? a->rtype.extent : a->stype.extent;
    /* The blocks that hold data, in the order the other end packs them. */
    int64_t *disp = malloc(2 * (size_t)(n > 0 ? n : 1) * sizeof *disp), *cnt = disp + n;
    if (!disp) {
        s->err = CONVOY_ERR_NO_MEM;
        return -1;
    }
    int k = 0;
    for (int i = 0; i < n; i++)
        if (convoy__rooted_bytes(a, rk[i]) > 0) {
            disp[k] = a->displs[rk[i]] * ext;
            cnt[k++] = a->rcounts[rk[i]];
        }
    int step = -1;
    if (k > 0) {
        /* Straight in the vector: one block plain, equal blocks evenly spaced as the paper's
         * vector type with a resized extent, anything else (uneven displacements, different
         * counts, gaps, any order) as the hindexed type of the blocks. */
        const convoy__region b = convoy__rooted_block(a, rk[0]);
        const convoy__region r = convoy__reg_blocklist(s, b.buf, b.tslot, ext, k, disp, cnt);
        step = g ? convoy__add_recv(s, comm, peer, tag, r, 0, NULL)
                 : convoy__add_send(s, comm, peer, tag, r, 0, NULL);
    }
    free(disp);
    return step;
}

int convoy__rooted_run_far(const convoy__args *a, convoy__schedule *s, int comm, int peer, int tag,
                           convoy__region r, int ndeps, const int *deps)
{
    if (r.count == 0) return -1;
    return convoy__rooted_gathers(a) ? convoy__add_send(s, comm, peer, tag, r, ndeps, deps)
                                     : convoy__add_recv(s, comm, peer, tag, r, ndeps, deps);
}

/* The full-lane builder's view of one call. Lane j is rooted at the root node's process
 * q_j = j mod n_R; a lane rooted elsewhere than at the root is relayed by q_j through its
 * area of the scratch (aoff[j]), its members' blocks packed in node order. */
typedef struct lane_plan {
    const convoy__args *a;
    int N, L, R, nR, r0, g;
    int64_t *aoff;     /* [L] lane j's area in my scratch (-1: I do not relay it) */
    int32_t *rk, *map; /* [N] a lane's ranks off the root node, its members */
    int64_t *rc;       /* [2 N] a child's counts and displacements */
    int64_t tmp;       /* scratch so far */
    convoy__topo lane; /* the children's topology */
} lane_plan;

/* Lane j's blocks off the root node, in node order: those of node rank j (a process
 * serving more lanes of a smaller node carries its block in its own lane only); their
 * ranks (p->rk), their number. */
static int lane_ranks(lane_plan *p, int j)
{
    const convoy__topo *t = p->a->topo;
    int k = 0;
    for (int l = 0; l < p->N; l++)
        if (l != p->R && t->node_size[l] > j) p->rk[k++] = convoy__topo_rank_at(t, l, j);
    return k;
}

/* Lane j's child: a Gatherv/Scatterv rooted at the root node's member, which holds the
 * vector (the root: its own; a relay: its area, packed); the others send (receive) their
 * own blocks in their own types. */
static int lane_child(lane_plan *p, convoy__schedule *s, int j, int ndeps, const int *deps)
{
    const convoy__args *a = p->a;
    const convoy__topo *t = a->topo;
    const int vec_root = t->rank == a->root, relay = p->aoff[j] >= 0, N = p->N;
    convoy__args sub;
    convoy__lane_sub_args(a, p->g ? CONVOY_COLL_GATHERV : CONVOY_COLL_SCATTERV, &p->lane, p->L,
                          &sub);
    int64_t off = 0;
    for (int l = 0; l < N; l++) {
        const int r = convoy__lane_member(t, j, l);
        p->rc[l] = l == p->R || t->node_size[l] <= j ? 0 : a->rcounts[r];
        p->rc[N + l] = vec_root ? a->displs[r] : off;
        off += p->rc[l];
    }
    sub.rcounts = p->rc;
    sub.displs = p->rc + N;
    sub.counts_local = 0;
    sub.root = p->R;
    sub.count = t->node != p->R && t->node_rank == j ? a->count : 0;
    sub.packed = relay ? CONVOY_PACKED_VEC : 0;
    convoy__lane_map(t, j, p->map);
    const convoy__region user = convoy__reg(p->g ? CONVOY_BUF_RECV : CONVOY_BUF_SEND, CONVOY_T_BYTE,
                                            0, 0),
                         area = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, p->aoff[j], 0),
                         vec = relay ? area : user,
                         own = convoy__reg(p->g ? CONVOY_BUF_SEND : CONVOY_BUF_RECV, CONVOY_T_BYTE,
                                           0, 0);
    /* Least scratch: a child that packs (a tree) would copy what the root receives in place. */
    return convoy__lane_child_flags(s, &sub, p->map, p->g ? own : vec, p->g ? vec : own,
                                    CONVOY_LANE_LEAST_SCRATCH, ndeps, deps);
}

/* The root node's messages: its processes' own blocks with the root, straight in the user's
 * types; each relayed lane's blocks between its relay and the root, one message (a run:
 * tags from 1 on, per relay, in lane order on both ends; none for a lane without data).
 * Gather: a relay forwards lane j once child[j] is done; Scatter: ready[j] is lane j's
 * receipt at its relay. */
static void root_node(lane_plan *p, convoy__schedule *s, const int *child, int *ready)
{
    const convoy__args *a = p->a;
    const convoy__topo *t = a->topo;
    const int me = t->node_rank;
    if (t->node != p->R) return;
    if (t->rank != a->root) {
        if (a->count > 0)
            convoy__rooted_run_far(a, s, CONVOY_COMM_NODE, p->r0, 0, convoy__rooted_own(a), 0,
                                   NULL);
        for (int j = me, tag = 1; j < p->L; j += p->nR, tag++) {
            const int k = lane_ranks(p, j);
            int64_t b = 0;
            for (int v = 0; v < k; v++)
                b += convoy__rooted_bytes(a, p->rk[v]);
            const convoy__region r = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, p->aoff[j], b);
            const int after = p->g ? child[j] : -1;
            /* Scatter: the child waits for it. */
            const int step =
                convoy__rooted_run_far(a, s, CONVOY_COMM_NODE, p->r0, tag, r, CONVOY_DEP(after));
            if (!p->g) ready[j] = step;
        }
        return;
    }
    const int64_t own = convoy__rooted_bytes(a, a->root);
    if (!a->inplace && own > 0)
        p->g
            ? convoy__add_copy(s, convoy__rooted_own(a), convoy__rooted_block(a, a->root), 0, NULL)
            : convoy__add_copy(s, convoy__rooted_block(a, a->root), convoy__rooted_own(a), 0, NULL);
    for (int q = 0; q < p->nR; q++) {
        if (q == p->r0) continue;
        const int32_t r = convoy__topo_rank_at(t, p->R, q);
        convoy__rooted_run_root(a, s, CONVOY_COMM_NODE, q, 0, &r, 1);
        for (int j = q, tag = 1; j < p->L; j += p->nR, tag++)
            convoy__rooted_run_root(a, s, CONVOY_COMM_NODE, q, tag, p->rk, lane_ranks(p, j));
    }
}

int convoy__rooted_lane_build(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    lane_plan p = {
        .a = a, .N = t->nnodes, .L = convoy__lane_count(t), .g = convoy__rooted_gathers(a)};
    p.R = t->node_of[a->root];
    p.nR = t->node_size[p.R];
    p.r0 = t->node_rank_of[a->root];
    const int N = p.N, L = p.L;
    p.aoff = malloc((size_t)L * sizeof *p.aoff);
    p.rk = malloc((size_t)N * sizeof *p.rk);
    p.map = malloc((size_t)N * sizeof *p.map);
    p.rc = malloc(2 * (size_t)N * sizeof *p.rc);
    int *child = calloc((size_t)L, sizeof *child), *ready = calloc((size_t)L, sizeof *ready);
    const int ok = p.aoff && p.rk && p.map && p.rc && child && ready &&
                   !convoy__lane_group_topo(&p.lane, N, t->node);
    if (ok) {
        /* My relay areas first (root node, lanes rooted at me but not the root). */
        for (int j = 0; j < L; j++) {
            child[j] = ready[j] = -1;
            p.aoff[j] = -1;
            if (t->node != p.R || t->rank == a->root || !convoy__lane_serves(t, j)) continue;
            p.aoff[j] = p.tmp;
            const int k = lane_ranks(&p, j);
            for (int i = 0; i < k; i++)
                p.tmp += convoy__rooted_bytes(a, p.rk[i]);
        }
        /* Scatter: the root node first; the lanes (children, every lane in order, placeholders
         * where I serve none) after; Gather the other way round. */
        if (!p.g) root_node(&p, s, child, ready);
        for (int j = 0; j < L; j++)
            child[j] = convoy__lane_serves(t, j) ? lane_child(&p, s, j, CONVOY_DEP(ready[j]))
                                                 : convoy__lane_placeholder(s, 0, NULL);
        if (p.g) root_node(&p, s, child, ready);
        s->tmp_bytes = p.tmp;
        s->tag_blocks = 1 + L;
        convoy__topo_free(&p.lane);
    } else {
        s->err = CONVOY_ERR_NO_MEM;
    }
    free(p.aoff), free(p.rk), free(p.map), free(p.rc), free(child), free(ready);
    return s->err;
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
     * collection: every byte but the root's own crosses the node once, a lane's blocks in
     * one message; no copies. */
    const int64_t member = t->nnodes > 1 ? (int64_t)(per_lane / (t->nnodes - 1)) : 0;
    return convoy__lane_cost_flags(&b, CONVOY_COLL_GATHERV, t->nnodes, L, member,
                                   CONVOY_LANE_LEAST_SCRATCH) +
           (nR - 1 + L) * node.alpha + node.beta * (double)(total);
}
