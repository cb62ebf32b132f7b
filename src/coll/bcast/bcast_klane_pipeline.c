/*
 * Bcast by the pipelined k-lane construction of papers/004 §5 (Proposition 1), never
 * implemented by its authors: the linear pipeline over the N nodes replicated into k = n
 * pipelines, one per lane, with a node-internal exchange per step.
 *
 * Idea: the message is cut into nb pipeline blocks, each block into k pieces (piece (b, j):
 * elements of block b for lane j). Nodes form a chain from the root's node R (relative node
 * v = 0 .. N-1); lane j's replica on a node is its process with node rank j.
 *   - Root's first step: the root sends piece (b, j) to its node's process j (j != r0).
 *   - Steady state: the replica j of node v receives piece (b, j) from replica j of node
 *     v - 1, sends it to replica j of node v + 1, and exchanges it with its node's other
 *     replicas (it sends (b, j) to each, receives (b, j') from each): after the step every
 *     process of the node has block b.
 *   - The root cannot exchange (it is busy feeding the pipelines), so the root node's other
 *     processes miss piece (b, r0); the last node's replicas supply it: replica j of node
 *     N - 1 sends the piece (b, r0) it got in its exchange back to replica j of the root
 *     node (the construction's extra edge from a leaf of T_j to the root replica r_j).
 * Everything stays in the user's buffer and datatype (pieces are element ranges): zero
 * copy, no scratch.
 *
 * Steps: nb + N + 1 (the pipeline's nb + N - 1, the root's first step, the leaves' extra
 * step back), each moving m/(nb k) bytes per lane and (k - 1) such pieces inside a node:
 * Proposition 1's T(P/k, m/k, B) + O(1). The pipelines carry m/k each, so with k physical
 * lanes the inter-node bandwidth term is m/k.
 *
 * Bytes leaving each node (N nodes of n processes, m bytes): m, m/n per process (lane);
 * each node receives m, m/n per process; the last node also sends (n - 1) m/n back to the
 * root node (the paper's construction), which receives (n - 1) m/n. Per lane and per rank
 * the inter-node bytes are equal up to the root node's and the last node's extras.
 *
 * Cost, where the setup measured the node exchange's gap (coll.h, convoy__xgap: what one
 * message sent and one received cost their process, one after the other):
 *   node(p) + (N + 1) lane(p) + nb max(k xgap(p), lane(p) + node(p)),
 * p = m/(nb k) the piece, lane(p) = alpha + beta p with k lanes at once (beta = max(beta,
 * k beta_nic)), node(p) = alpha_node + beta_node p: the root's first step, the chain of
 * N - 1 lane hops plus the leaves' step back and the last one, and per block the slower of
 * a replica's own work (its lane piece in and out and k - 1 pieces exchanged with its
 * node: k message pairs, serialised on the process) and one lane and one node message.
 * nb minimises it (CONVOY_BCAST_KLANE_BLOCKS overrides). Before, the node exchange was one
 * node message per step ((nb + N + 1)(lane(p) + node(p)), which stays where the gap is not
 * measured, with nb = sqrt((N + 1) beta m / (k alpha))): SMPI charges each send and receive
 * its software cost on its process (smpi/ois, smpi/or), so on the simulated VSC-3 16 x 16,
 * 16000 ints, it predicted 163.1 us for a run of 210.0 (4 blocks: each replica's 16 pairs
 * of 1000-byte pieces, 30 us per block); now 197 (3 blocks), and `lane` (146.9 simulated)
 * is chosen. The simulated Hydra 4 x 8, 64 Ki ints: 126.7 predicted, 133.4 simulated.
 * Where processes share cores, every block has all of them receiving their k pieces at
 * once, so it takes at least share (nb k alpha + m beta) (convoy__shared_cores_work), which
 * the block count's choice sees too: np 4 as 2 x 2 on 2 cores, 1M ints, it was predicted
 * 988 us against the library's 895 and `lane`'s 926, measured 1.80 of the library's
 * (`lane` 0.82), and the drop-in served it at 1.53 of the library's; now predicted
 * 1089-2244 us, above the library's 819-2095 in four runs.
 *
 * Restrictions: regular layouts (every node has n processes, ranks in any order), more than
 * one node, n > 1. Source: papers/004 §5 (construction and Proposition 1).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "coll/lane.h"

/* Step tags: four kinds per block; block b uses those of b mod TAG_SPAN. A replica's sends
 * wait for receives, which MPI reports done in any order: the executor posts the messages
 * of a repeated tag in block order (src/sched/exec.c), or two blocks' pieces could land in
 * each other's place (seen on MPICH at 354 blocks before it did). */
