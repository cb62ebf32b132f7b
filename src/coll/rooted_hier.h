/*
 * The plan shared by the hierarchical Gather(v) and Scatter(v) (papers/004 §3.2): on every
 * node the member of the root's virtual lane r0 (node rank r0 mod n_l) is the leader that
 * holds its node's blocks packed in node-rank order; the leaders exchange the nodes' packed
 * data with the root in one Gatherv/Scatterv child on that lane (the root node contributes
 * nothing there: its processes talk to the root directly).
 */
#ifndef CONVOY_ROOTED_HIER_H
#define CONVOY_ROOTED_HIER_H

#include "coll/lane.h"

typedef struct convoy__rooted_hier {
    int R, r0, lead;   /* root node, root's node rank, this node's leader (node rank) */
    int64_t *noff;     /* [ppn + 1] this node's blocks packed in node-rank order */
    int64_t *rc;       /* [2 N] the child's counts (node bytes) and displacements */
    int32_t *map;      /* [N] the lane's members */
    convoy__topo lane; /* the child's topology */
    convoy__args sub;  /* the child */
    int64_t tmp;       /* scratch this process needs */
} convoy__rooted_hier;

int convoy__rooted_hier_plan(const convoy__args *a, convoy__rooted_hier *h);
void convoy__rooted_hier_free(convoy__rooted_hier *h);
/* Offset of node l's process q's block in node l's packed data. */
int64_t convoy__rooted_hier_in_node(const convoy__args *a, int l, int q);
double convoy__rooted_hier_cost(const convoy__args *a, const convoy__machine *m);

#endif
