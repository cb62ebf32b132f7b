/*
 * Allgatherv by topology-aware gatherv + allgatherv + bcast (the "topology aware gatherv +
 * bcast" of Intel MPI that papers/000 compares with; the hierarchical scheme of
 * Träff and Hunold, papers/004 §1, with the node leaders as the only lane).
 *
 * Idea, in three phases:
 *   1. gatherv: every process sends its block to its node's leader (node rank 0), which
 *      receives it straight into its final place;
 *   2. allgatherv among the leaders: a linear ring over the nodes (in node order, leaders
 *      addressed through topo->members), each message one node's blocks;
 *   3. bcast: the leader sends the complete result down a binomial tree over its node's
 *      processes (node ranks; a node rank's parent is itself with its lowest set bit
 *      cleared, so the result reaches ppn processes in ceil(log2 ppn) rounds).
 * Nodes may differ in size and hold non-consecutive ranks: everything is in node terms.
 *
 * A node's blocks are scattered over the receive buffer (any displacements, any receive
 * datatype), so the data travels packed as bytes in scratch memory in node order (nodes in
 * order, a node's processes by node rank): a node's blocks are one contiguous range for the
 * ring and the whole result one contiguous range for the bcast. Leaders pack their node's
 * blocks as they arrive; every process unpacks what it did not have as soon as it arrives.
 * Empty messages are not sent (both sides know the counts).
 *
 * Cost: gatherv: the busiest leader's sum over its other processes of alpha + beta m_i;
 * ring: (nnodes - 1)(alpha + beta * (largest node's bytes)); bcast: ceil(log2 max ppn)
 * (alpha + beta n) for a total of n bytes; packing and unpacking, a local pass over n bytes,
 * gamma n. Rounds: about (max ppn - 1) + (nnodes - 1) + ceil(log2 max ppn). Only the leaders
 * cross nodes, one message per round each: good for small data on many nodes with few
 * processes each; the bcast of n bytes makes it poor for large data.
 *
 * Restrictions: none (any layout, one node, one process per node).
 */
#include "coll/coll.h"

#include <stdlib.h>

/* Ring tags repeat after TAG_RING_SPAN rounds (beyond 513 nodes); the executor then posts
 * a tag's messages in round order (docs/architecture.md, "Tags"). */
enum { TAG_GATHER = 0, TAG_RING = 1, TAG_RING_SPAN = 512, TAG_BCAST = 1000 };

/* Byte offsets of the blocks packed in node order: off[rank] (size p), noff[node] .. noff[node
 * + 1] (size nnodes + 1). Returns 0, or CONVOY_ERR_NO_MEM. */
static int node_offsets(const convoy__args *a, int64_t **off, int64_t **noff)
{
    const convoy__topo *t = a->topo;
    *off = malloc((size_t)t->size * sizeof **off);
    *noff = malloc((size_t)(t->nnodes + 1) * sizeof **noff);
    if (!*off || !*noff) {
        free(*off);
        free(*noff);
        return CONVOY_ERR_NO_MEM;
    }
    int64_t pos = 0;
    for (int n = 0; n < t->nnodes; n++) {
        (*noff)[n] = pos;
        for (int k = t->node_first[n]; k < t->node_first[n + 1]; k++) {
            const int i = t->members[k];
            (*off)[i] = pos;
            pos += a->rcounts[i] * a->rtype.size;
        }
    }
    (*noff)[t->nnodes] = pos;
    return 0;
}

