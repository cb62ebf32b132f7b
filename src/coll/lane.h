/*
 * Decomposing a collective into node and lane collectives (Träff and Hunold, papers/004
 * §1-§3), for any communicator: the machinery the `lane` and `hier` builders share.
 *
 * A `lane`/`hier` builder is a parent schedule whose steps are nested child schedules, each
 * built by a registered builder (ring, recdbl, ...) on a sub-topology with derived
 * arguments: one schedule per call, checked as a whole by convoy-check.
 *
 * The groups
 *   node group:   the processes of my node, numbered by node rank (CONVOY_COMM_NODE);
 *   virtual lane: lane j (0 <= j < convoy__lane_count(t) = the largest node's size) has
 *                 one member on every node: node l's process with node rank j mod n_l
 *                 (n_l = that node's size). On regular layouts, consecutive or not, this is
 *                 the paper's lane communicator (node rank j everywhere). On a node with
 *                 fewer processes than the largest node, its processes serve the missing
 *                 lanes round robin (process q serves lanes q, q + n_l, ...), so that every
 *                 lane reaches every node and the data of a missing lane travels with the
 *                 process that serves it: data is never lost and no node needs a relay.
 *   leaders:      node rank 0 of every node, in node order (the `hier` inter-node group; it
 *                 is virtual lane 0).
 * A group's member i is node i (lanes, leaders) or node rank i (node group).
 *
 * The children
 *   convoy__lane_sub_args(a, coll, &sub_topo, concurrent, &sub) derives a child's
 *     arguments: the collective, the sub-topology, the parent's datatypes, operation
 *     properties and parameters, the machine of the child's level (convoy__lane_level);
 *     no segment (concurrent children must not share the segment's flags); not in place;
 *     counts and displacements are the caller's (sub.count, sub.rcounts, sub.displs).
 *     Everything in sub must be the same on every member of the group, `concurrent` too
 *     (use convoy__lane_count(t), not this node's size: nodes differ), or members choose
 *     different algorithms and hang.
 *   convoy__lane_child(s, &sub, map, send, recv, ndeps, deps) builds the cheapest usable
 *     reproducible registered algorithm for sub (by its cost model under sub.machine, the
 *     same choice on every member) and appends it as a nested step: on the node
 *     group (map NULL: sub's rank i is node rank i) or on the group map[0..sub.topo->size)
 *     (ranks of s's communicator; CONVOY_COMM_MAP). send/recv rebase the child's send and
 *     receive buffers onto a region of s (the user's buffers at an offset, or s's scratch):
 *     the child's regions are relative to them. Returns the step, or -1 with s->err set.
 *     A child whose group has one member or that moves nothing is an empty placeholder.
 *   Tag blocks: the executor numbers nested schedules in preorder (sched.h), so the two
 *     sides of a message must have added the same number of children (with the same number
 *     of descendants) before the child they talk in. Therefore: add a child for every group
 *     in a fixed global order, and convoy__lane_placeholder() for a group this process is
 *     not a member of (e.g. the virtual lanes it does not serve); never skip one. If the
 *     trees still differ between ranks (processes serving different numbers of lanes), set
 *     s->tag_blocks to a bound that is the same on every rank (sched.h). Many children on
 *     one group: put them into one bundle (below), which takes one tag block.
 *   Example (Allreduce lane, src/coll/allreduce/allreduce_lane.c): a node bundle of
 *     reduce-scatters, one allreduce child per virtual lane (placeholders where this
 *     process serves none), a node bundle of allgathervs; s->tag_blocks = 3 + L.
 *
 * Sub-topologies (convoy__topo values the children's builders see)
 *   convoy__lane_group_topo(&sub, m, me): m members, each its own node (a lane or the
 *     leaders: every message is inter-node);
 *   convoy__lane_node_topo(&sub, t): my node alone (n members, one node);
 *   convoy__lane_topos(t, &nt, &lt): both, my node and my lane, as the full-lane builders need.
 *   Free with convoy__topo_free.
 *
 * Block division (irregular when n does not divide count): block i of count over n parts
 *   has count / n + (i < count % n) elements and starts at convoy__lane_block_off().
 *   Larger blocks come first, so a block never overlaps an earlier block's start.
 *
 * Zero-copy: children address the user's buffers directly through rebasing and
 * displacements (an allgatherv child's displs are the parent's), so no packing type is
 * needed where each rank's block is contiguous. Where the paper uses a strided vector type
 * (the full-lane Allgather), Convoy's lane Allgather moves strided regions on regular,
 * consecutive layouts with blocks in rank order (allgatherv_lane.c), and otherwise runs
 * one node allgatherv per source node, all in one bundle (the blocks of one node are
 * adjacent on consecutive layouts, and each block is its own message on the others):
 * more messages inside the node, no copies and no scratch (the rooted Gather/Scatter use
 * strided regions too: rooted_lane.h). The checker asserts the scratch a schedule tree
 * allocates (convoy-check --expect-tmp-max 0).
 */
