/*
 * The decomposition of a communicator into nodes and lanes (Träff and Hunold,
 * papers/004 §1): the node communicator holds the processes that share memory, lane
 * communicator j holds the processes with node rank j, one per node that has one.
 *
 * This header is pure data and pure functions (no MPI), so that builders, the checker and
 * the unit tests all see the same decomposition. src/topo/topo_mpi.c fills it in for a
 * real communicator.
 *
 * Nodes are numbered 0..nnodes-1 in the order of their lowest rank; within a node,
 * processes are numbered by rank (node rank). A node's leader is its node rank 0.
 */
#ifndef CONVOY_TOPO_H
#define CONVOY_TOPO_H

#include <stddef.h>
#include <stdint.h>

enum {
    CONVOY_TOPO_REGULAR = 1,     /* every node has the same number of processes */
    CONVOY_TOPO_CONSECUTIVE = 2, /* each node's ranks form one consecutive block */
    CONVOY_TOPO_UNIFORM = 4      /* regular and consecutive: rank = node * ppn + node rank */
};

typedef struct convoy__topo {
    int size; /* processes in the communicator */
    int rank; /* this process */
    int nnodes;
    int flags;
    int *node_of;      /* [size] node of each rank */
    int *node_rank_of; /* [size] node rank of each rank */
    int *node_size;    /* [nnodes] processes per node */
    int *node_first;   /* [nnodes+1] offsets into members */
    int *members;      /* [size] ranks grouped by node, ascending within a node */
    int max_ppn;       /* largest node */
    /* This process's view, derived from the above. */
    int node, node_rank, ppn;
    int lane_size, lane_rank; /* lane = the processes with my node rank */
} convoy__topo;

/* Builds the topology from the node id of every rank (any integers; equal ids share a
 * node). Returns 0, or an MPI error code (out of memory, bad arguments). */
int convoy__topo_from_ids(convoy__topo *t, int size, int rank, const int64_t *ids);
void convoy__topo_free(convoy__topo *t);
int convoy__topo_copy(convoy__topo *dst, const convoy__topo *src);

/* Rank of the process with node rank nr on node n, or -1. */
static inline int convoy__topo_rank_at(const convoy__topo *t, int n, int nr)
{
    return nr < t->node_size[n] ? t->members[t->node_first[n] + nr] : -1;
}
/* The rank of lane peer l (the l-th node, in node order, that has my node rank). */
int convoy__topo_lane_peer(const convoy__topo *t, int l);
/* Lane rank of the given rank within its own lane. */
int convoy__topo_lane_rank_of(const convoy__topo *t, int rank);

/* Layouts for tests and the checker: fill ids[size] with node ids.
 * regular:    blocks of ppn consecutive ranks (the last node may be smaller);
 * nonuniform: consecutive blocks of varying size 1..2*ppn-1 (deterministic from seed);
 * scattered:  nodes of ppn ranks dealt out in a shuffled order (non-consecutive ranks). */
enum { CONVOY_LAYOUT_REGULAR, CONVOY_LAYOUT_NONUNIFORM, CONVOY_LAYOUT_SCATTERED };
int convoy__layout_ids(int layout, int size, int ppn, uint64_t seed, int64_t *ids);
int convoy__layout_parse(const char *name);
const char *convoy__layout_name(int layout);

/* Parses CONVOY_NODEMAP ("0,0,1,1,...", node id per world rank). Returns the number of
 * entries, or -1 if malformed. */
int convoy__nodemap_parse(const char *s, int64_t *ids, int max);

#endif
