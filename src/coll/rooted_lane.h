/*
 * The lane layout shared by the full-lane Gather(v) and Scatter(v) (papers/004 §3.2):
 * virtual lane j (lane.h) carries the blocks of the processes with node rank j on every
 * node but the root node R, between them and the root node's process j mod n_R (the lane's
 * root). Those blocks travel packed in node order: lane j's packed data sits at
 * base[j] .. base[j + 1) of the lane area of every root-node process (the same layout on
 * all of them; each uses the lanes it serves), member l's piece at loff[j][l]. A process off
 * the root node packs its own block at the start of its scratch (own bytes).
 */
#ifndef CONVOY_ROOTED_LANE_H
#define CONVOY_ROOTED_LANE_H

#include "coll/lane.h"

typedef struct convoy__rooted_lane {
    int N, L, R, nR, r0;
    int64_t *base; /* [L + 1] lane areas, in bytes from the lane area's start */
    int64_t *loff; /* [L][N + 1] member l's piece within lane j's area */
    int32_t *map;  /* [N] scratch for a lane's members */
    int64_t own;   /* this process's own packed bytes (off the root node), at TMP 0 */
    int64_t tmp;   /* scratch bytes this process needs */
} convoy__rooted_lane;

int convoy__rooted_lane_plan(const convoy__args *a, convoy__rooted_lane *p);
void convoy__rooted_lane_free(convoy__rooted_lane *p);
/* The child of lane j (Gatherv or Scatterv on packed bytes, rooted at node R): rc holds
 * 2 N counts and displacements for it. */
void convoy__rooted_lane_child(const convoy__args *a, const convoy__rooted_lane *p, int j,
                               const convoy__topo *lane, int64_t *rc, convoy__args *sub);
/* Lane j's packed area, and member l's piece of it, in this process's scratch. */
convoy__region convoy__rooted_lane_area(const convoy__rooted_lane *p, int j);
convoy__region convoy__rooted_lane_piece(const convoy__rooted_lane *p, int j, int l);
/* Predicted time of the full-lane Gather(v)/Scatter(v) (the same on every rank). */
double convoy__rooted_lane_cost(const convoy__args *a, const convoy__machine *m);

#endif