#ifndef CONVOY_LANE_H
#define CONVOY_LANE_H

#include "coll/coll.h"

/* Number of virtual lanes: the largest node's size. */
static inline int convoy__lane_count(const convoy__topo *t)
{
    return t->max_ppn;
}
/* Rank of node `node`'s member of virtual lane j. */
static inline int convoy__lane_member(const convoy__topo *t, int j, int node)
{
    return convoy__topo_rank_at(t, node, j % t->node_size[node]);
}
/* Whether this process serves virtual lane j. */
static inline int convoy__lane_serves(const convoy__topo *t, int j)
{
    return j % t->ppn == t->node_rank;
}
/* Fills map[0..nnodes) with the members of virtual lane j (map[l] on node l). */
void convoy__lane_map(const convoy__topo *t, int j, int32_t *map);

int convoy__lane_group_topo(convoy__topo *sub, int m, int me);
int convoy__lane_node_topo(convoy__topo *sub, const convoy__topo *t);
int convoy__lane_node_topo_of(convoy__topo *sub, int n, int me); /* one node of n */
/* Both at once: my node (nt) and the members of my lane, one per node (lt); on failure
 * neither is left to free. */
int convoy__lane_topos(const convoy__topo *t, convoy__topo *nt, convoy__topo *lt);

static inline int64_t convoy__lane_block(int64_t count, int n, int i)
{
    return count / n + (i < count % n);
}
static inline int64_t convoy__lane_block_off(int64_t count, int n, int i)
{
    return (count / n) * i + (i < count % n ? i : count % n);
}

void convoy__lane_sub_args(const convoy__args *a, int coll, const convoy__topo *sub_topo,
                           int concurrent, convoy__args *sub);
int convoy__lane_child(convoy__schedule *s, const convoy__args *sub, const int32_t *map,
                       convoy__region send, convoy__region recv, int ndeps, const int *deps);
/* The same with a choice of algorithm: CONVOY_LANE_LEAST_SCRATCH takes the cheapest of the
 * usable algorithms whose schedules allocate the least scratch (zero-copy phases: an
 * allgatherv child in place on the final buffer gets one that allocates nothing). */
enum {
    CONVOY_LANE_LEAST_SCRATCH = 1,
    /* Cost models only (convoy__lane_cost_flags): the builder runs the phase in place. */
    CONVOY_LANE_IN_PLACE = 2
};
int convoy__lane_child_flags(convoy__schedule *s, const convoy__args *sub, const int32_t *map,
                             convoy__region send, convoy__region recv, int flags, int ndeps,
                             const int *deps);
/* Scratch bytes a schedule and its nested ones allocate (the zero-copy measure). */
int64_t convoy__lane_tree_tmp(const convoy__schedule *s);
/* An empty child (keeps the tag blocks of later children aligned, see above). */
int convoy__lane_placeholder(convoy__schedule *s, int ndeps, const int *deps);

/* A growable dependency list: steps that a later phase waits for (all children of one
 * phase). add() ignores -1. */
typedef struct convoy__lane_deps {
    int n, cap;
    int *v;
} convoy__lane_deps;
void convoy__lane_deps_add(convoy__lane_deps *d, int step, convoy__schedule *s);
void convoy__lane_deps_free(convoy__lane_deps *d);