int convoy__allgatherv_gatherv_bcast(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    const int p = t->size, r = t->rank, node = t->node, nnodes = t->nnodes;
    const int64_t ext = a->rtype.extent;
    const convoy__region own_src = convoy__agv_own(a);
    convoy__agv_copy_own(a, s);
    if (p == 1) return s->err;

    int64_t *off, *noff;
    if (node_offsets(a, &off, &noff)) return CONVOY_ERR_NO_MEM;
    const int64_t total = noff[nnodes];
    int *deps = malloc((size_t)(p + 1) * sizeof *deps);
    if (!deps || total == 0) {
        free(deps);
        free(off);
        free(noff);
        return deps ? s->err : CONVOY_ERR_NO_MEM;
    }
    s->tmp_bytes = total;
#define PACKED(o, bytes) convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, (o), (bytes))
#define BLOCK(i) convoy__reg(CONVOY_BUF_RECV, CONVOY_T_RECV, a->displs[i] * ext, a->rcounts[i])
#define BYTES(i) (a->rcounts[i] * a->rtype.size)
    int ndeps = 0; /* deps[]: steps after which the packed data held so far is complete */
    int result;    /* the step after which the complete result is packed (leader: -1) */

    if (t->node_rank > 0) {
        /* 1. Own block to the leader; 3. the result from the parent in the tree. */
        if (a->rcounts[r] > 0)
            convoy__add_send(s, CONVOY_COMM_ALL, convoy__topo_rank_at(t, node, 0), TAG_GATHER,
                             own_src, 0, NULL);
        const int parent = t->node_rank & (t->node_rank - 1);
        result = convoy__add_recv(s, CONVOY_COMM_ALL, convoy__topo_rank_at(t, node, parent),
                                  TAG_BCAST, PACKED(0, total), 0, NULL);
        deps[ndeps++] = result;
        for (int i = 0; i < p; i++)
            if (i != r && a->rcounts[i] > 0)
                convoy__add_copy(s, PACKED(off[i], BYTES(i)), BLOCK(i), 1, &result);
    } else {
        /* 1. The node's blocks, received in place and packed. */
        if (a->rcounts[r] > 0)
            deps[ndeps++] = convoy__add_copy(s, own_src, PACKED(off[r], BYTES(r)), 0, NULL);
        for (int k = 1; k < t->ppn; k++) {
            const int i = convoy__topo_rank_at(t, node, k);
            if (a->rcounts[i] == 0) continue;
            int rcv = convoy__add_recv(s, CONVOY_COMM_ALL, i, TAG_GATHER, BLOCK(i), 0, NULL);
            deps[ndeps++] = convoy__add_copy(s, BLOCK(i), PACKED(off[i], BYTES(i)), 1, &rcv);
        }
        /* 2. Ring over the leaders: in round k, forward node (node - k)'s blocks to the next
         * leader and receive node (node - k - 1)'s from the previous one. */
        const int next = convoy__topo_rank_at(t, (node + 1) % nnodes, 0);
        const int prev = convoy__topo_rank_at(t, (node - 1 + nnodes) % nnodes, 0);
        int last = -1;            /* the receive of the node data forwarded next */
        int window[2] = {-1, -1}; /* the last two receives, oldest first */
        const int nown = ndeps;   /* round 0 sends once the own node is packed */
        for (int k = 0; k < nnodes - 1; k++) {
            const int sn = ((node - k) % nnodes + nnodes) % nnodes;
            const int rn = ((node - k - 1) % nnodes + nnodes) % nnodes;
            const int tag = TAG_RING + k % TAG_RING_SPAN;
            if (noff[sn + 1] > noff[sn]) {
                const convoy__region src = PACKED(noff[sn], noff[sn + 1] - noff[sn]);
                if (k == 0)
                    convoy__add_send(s, CONVOY_COMM_ALL, next, tag, src, nown, deps);
                else
                    convoy__add_send(s, CONVOY_COMM_ALL, next, tag, src, CONVOY_DEP(last));
            }
            last = -1;
            if (noff[rn + 1] > noff[rn]) {
                last = convoy__add_recv(s, CONVOY_COMM_ALL, prev, tag,
                                        PACKED(noff[rn], noff[rn + 1] - noff[rn]),
                                        CONVOY_DEP(window[0]));
                window[0] = window[1];
                window[1] = last;
                deps[ndeps++] = last;
                for (int j = t->node_first[rn]; j < t->node_first[rn + 1]; j++) {
                    const int i = t->members[j];
                    if (a->rcounts[i] > 0)
                        convoy__add_copy(s, PACKED(off[i], BYTES(i)), BLOCK(i), 1, &last);
                }
            }
        }
        result = -1;
    }

    /* 3. Binomial tree: children are node_rank + m for m = lowest set bit / 2, / 4, ..., 1
     * (the leader: every power of two below ppn), the largest subtree first. */
    int m = 1;
    while (m < t->ppn && !(t->node_rank & m))
        m <<= 1;
    for (m >>= 1; m >= 1; m >>= 1)
        if (t->node_rank + m < t->ppn)
            convoy__add_send(s, CONVOY_COMM_ALL, convoy__topo_rank_at(t, node, t->node_rank + m),
                             TAG_BCAST, PACKED(0, total), result >= 0 ? 1 : ndeps,
                             result >= 0 ? &result : deps);
#undef BYTES
#undef BLOCK
#undef PACKED
    free(deps);
    free(off);
    free(noff);
    return s->err;
}

double convoy__allgatherv_gatherv_bcast_cost(const convoy__args *a, const convoy__machine *m)
{
    const convoy__topo *t = a->topo;
    if (t->size == 1) return 0;
    int64_t *off, *noff;
    if (node_offsets(a, &off, &noff)) return 1e300;
    const int64_t total = noff[t->nnodes];
    double gather = 0;
    int64_t big = 0;
    for (int n = 0; n < t->nnodes; n++) {
        double g = 0;
        for (int k = t->node_first[n] + 1; k < t->node_first[n + 1]; k++) {
            const int64_t b = a->rcounts[t->members[k]] * a->rtype.size;
            if (b > 0) g += m->alpha + m->beta * (double)b;
        }
        if (g > gather) gather = g;
        if (noff[n + 1] - noff[n] > big) big = noff[n + 1] - noff[n];
    }
    free(off);
    free(noff);
    if (total == 0) return 0;
    const int depth = t->max_ppn > 1 ? convoy__log2_floor(t->max_ppn - 1) + 1 : 0;
    return gather + (t->nnodes - 1) * (m->alpha + m->beta * (double)big) +
           depth * (m->alpha + m->beta * (double)total) + m->gamma * (double)total;
}
