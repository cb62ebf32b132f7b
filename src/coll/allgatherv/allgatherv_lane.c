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
 * node (see zero copy) on the node level; the strided form below has its own.
 *
 * Zero copy: every child receives straight into the user's receive buffer at the blocks'
 * own displacements, so no scratch memory is allocated (checked: --expect-tmp-max 0).
 * Two forms:
 *   - Strided (the paper's vector types): where every node has n processes with consecutive
 *     ranks and the blocks are equal and in rank order (Allgather), a lane's blocks are
 *     n m bytes apart in the receive buffer, and so are process q's N blocks after the lane
 *     phase. Both phases are plain steps on strided regions, straight into place:
 *     the lane phase is Bruck's dissemination over the N nodes (ceil(log2 N) steps; a
 *     step's blocks are a cyclic run of nodes, one region, or two where the run wraps past
 *     node N - 1: at most 2 messages per step), the node phase recursive doubling where n
 *     is a power of two (log2 n messages, the regions of 2^k processes at step k), else a
 *     ring (n - 1). Cost: lane messages x alpha (n concurrent) + (N - 1) m beta (n
 *     concurrent) + log2 n (or n - 1) alpha_node + (n - 1) N m beta_node. At 36 x 8 with
 *     4 ints per process: 14 messages per process (11 lane, 3 node).
 *   - Children (any layout and counts): one lane allgatherv child per lane, in place and
 *     least scratch (a ring where the lane's blocks are not contiguous: N - 1 messages),
 *     then one node allgatherv per source node (process q holds that node's blocks of the
 *     lanes q serves): N (n - 1) node messages instead of n - 1. At 36 x 8 and 4 ints per
 *     process that was 287 messages per process (35 lane, 252 node), 344.6 us simulated
 *     on Hydra against the paper's 26.9.
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

enum { TAG_NODE = 128 }; /* the strided node phase's first tag (the lane phase's below) */

/* Whether both phases can move strided regions: every node has n processes with
 * consecutive ranks, every block has c elements at displacement r c (so lane j's block of
 * node l is at (l n + j) c elements); the node tags after the lane tags fit. */
static int strided(const convoy__args *a)
{
    const convoy__topo *t = a->topo;
    const int need = CONVOY_TOPO_REGULAR | CONVOY_TOPO_CONSECUTIVE;
    if ((t->flags & need) != need || t->ppn < 2) return 0;
    const int64_t c = a->rcounts[0];
    for (int r = 0; r < t->size; r++)
        if (a->rcounts[r] != c || a->displs[r] != r * c) return 0;
    return c > 0 && TAG_NODE + t->ppn < CONVOY_STEP_TAGS;
}

/* Nodes first .. first + k - 1 (mod N) of lane j, as one or two strided regions (the run
 * wraps past node N - 1): steps sending or receiving them; returns how many. */
static int lane_run(const convoy__args *a, convoy__schedule *s, int recv, int peer, int tag,
                    int first, int k, int ndeps, const int *deps, int *out)
{
    const convoy__topo *t = a->topo;
    const int N = t->nnodes, n = t->ppn, j = t->node_rank;
    const int64_t c = a->rcounts[0], ext = a->rtype.extent;
    int m = 0;
    while (k > 0) {
        const int len = first + k <= N ? k : N - first;
        const convoy__region r =
            convoy__reg_strided(CONVOY_BUF_RECV, CONVOY_T_RECV, ((int64_t)first * n + j) * c * ext,
                                c, len, (int64_t)n * c * ext);
        out[m] = recv ? convoy__add_recv(s, CONVOY_COMM_LANE, peer, tag + m, r, ndeps, deps)
                      : convoy__add_send(s, CONVOY_COMM_LANE, peer, tag + m, r, ndeps, deps);
        m++;
        first = (first + len) % N;
        k -= len;
    }
    return m;
}

/* The strided lane phase: Bruck's dissemination allgather over the lane (ceil(log2 N)
 * steps; at distance d every process sends the first min(d, N - d) blocks it holds, from
 * its own node on, to node - d and receives as many from node + d), each step's blocks as
 * at most two strided regions straight into their final places: no rotation, no scratch.
 * Returns the last step's receives in got (at most 2). */
static int lane_strided(const convoy__args *a, convoy__schedule *s, int ndeps, const int *deps,
                        int *got)
{
    const convoy__topo *t = a->topo;
    const int N = t->nnodes, i = t->node;
    int ng = 0, tag = 0;
    for (int d = 1; d < N; d <<= 1, tag += 2) {
        const int k = d < N - d ? d : N - d;
        int prev[2] = {got[0], got[1]};
        const int nd = ng ? ng : ndeps;
        const int *dd = ng ? prev : deps;
        int sent[2];
        lane_run(a, s, 0, (i - d + N) % N, tag, i, k, nd, dd, sent);
        ng = lane_run(a, s, 1, (i + d) % N, tag, (i + d) % N, k, nd, dd, got);
    }
    return ng;
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
            convoy__add_send(s, CONVOY_COMM_NODE, peer, TAG_NODE + step, RUN(q & ~(d - 1), d), nd,
                             dd);
            got = convoy__add_recv(s, CONVOY_COMM_NODE, peer, TAG_NODE + step,
                                   RUN(peer & ~(d - 1), d), nd, dd);
        }
    } else {
        /* Ring: at step r, pass on process q - r's blocks, receive q - r - 1's. */
        const int right = (q + 1) % n, left = (q + n - 1) % n;
        for (int r = 0; r < n - 1; r++) {
            const int nd = got >= 0 ? 1 : ndeps;
            const int *dd = got >= 0 ? (const int[]){got} : deps;
            convoy__add_send(s, CONVOY_COMM_NODE, right, TAG_NODE + r, RUN((q + n - r) % n, 1), nd,
                             dd);
            got = convoy__add_recv(s, CONVOY_COMM_NODE, left, TAG_NODE + r,
                                   RUN((q + 2 * n - r - 1) % n, 1), nd, dd);
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
    if (strided(a)) {
        /* Both phases as plain steps on strided regions (the paper's vector types). */
        int got[2] = {-1, -1};
        const int ng = lane_strided(a, s, CONVOY_DEP(own_copy), got);
        for (int k = 0; k < ng; k++)
            convoy__lane_deps_add(&lane, got[k], s);
        if (own_copy >= 0) convoy__lane_deps_add(&lane, own_copy, s);
        node_strided(a, s, lane.n, lane.v);
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
    const int N = t->nnodes;
    if (strided(a)) {
        /* Bruck over the lanes (n processes of a node sending at once), then recursive
         * doubling or a ring on the node; each moves (size - 1) blocks per process. A
         * lane step of k >= 2 blocks wraps past node N - 1 on some process (node N - 1
         * always): two messages there, each paying its latency. */
        const convoy__machine lane = convoy__lane_level(m, n), node = convoy__lane_level(m, 0);
        const double es = (double)(per * a->rtype.size);
        int lmsgs = 0, nsteps = 0;
        for (int d = 1; d < N; d <<= 1)
            lmsgs += (d < N - d ? d : N - d) >= 2 ? 2 : 1;
        if ((n & (n - 1)) == 0)
            for (int d = 1; d < n; d <<= 1)
                nsteps++;
        else
            nsteps = n - 1;
        return lmsgs * lane.alpha + (N - 1) * lane.beta * es + nsteps * node.alpha +
               (n - 1) * node.beta * N * es;
    }
    /* Both phases in place, least scratch (convoy__lane_agv_group). */
    const int f = CONVOY_LANE_LEAST_SCRATCH | CONVOY_LANE_IN_PLACE;
    return convoy__lane_cost_flags(&b, CONVOY_COLL_ALLGATHERV, N, n, per, f) +
           N * convoy__lane_cost_flags(&b, CONVOY_COLL_ALLGATHERV, n, 0, per, f);
}