enum {
    TAG_ROOT = 0,
    TAG_LANE = 1,
    TAG_NODE = 2,
    TAG_BACK = 3,
    TAG_KINDS = 4,
    TAG_SPAN = CONVOY_STEP_TAGS / TAG_KINDS
};

int convoy__bcast_klane_pipeline_applicable(const convoy__args *a)
{
    const convoy__topo *t = a->topo;
    return t->nnodes > 1 && t->max_ppn > 1 && (t->flags & CONVOY_TOPO_REGULAR);
}

/* The model's time with nb pipeline blocks (see the top). */
static double pipeline_time(const convoy__args *a, const convoy__machine *m, double nb)
{
    const convoy__topo *t = a->topo;
    const int k = t->max_ppn, N = t->nnodes;
    const double piece = (double)(a->count * a->rtype.size) / (nb * k);
    const convoy__machine lane = convoy__lane_level(m, k), node = convoy__lane_level(m, 0);
    const double lmsg = lane.alpha + lane.beta * piece,
                 nmsg = k > 1 ? node.alpha + node.beta * piece : 0;
    /* Where processes share cores, every block has all of them receiving k pieces at once:
     * at least convoy__shared_cores_work of nb k waits and the whole message. */
    const double shared = convoy__shared_cores_work(m, nb * k, nb * k * piece);
    if (m->xgap_node <= 0) {
        const double total = (nb + N + 1) * (lmsg + nmsg);
        return total > shared ? total : shared;
    }
    /* Per block, each replica receives and sends its lane piece and exchanges k - 1
     * pieces with its node: k message pairs of its own, one after the other. */
    const double work = k * convoy__xgap(m, piece), block = work > lmsg + nmsg ? work : lmsg + nmsg;
    const double total = nmsg + (N + 1) * lmsg + nb * block;
    return total > shared ? total : shared;
}

int64_t convoy__bcast_klane_pipeline_blocks(const convoy__args *a)
{
    const convoy__topo *t = a->topo;
    const int k = t->max_ppn;
    int64_t nb = convoy__param_get(a, "CONVOY_BCAST_KLANE_BLOCKS", 0);
    int64_t most = a->count / k > 1 ? a->count / k : 1;
    if (nb <= 0 && a->machine.xgap_node > 0) {
        /* The block count with the least modelled time (it is convex in nb). */
        double best = 0;
        for (int64_t b = 1; b <= most; b++) {
            const double tb = pipeline_time(a, &a->machine, (double)b);
            if (b > 1 && tb >= best) break;
            best = tb, nb = b;
        }
    } else if (nb <= 0) {
        const double m = (double)(a->count * a->rtype.size);
        const double alpha = a->machine.alpha > 0 ? a->machine.alpha : 1e-6;
        nb = (int64_t)sqrt((t->nnodes + 1) * a->machine.beta * m / (k * alpha));
    }
    return nb < 1 ? 1 : nb > most ? most : nb;
}

/* The builder on the call in bytes (convoy__build_in_bytes). */
static int klane_pipeline(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int N = t->nnodes, k = t->ppn, R = t->node_of[a->root], r0 = t->node_rank_of[a->root];
    const int j = t->node_rank, v = (t->node - R + N) % N;
    const int next = v + 1 < N ? convoy__topo_rank_at(t, (t->node + 1) % N, j) : -1;
    const int prev = v > 0 ? convoy__topo_rank_at(t, (t->node - 1 + N) % N, j) : -1;
    const int64_t nb = convoy__bcast_klane_pipeline_blocks(a), np = nb * k;
    if (a->count == 0) return s->err;
#define PIECE(b, i)                                                                                \
    convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV,                                                    \
                convoy__lane_block_off(a->count, (int)np, (int)((b)*k + (i))) * a->rtype.extent,   \
                convoy__lane_block(a->count, (int)np, (int)((b)*k + (i))))
