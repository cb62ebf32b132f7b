/*
 * Full-lane Allgather(v) (papers/004 §3.3, Listing 5; irregular counts: §6's open question,
 * beyond-the-paper item 3).
 *
 * Idea: first an allgatherv on every (virtual) lane: lane j's members (node rank j of
 * every node, lane.h) exchange their own blocks, so each process holds the blocks of its
 * lane from all nodes; then an allgatherv on every node completes the result. All N lanes
 * of a node carry data at once, each 1/n of the node's data.
 *
 * Bytes leaving each node (regular layout, N nodes of n processes, m bytes per process):
 * (N - 1) n m with the lane ring (every process sends its block to N - 1 nodes; with a
 * tree-like lane child each block still leaves the node N - 1 times at most once per
 * receiving node: N - 1 per block, n blocks). Every process of a node sends inter-node
 * data (checked: --assert-inter-spread 2, --expect-node-bytes).
 *
 * Cost: T_lane(N, m; n concurrent) + N T_node(n, m): the lane child's cost model on the
 * network level with n processes per node sending at once, and one node child per source
 * node (see zero copy) on the node level.
 *
 * Zero copy: every child receives straight into the user's receive buffer at the blocks'
 * own displacements, so no scratch memory is allocated (checked: --expect-tmp-max 0).
 * Node phase, two forms:
 *   - Strided (the paper's vector type): where every node has n processes with consecutive
 *     ranks and the blocks are equal and in rank order (Allgather), process q's blocks
 *     after the lane phase are N blocks n m bytes apart: one strided region. The node phase
 *     is then one allgather of those regions over the node, as plain steps: recursive
 *     doubling where n is a power of two (log2 n messages per process, the regions of 2^k
 *     processes at step k), else a ring (n - 1 messages). Cost: log2 n (or n - 1)
 *     alpha_node + (n - 1) N m beta_node.
 *   - Per source node (any layout and counts): one node allgatherv per source node (process
 *     q holds that node's blocks of the lanes q serves), in place and least scratch:
 *     N (n - 1) node messages instead of n - 1 (at 36 x 8 and 4 ints per process that was
 *     252 of the schedule's 287 messages per process), no strided type, no packing.
 *
 * Restrictions: none. Non-uniform nodes use virtual lanes (lane.h: a node of n_l < n
 * processes serves lane j with process j mod n_l), scattered ranks just change where the
 * blocks are. Applicable when there is more than one node and some node has more than one
 * process (else it is its own lane or node child).
 */
#include <stdlib.h>

#include "coll/lane.h"

int convoy__allgatherv_lane_applicable(const convoy__args *a)
{
    return a->topo->nnodes > 1 && a->topo->max_ppn > 1;
}

/* Whether the node phase can move one strided region per process: every node has n
 * processes with consecutive ranks, every block has c elements at displacement r c. */
static int strided_node(const convoy__args *a)
{
    const convoy__topo *t = a->topo;
    const int need = CONVOY_TOPO_REGULAR | CONVOY_TOPO_CONSECUTIVE;
    if ((t->flags & need) != need || t->ppn < 2) return 0;
    const int64_t c = a->rcounts[0];
    for (int r = 0; r < t->size; r++)
        if (a->rcounts[r] != c || a->displs[r] != r * c) return 0;
    return c > 0;
}

/* The strided node phase (plain steps on the node, in place on the receive buffer). */
static void node_strided(const convoy__args *a, convoy__schedule *s, int ndeps, const int *deps)
{
    const convoy__topo *t = a->topo;
    const int N = t->nnodes, n = t->ppn, q = t->node_rank;
    const int64_t c = a->rcounts[0], ext = a->rtype.extent;
    /* Node processes first, first + 1, ... first + k - 1: their blocks of every node. */
#define RUN(first, k)                                                                              \
    convoy__reg_strided(CONVOY_BUF_RECV, CONVOY_T_RECV, (int64_t)(first)*c *ext, (k)*c, N,         \
                        (int64_t)n *c *ext)
    int got = -1;
    if ((n & (n - 1)) == 0) {
        /* Recursive doubling: at distance d, the aligned groups of d processes swap. */
        for (int d = 1, step = 0; d < n; d <<= 1, step++) {
            const int peer = q ^ d;
            const int nd = got >= 0 ? 1 : ndeps;
            const int *dd = got >= 0 ? (const int[]){got} : deps;
            convoy__add_send(s, CONVOY_COMM_NODE, peer, step, RUN(q & ~(d - 1), d), nd, dd);
            got =
                convoy__add_recv(s, CONVOY_COMM_NODE, peer, step, RUN(peer & ~(d - 1), d), nd, dd);
        }
    } else {
        /* Ring: at step r, pass on process q - r's blocks, receive q - r - 1's. */
        const int right = (q + 1) % n, left = (q + n - 1) % n;
        for (int r = 0; r < n - 1; r++) {
            const int nd = got >= 0 ? 1 : ndeps;
            const int *dd = got >= 0 ? (const int[]){got} : deps;
            convoy__add_send(s, CONVOY_COMM_NODE, right, r, RUN((q + n - r) % n, 1), nd, dd);
            got = convoy__add_recv(s, CONVOY_COMM_NODE, left, r, RUN((q + 2 * n - r - 1) % n, 1),
                                   nd, dd);
        }
    }
#undef RUN
}

