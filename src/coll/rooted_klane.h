/*
 * The tree the k-ported Gather(v) and Scatter(v) share (papers/004 §5, "non-pipelined tree
 * algorithms"; gather_klane_tree.c, scatter_klane_tree.c): the (k+1)-nomial tree over the
 * relative nodes v = (node - R) mod N of bcast_klane_tree.c, the node's k processes its
 * ports, port i being node rank (i + r) mod k on every node (r: the root's node rank, so
 * the root is port 0, the port with the largest subtrees, which it receives or sends
 * straight in its vector; its node peers relay the smaller ones). Node v's children are
 * v + c (k+1)^q (c = 1..k, port c - 1) for every digit position q below v's lowest
 * non-zero base-(k+1) digit (root node: all positions); a child c talks to its parent through its
 * own port `entry` = (c's lowest digit) - 1, the process that collects (Gather) or receives
 * (Scatter) the child's whole subtree. A subtree is a range of relative nodes [v, end), so its
 * blocks are one packed range: an entry port lays out its node's subtree in scratch, relative node
 * u's blocks (in node-rank order, as bytes) at off[u] - off[v]; the other ports hold only what they
 * relay (their own packed block, then their children's ranges one after another; the builders place
 * those).
 */
#ifndef CONVOY_ROOTED_KLANE_H
#define CONVOY_ROOTED_KLANE_H

#include "coll/lane.h"

enum { CONVOY_KLANE_MAXCHILD = 64 };

typedef struct convoy__rooted_klane {
    int N, k, R, v, end; /* nodes, ports, root node, my relative node, my subtree's end */
    int rot;             /* the root's node rank: port i is node rank (i + rot) mod k */
    int entry;           /* node rank of my node's entry port (the root's on the root node) */
    int parent;          /* rank of the parent's port that talks to my node (-1: root node) */
    int64_t *off;        /* [N + 1] packed bytes of the relative nodes below u */
} convoy__rooted_klane;

int convoy__rooted_klane_applicable(const convoy__args *a);
int convoy__rooted_klane_plan(const convoy__args *a, convoy__rooted_klane *p);
void convoy__rooted_klane_free(convoy__rooted_klane *p);
/* Port `port`'s children of my node: relative node child[i], its subtree's end end[i], and
 * q's exponent lvl[i] (the node-internal step tag 2 + lvl[i] of that range); the number. */
int convoy__rooted_klane_children(const convoy__rooted_klane *p, int port, int *child, int *end,
                                  int *lvl);
/* An entry port's scratch region of the relative nodes [u0, u1) (the subtree layout; another
 * port takes its length and places it), and of node rank q's block on its node. */
convoy__region convoy__rooted_klane_range(const convoy__rooted_klane *p, int u0, int u1);
convoy__region convoy__rooted_klane_piece(const convoy__args *a, int q);
/* The root's end of the message of relative nodes [u0, u1)'s range with peer (numbered in
 * comm): Gather receives it, Scatter sends it, straight in the root's vector (a strided or
 * indexed region, rooted_lane.h: no packing, no scratch). Returns the step (-1: no bytes). */
int convoy__rooted_klane_root_range(const convoy__args *a, const convoy__rooted_klane *p,
                                    convoy__schedule *s, int comm, int peer, int tag, int u0,
                                    int u1);
/* Predicted time (Gather and Scatter alike). */
double convoy__rooted_klane_cost(const convoy__args *a, const convoy__machine *m);

#endif
