/*
 * Bcast, full-lane (papers/004 §3.1, Listing 1), on any layout.
 *
 * Idea: the count elements are cut into n_R blocks (n_R = the root node's processes; block
 * j has count / n_R elements, the first count mod n_R one more: the paper's irregular
 * MPI_Scatterv / MPI_Allgatherv case when n_R does not divide count).
 *   1. Node scatter on the root node: the root sends block j to its node's process j.
 *   2. Lane broadcasts: virtual lane j (lane.h: node l's process j mod n_l) broadcasts
 *      block j from the root node to every node, all n_R lanes at once (each a registered
 *      Bcast algorithm on the lane's members, lane.h).
 *   3. Node allgather on every node: each process has the blocks of the lanes it serves
 *      (j = q, q + n_l, ... below n_R); an allgatherv in place on the node completes the
 *      message everywhere (on the root node too, as in the paper; its root receives what
 *      it has, which the paper notes MPI has no narrower collective for).
 * Zero copy: every block is received straight into its place in the user's buffer in the
 * user's datatype (blocks are element ranges); no scratch memory is allocated.
 *
 * Bytes leaving each node (regular layout, N nodes of n processes, m bytes): every node
 * receives m, m/n per process, and the lane trees together move (N - 1) m between nodes,
 * (N - 1) m/n per lane; a node sends m/n per lane for each child of its lane trees (the
 * root node with a binomial lane tree: ceil(log2 N) m). Every process of every node sends
 * or receives inter-node data, the same on all processes of a node where n divides count
 * (convoy-check --assert-inter-spread, which for rooted collectives compares the ranks of
 * one node: a tree's root and leaves differ by design), and the same per lane.
 *
 * Cost: alpha_node + beta_node m/n_R + (n_R - 2) gap(m/n_R) (the root posts its n_R - 1
 * sends at once: their latencies overlap, and each further one costs the node's measured
 * gap, convoy__posted_cost; unmeasured alpha_node / 2 + beta_node m/n_R; simulated Hydra,
 * 8 processes, 576-byte blocks: 5.0 us, where n_R - 1 whole messages predicted 10.0, the
 * unmeasured gaps 6.7 and the measured 0.5 us + 0.125 ns/B 4.9; VSC-3, 16 processes,
 * 4000-byte blocks: 58.7 unmeasured, 28.5 measured, where the root's 15 sends at 1.7 us of
 * its own time each take about 28 us) +
 * T_bcast(N, m/n_R, n_R lanes at once) + T_allgatherv(node, m). Rounds: the paper's ceil(log2 n) +
 * ceil(log2 N) + ceil(log2 n) with tree node collectives (the node scatter here is linear: n_R -
 * 1). Where processes share cores, every process receives the whole message at once with
 * all the others (its block by the scatter or its lane, the rest in the node allgather, a
 * wait each): at least share (2 alpha + beta m) (convoy__shared_cores_work). np 4 as 2 x 2,
 * 64K ints: predicted 114 us against the library's 133, measured 1.12-1.69 of the library's
 * in convoy-bench, and the drop-in served it at 1.82.
 *
 * Restrictions: more than one node and some node with more than one process (else it is
 * the flat Bcast). Source: papers/004 §3.1; non-uniform and non-consecutive layouts through
 * virtual lanes (lane.h), beyond the paper.
 */
#include <stdlib.h>

#include "coll/lane.h"

enum { TAG_SCATTER = 0 };

int convoy__bcast_lane_applicable(const convoy__args *a)
{
    return a->topo->nnodes > 1 && a->topo->max_ppn > 1;
}

/* Block j of the message (elements of the datatype), as a region of the buffer. */
static convoy__region block(const convoy__args *a, int n, int j)
{
    return convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV,
                       convoy__lane_block_off(a->count, n, j) * a->rtype.extent,
                       convoy__lane_block(a->count, n, j));
}