#define TAG(b, kind) ((int)((b) % TAG_SPAN) * TAG_KINDS + (kind))
    for (int64_t b = 0; b < nb; b++) {
        const convoy__region mine = PIECE(b, j);
        int have = -1; /* the step after which piece (b, j) is here (-1: at the root, now) */
        if (v == 0 && j == r0) {
            /* The root feeds every pipeline. */
            for (int i = 0; i < k; i++)
                if (i != r0 && PIECE(b, i).count > 0)
                    convoy__add_send(s, CONVOY_COMM_NODE, i, TAG(b, TAG_ROOT), PIECE(b, i), 0,
                                     NULL);
        } else if (mine.count > 0) {
            have =
                v == 0
                    ? convoy__add_recv(s, CONVOY_COMM_NODE, r0, TAG(b, TAG_ROOT), mine, 0, NULL)
                    : convoy__add_recv(s, CONVOY_COMM_ALL, prev, TAG(b, TAG_LANE), mine, 0, NULL);
        }
        if (next >= 0 && mine.count > 0)
            convoy__add_send(s, CONVOY_COMM_ALL, next, TAG(b, TAG_LANE), mine, CONVOY_DEP(have));
        /* Node exchange (the root takes no part: it has everything). */
        if (v == 0 && j == r0) continue;
        int from_r0 = -1; /* the last node: when piece (b, r0) is here */
        for (int i = 0; i < k; i++) {
            if (i == j || (v == 0 && i == r0)) continue;
            if (mine.count > 0)
                convoy__add_send(s, CONVOY_COMM_NODE, i, TAG(b, TAG_NODE), mine, CONVOY_DEP(have));
            if (PIECE(b, i).count > 0) {
                const int got = convoy__add_recv(s, CONVOY_COMM_NODE, i, TAG(b, TAG_NODE),
                                                 PIECE(b, i), 0, NULL);
                if (i == r0) from_r0 = got;
            }
        }
        /* The root node's replicas get piece (b, r0) back from the last node's. */
        const convoy__region back = PIECE(b, r0);
        if (back.count == 0) continue;
        if (v == 0)
            convoy__add_recv(s, CONVOY_COMM_ALL, convoy__topo_rank_at(t, (R + N - 1) % N, j),
                             TAG(b, TAG_BACK), back, 0, NULL);
        else if (v == N - 1 && j != r0)
            convoy__add_send(s, CONVOY_COMM_ALL, convoy__topo_rank_at(t, R, j), TAG(b, TAG_BACK),
                             back, CONVOY_DEP(from_r0));
    }
#undef TAG
#undef PIECE
    return s->err;
}

static double klane_pipeline_cost(const convoy__args *a, const convoy__machine *m)
{
    convoy__args b = *a;
    b.machine = *m;
    return pipeline_time(a, m, (double)convoy__bcast_klane_pipeline_blocks(&b));
}

static void klane_pipeline_explain(const convoy__args *a, char *buf, size_t len)
{
    snprintf(buf, len, "%lld pipeline blocks of %d pieces (CONVOY_BCAST_KLANE_BLOCKS)",
             (long long)convoy__bcast_klane_pipeline_blocks(a), a->topo->max_ppn);
}

int convoy__bcast_klane_pipeline(const convoy__args *a, convoy__schedule *s)
{
    return convoy__build_in_bytes(a, s, klane_pipeline);
}

double convoy__bcast_klane_pipeline_cost(const convoy__args *a, const convoy__machine *m)
{
    return convoy__cost_in_bytes(a, m, klane_pipeline_cost);
}

void convoy__bcast_klane_pipeline_explain(const convoy__args *a, char *buf, size_t len)
{
    convoy__explain_in_bytes(a, buf, len, klane_pipeline_explain);
}
