/*
 * Bcast by the k-ported tree construction of papers/004 §5 ("non-pipelined tree
 * algorithms"): the node's k = n processes act as the k ports of a k-ported tree over the
 * nodes.
 *
 * Idea: the root first sends the message to the other processes of its node. Then, in the
 * (k+1)-nomial tree over relative nodes v = (node - R) mod N, an informed node's process i
 * sends the message to a new node in each step (port i), all k ports at once: node v's
 * children are v + c (k+1)^q for c = 1..k (sent by process c - 1) and every digit position
 * q below v's lowest non-zero base-(k+1) digit (the root node: all positions). A node
 * first reached by its process c - 1 passes the message to its other processes, which
 * then serve as ports too. ceil(log_{k+1} N) inter-node steps, each preceded by one
 * node-internal step: at most twice the k-ported algorithm's steps (the paper's bound).
 * Zero copy: the user's buffer and datatype throughout, no scratch.
 *
 * Bytes leaving each node (N nodes of n processes, m bytes): m per child node, each from a
 * different process (port); every node but the root's receives m, into one process, then
 * m to each of its other n - 1 processes inside the node.
 *
 * Cost: ceil(log_{k+1} N)(alpha + beta m) + (1 + ceil(log_{k+1} N))(k - 1)(alpha_node +
 * beta_node m): the node-internal fan-out is linear, as the construction's one step.
 *
 * Restrictions: regular layouts (k ports on every node, ranks in any order), more than one
 * node, n > 1. Source: papers/004 §5.
 */
#include "coll/lane.h"

int convoy__bcast_klane_tree_applicable(const convoy__args *a)
{
    return convoy__bcast_klane_pipeline_applicable(a);
}

int convoy__bcast_klane_tree(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int N = t->nnodes, k = t->ppn, R = t->node_of[a->root], me = t->node_rank;
    const int v = (t->node - R + N) % N;
    const convoy__region buf = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, 0, a->count);
    if (a->count == 0) return s->err;
    /* Where the message enters this node: the root, or the port of the parent's sender. */
    int span = 1, low = 0; /* (k+1)^q of v's lowest non-zero digit, and that digit */
    while (v > 0 && (v / span) % (k + 1) == 0)
        span *= k + 1;
    if (v > 0) low = (v / span) % (k + 1);
    const int entry = v == 0 ? t->node_rank_of[a->root] : low - 1;
    int have = -1;
    if (me == entry) {
        if (v > 0) {
            const int parent = (R + v - low * span) % N;
            have = convoy__add_recv(s, CONVOY_COMM_ALL, convoy__topo_rank_at(t, parent, entry), 1,
                                    buf, 0, NULL);
        }
        for (int i = 0; i < k; i++)
            if (i != me) convoy__add_send(s, CONVOY_COMM_NODE, i, 0, buf, CONVOY_DEP(have));
    } else {
        have = convoy__add_recv(s, CONVOY_COMM_NODE, entry, 0, buf, 0, NULL);
    }
    /* Port me serves the children v + (me + 1)(k+1)^q, largest q first. */
    long top = 1;
    while (v == 0 ? top < N : top < span)
        top *= k + 1;
    for (long q = top / (k + 1); q >= 1; q /= k + 1) {
        const long child = v + (long)(me + 1) * q;
        if (child < N && (v > 0 || q < top))
            convoy__add_send(s, CONVOY_COMM_ALL,
                             convoy__topo_rank_at(t, (int)((R + child) % N), me), 1, buf,
                             CONVOY_DEP(have));
    }
    return s->err;
}

double convoy__bcast_klane_tree_cost(const convoy__args *a, const convoy__machine *m)
{
    const convoy__topo *t = a->topo;
    const int k = t->max_ppn;
    int depth = 0;
    for (long r = 1; r < t->nnodes; r *= k + 1)
        depth++;
    const double bytes = (double)(a->count * a->rtype.size);
    const convoy__machine lane = convoy__lane_level(m, k), node = convoy__lane_level(m, 0);
    return depth * (lane.alpha + lane.beta * bytes) +
           (1 + depth) * (k - 1) * (node.alpha + node.beta * bytes);
}