/* The builder on the call in bytes (convoy__build_in_bytes). */
static int lane(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int N = t->nnodes, R = t->node_of[a->root], nR = t->node_size[R];
    const int r0 = t->node_rank_of[a->root], me = t->node_rank, n = t->ppn;
    convoy__lane_deps before = {0}, done = {0};
    int32_t *map = malloc((size_t)N * sizeof *map);
    int64_t *rc = malloc(2 * (size_t)nR * sizeof *rc);
    int *first = malloc((size_t)(n + 1) * sizeof *first), *own = malloc((size_t)nR * sizeof *own);
    convoy__topo lane;
    int have_lane = 0;
    if (!map || !rc || !first || !own || convoy__lane_group_topo(&lane, N, t->node)) {
        s->err = CONVOY_ERR_NO_MEM;
        goto out;
    }
    have_lane = 1;
    /* 1. Node scatter on the root node. */
    int got = -1;
    if (t->node == R && me == r0) {
        for (int j = 0; j < nR; j++)
            if (j != r0 && block(a, nR, j).count > 0)
                convoy__lane_deps_add(
                    &before,
                    convoy__add_send(s, CONVOY_COMM_NODE, j, TAG_SCATTER, block(a, nR, j), 0, NULL),
                    s);
    } else if (t->node == R && block(a, nR, me).count > 0) {
        got = convoy__add_recv(s, CONVOY_COMM_NODE, r0, TAG_SCATTER, block(a, nR, me), 0, NULL);
        convoy__lane_deps_add(&before, got, s);
    }
    /* 2. One Bcast child per lane, every lane in order (placeholders where not a member). */
    convoy__args sub;
    convoy__lane_sub_args(a, CONVOY_COLL_BCAST, &lane, nR, &sub);
    sub.root = R;
    for (int j = 0; j < nR; j++) {
        if (!convoy__lane_serves(t, j)) {
            convoy__lane_placeholder(s, 0, NULL);
            continue;
        }
        convoy__lane_map(t, j, map);
        sub.count = block(a, nR, j).count;
        const convoy__region at = block(a, nR, j);
        const int dep = t->node == R ? got : -1;
        convoy__lane_deps_add(&before, convoy__lane_child(s, &sub, map, at, at, CONVOY_DEP(dep)),
                              s);
    }
    /* 3. Node allgatherv in place: process q owns the blocks of the lanes it serves. The
     * blocks are described as an allgatherv's, indexed by lane. */
    convoy__args ag = *a;
    ag.coll = CONVOY_COLL_ALLGATHERV;
    ag.rcounts = rc;
    ag.displs = rc + nR;
    for (int j = 0; j < nR; j++) {
        rc[j] = convoy__lane_block(a->count, nR, j);
        rc[nR + j] = convoy__lane_block_off(a->count, nR, j);
    }
    int k = 0;
    for (int q = 0; q < n; q++) {
        first[q] = k;
        for (int j = q; j < nR; j += n)
            own[k++] = j;
    }
    first[n] = k;
    convoy__lane_agv_group(s, &ag, n, me, NULL, 0, first, own, before.n, before.v, &done, NULL);
    /* Children per rank: nR lanes, at most nR node allgatherv children. */
    s->tag_blocks = 1 + 2 * nR;
out:
    if (have_lane) convoy__topo_free(&lane);
    convoy__lane_deps_free(&before);
    convoy__lane_deps_free(&done);
    free(map);
    free(rc);
    free(first);
    free(own);
    return s->err;
}

static double lane_cost(const convoy__args *a, const convoy__machine *m)
{
    const convoy__topo *t = a->topo;
    const int nR = t->node_size[t->node_of[a->root]];
    const double bytes = (double)(a->count * a->rtype.size);
    convoy__args b = *a;
    b.machine = *m;
    const convoy__machine node = convoy__lane_level(m, 0);
    const int64_t per = (a->count + nR - 1) / nR;
    const double c = convoy__posted_cost(&node, nR - 1, bytes / nR) +
                     convoy__lane_cost_equal(&b, CONVOY_COLL_BCAST, t->nnodes, nR, per) +
                     convoy__lane_cost_flags(&b, CONVOY_COLL_ALLGATHERV, t->max_ppn, 0, per,
                                             CONVOY_LANE_LEAST_SCRATCH | CONVOY_LANE_IN_PLACE),
                 w = convoy__shared_cores_work(m, 2, bytes);
    return c > w ? c : w;
}

int convoy__bcast_lane(const convoy__args *a, convoy__schedule *s)
{
    return convoy__build_in_bytes(a, s, lane);
}

double convoy__bcast_lane_cost(const convoy__args *a, const convoy__machine *m)
{
    return convoy__cost_in_bytes(a, m, lane_cost);
}