/* A bundle: many concurrent children on one group, run as one nested schedule (a phase
 * with one child per source node or lane group would otherwise take a tag block per
 * child, and the tag's bits are few: MPI only promises 15). Each child gets `budget` step
 * tags (algorithms that need more, or nest, are not chosen for a bundle) and its own
 * send/recv rebase (regions of the parent, as for convoy__lane_child; the bundle itself is
 * added with the parent's buffers as they are). convoy__lane_bundle_add() appends the
 * bundle as one nested step (a placeholder if it is empty) and empties it.
 * Zero-initialize, set budget (children per bundle: CONVOY_STEP_TAGS / budget). */
typedef struct convoy__lane_bundle {
    convoy__schedule *c;
    int budget, tags, nchild, err;
} convoy__lane_bundle;
int convoy__lane_bundle_child(convoy__lane_bundle *b, const convoy__args *sub, int flags,
                              convoy__region send, convoy__region recv);
int convoy__lane_bundle_add(convoy__schedule *s, convoy__lane_bundle *b, const int32_t *map, int m,
                            int ndeps, const int *deps);

/* Allgatherv of the parent a (its displs and rcounts, receive buffer) over a group:
 * member i of the group (rank map[i], or node rank i when map is NULL) owns the blocks of
 * the ranks own[first[i] .. first[i+1]) (in this order); afterwards every member has every
 * owned block in place. One child when each member's blocks are consecutive in the
 * receive buffer (one block of their total), else one child per position in the members'
 * lists. Each child's step joins out; with a bundle b the children join it instead
 * (ndeps, deps, out unused: the bundle's step carries them). */
int convoy__lane_agv_group(convoy__schedule *s, const convoy__args *a, int m, int me,
                           const int32_t *map, int concurrent, const int *first, const int *own,
                           int ndeps, const int *deps, convoy__lane_deps *out,
                           convoy__lane_bundle *b);

/* Node-level trees made of plain steps (CONVOY_COMM_NODE, step tags tag..): for phases
 * that are not a registered collective of their own.
 * bcast: binomial tree from node rank root of the regions reg[0..nreg) (the same regions
 *   on every node process; tags tag .. tag + nreg - 1); receives wait for deps, the root's
 *   sends too. Every step joins out.
 * reduce: binomial tree to node rank root for commutative operations: acc holds this
 *   process's contribution once deps are done, and the node's reduction at the root in the
 *   end; tmp is scratch of acc's size. Returns the last step (-1 if acc is empty or the
 *   node has one process and no deps). */
int convoy__lane_node_bcast(convoy__schedule *s, const convoy__topo *t, int root,
                            const convoy__region *reg, int nreg, int tag, int ndeps,
                            const int *deps, convoy__lane_deps *out);
int convoy__lane_node_reduce(convoy__schedule *s, const convoy__topo *t, int root,
                             convoy__region acc, convoy__region tmp, int tag, int ndeps,
                             const int *deps);

/* The machine of one level (lane-aware cost model, coll.h): concurrent <= 0 is the node
 * (alpha_node, beta_node, the node's gap); concurrent = k > 0 is the network with k
 * processes of each node sending at once (beta = max(beta, k * beta_nic), and a measured
 * gap's bytes at that beta too). convoy__lane_sub_args puts it into the
 * child's args, so the child's builder and cost model see its level. */
convoy__machine convoy__lane_level(const convoy__machine *m, int concurrent);
/* Predicted time of the cheapest registered algorithm for sub under sub->machine. */
double convoy__lane_child_cost(const convoy__args *sub);
/* The same for a child of collective coll over m members (concurrent as above) with count
 * elements per member (allgather, allreduce: each member's count; reduce_scatter: the
 * vector, divided evenly): the cost models of lane/hier algorithms use it. */
double convoy__lane_cost_equal(const convoy__args *a, int coll, int m, int concurrent,
                               int64_t count);
/* The same for a phase the builder adds with flags (convoy__lane_child_flags): with
 * CONVOY_LANE_LEAST_SCRATCH the phase in place, costed as the algorithm the builder takes
 * (the cheapest of those allocating least), not the cheapest. */
double convoy__lane_cost_flags(const convoy__args *a, int coll, int m, int concurrent,
                               int64_t count, int flags);
/* The full-lane pattern's first two phases (papers/004 §3.4, §3.5), under m: a node
 * reduce-scatter of a->count elements over the node's n processes, then `coll` on the
 * largest block over the lanes, n lanes at once. */
double convoy__lane_rs_then(const convoy__args *a, const convoy__machine *m, int coll);

#endif