int convoy__allgatherv_lane(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int N = t->nnodes, n = t->ppn, L = convoy__lane_count(t);
    const int own_copy = convoy__agv_copy_own(a, s);
    int *first = malloc((size_t)(N + n + 2) * sizeof *first);
    int *own = malloc((size_t)(t->size + N) * sizeof *own);
    int32_t *map = malloc((size_t)N * sizeof *map);
    convoy__lane_deps lane = {0};
    if (!first || !own || !map) {
        s->err = CONVOY_ERR_NO_MEM;
        goto out;
    }
    /* Lane phase: lane j's member on node l owns rank (l, j)'s block if that exists. One
     * child per lane on every process (placeholders for the lanes it does not serve). */
    for (int j = 0; j < L; j++) {
        if (!convoy__lane_serves(t, j)) {
            convoy__lane_placeholder(s, 0, NULL);
            continue;
        }
        int k = 0;
        for (int l = 0; l < N; l++) {
            first[l] = k;
            if (j < t->node_size[l]) own[k++] = convoy__topo_rank_at(t, l, j);
        }
        first[N] = k;
        convoy__lane_map(t, j, map);
        convoy__lane_agv_group(s, a, N, t->node, map, L, first, own, CONVOY_DEP(own_copy), &lane,
                               NULL);
    }
    if (own_copy >= 0) convoy__lane_deps_add(&lane, own_copy, s);
    if (strided_node(a)) {
        node_strided(a, s, lane.n, lane.v);
        s->tag_blocks = 2 + L; /* the lane children only */
        goto out;
    }
    /* Node phase: per source node l, node process q owns the blocks of l's ranks on the
     * lanes it serves (q, q + n, ...). All in one bundle (one tag block), flushed when the
     * next node's children would not fit its tags. */
    convoy__lane_bundle b = {.budget = 2 * L};
    const int per = CONVOY_STEP_TAGS / b.budget; /* children per bundle */
    for (int l = 0; l < N && !s->err; l++) {
        int k = 0;
        for (int q = 0; q < n; q++) {
            first[q] = k;
            for (int j = q; j < t->node_size[l]; j += n)
                own[k++] = convoy__topo_rank_at(t, l, j);
        }
        first[n] = k;
        if (b.nchild > 0 && b.nchild + L > per)
            convoy__lane_bundle_add(s, &b, NULL, n, lane.n, lane.v);
        convoy__lane_agv_group(s, a, n, t->node_rank, NULL, 0, first, own, 0, NULL, NULL, &b);
    }
    convoy__lane_bundle_add(s, &b, NULL, n, lane.n, lane.v);
    /* Children per process differ with the lanes it serves: a common tag block bound (a
     * source node adds at most L children; a bundle is flushed past per - L). */
    s->tag_blocks = 2 + L + N * L / (per > L ? per - L + 1 : 1);
out:
    convoy__lane_deps_free(&lane);
    free(first);
    free(own);
    free(map);
    return s->err;
}

double convoy__allgatherv_lane_cost(const convoy__args *a, const convoy__machine *m)
{
    const convoy__topo *t = a->topo;
    int64_t total = 0;
    for (int i = 0; i < t->size; i++)
        total += a->rcounts[i];
    const int64_t per = t->size ? total / t->size : 0;
    convoy__args b = *a;
    b.machine = *m;
    const int n = t->max_ppn;
    /* Both phases in place, least scratch (convoy__lane_agv_group). */
    const int f = CONVOY_LANE_LEAST_SCRATCH | CONVOY_LANE_IN_PLACE;
    const double lane = convoy__lane_cost_flags(&b, CONVOY_COLL_ALLGATHERV, t->nnodes, n, per, f);
    if (strided_node(a)) {
        const convoy__machine node = convoy__lane_level(m, 0);
        int steps = 0;
        if ((n & (n - 1)) == 0)
            for (int d = 1; d < n; d <<= 1)
                steps++;
        else
            steps = n - 1;
        return lane + steps * node.alpha +
               (n - 1) * node.beta * (double)(t->nnodes * per * a->rtype.size);
    }
    return lane + t->nnodes * convoy__lane_cost_flags(&b, CONVOY_COLL_ALLGATHERV, n, 0, per, f);
}
