/*
 * Scatter and Scatterv by the k-ported tree construction of papers/004 §5 (proposed there
 * for Gather and Scatter, never implemented): the mirror of the k-ported Gather
 * (gather_klane_tree.c; the tree is in rooted_klane.h).
 *
 * Idea: the root sends its node's processes their own blocks straight into place and each
 * port the ranges of its child nodes' subtrees, each range straight from its vector (a
 * strided or indexed region, rooted_lane.h: the blocks of the range's nodes, in relative
 * node order, arriving packed); port i of node v sends each child node's range to port i of that
 * child, all k ports at once; a node's entry port receives its node's subtree (one range),
 * unpacks its own block and hands the other processes their blocks and their children's
 * ranges. ceil(log_{k+1} N) inter-node steps, each followed by one node-internal step.
 *
 * Bytes leaving each node (regular layout, N nodes of n processes, m bytes per process):
 * the root node sends (N - 1) n m spread over its k ports; every other node receives its
 * subtree's n m |subtree| into its entry port and sends all of it but its own n m on.
 *
 * Cost: as the k-ported Gather (rooted_klane.c). Restrictions: regular layouts, more than
 * one node, n > 1, every block's size on every rank (not a nonblocking Scatterv). Copies:
 * none at the root (it allocates no scratch: `convoy-check --expect-tmp-root 0`,
 * check_rooted_klane_root_zero_copy); each owner off the root node unpacks its own block.
 * Scratch: an entry port off the root node holds its node's subtree (it arrives as one
 * message), any other port only its own packed block (off the root node) and its
 * children's ranges -- on the root node its child nodes' share, not the message
 * (`--expect-tmp-written`). Source: papers/004 §5.
 */
#include "coll/rooted_lane.h"
#include "coll/rooted_klane.h"

enum { TAG_OWN = 0, TAG_LANE = 1, TAG_RANGE = 2 };

int convoy__scatter_klane_tree_applicable(const convoy__args *a)
{
    return convoy__rooted_klane_applicable(a);
}

/* Sends port q's children's ranges (q == me: to the children, else to node process q; the
 * root straight from its vector). */
static void hand_on(const convoy__args *a, const convoy__rooted_klane *p, convoy__schedule *s,
                    int q, int ndeps, const int *deps)
{
    const convoy__topo *t = a->topo;
    int ch[CONVOY_KLANE_MAXCHILD], en[CONVOY_KLANE_MAXCHILD], lv[CONVOY_KLANE_MAXCHILD];
    const int nq = convoy__rooted_klane_children(p, q, ch, en, lv);
    for (int i = 0; i < nq; i++) {
        const convoy__region r = convoy__rooted_klane_range(p, ch[i], en[i]);
        if (r.count == 0) continue;
        if (t->rank == a->root) /* straight from the vector */
            convoy__rooted_klane_root_range(
                a, p, s, q == t->node_rank ? CONVOY_COMM_ALL : CONVOY_COMM_NODE,
                q == t->node_rank ? convoy__topo_rank_at(t, (p->R + ch[i]) % p->N, q) : q,
                q == t->node_rank ? TAG_LANE : TAG_RANGE + lv[i], ch[i], en[i]);
        else if (q == t->node_rank)
            convoy__add_send(s, CONVOY_COMM_ALL, convoy__topo_rank_at(t, (p->R + ch[i]) % p->N, q),
                             TAG_LANE, r, ndeps, deps);
        else
            convoy__add_send(s, CONVOY_COMM_NODE, q, TAG_RANGE + lv[i], r, ndeps, deps);
    }
}

int convoy__scatter_klane_tree(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    convoy__rooted_klane p;
    if (convoy__rooted_klane_plan(a, &p)) return s->err = CONVOY_ERR_NO_MEM;
    const int me = t->node_rank, rootnode = p.v == 0;
    int ch[CONVOY_KLANE_MAXCHILD], en[CONVOY_KLANE_MAXCHILD], lv[CONVOY_KLANE_MAXCHILD];
    s->tmp_bytes = p.off[p.end] - p.off[p.v];
    const int64_t mine = convoy__rooted_bytes(a, t->rank);
    if (me == p.entry && rootnode) {
        /* The root: its own block, its node's blocks and every range straight from the
         * vector (no packing, no scratch). */
        s->tmp_bytes = 0;
        if (!a->inplace && mine > 0)
            convoy__add_copy(s, convoy__rooted_block(a, t->rank), convoy__rooted_own(a), 0, NULL);
        for (int q = 0; q < p.k; q++) {
            const int r = convoy__topo_rank_at(t, t->node, q);
            if (q != me && convoy__rooted_bytes(a, r) > 0)
                convoy__add_send(s, CONVOY_COMM_NODE, q, TAG_OWN, convoy__rooted_block(a, r), 0,
                                 NULL);
            hand_on(a, &p, s, q, 0, NULL);
        }
    } else if (me == p.entry) {
        /* An entry port: the node's subtree from the parent's port, then handed out. */
        const convoy__region all = convoy__rooted_klane_range(&p, p.v, p.end);
        const int have =
            all.count > 0 ? convoy__add_recv(s, CONVOY_COMM_ALL, p.parent, TAG_LANE, all, 0, NULL)
                          : -1;
        if (mine > 0)
            convoy__add_copy(s, convoy__rooted_klane_piece(a, me), convoy__rooted_own(a),
                             CONVOY_DEP(have));
        for (int q = 0; q < p.k; q++) {
            const convoy__region piece = convoy__rooted_klane_piece(a, q);
            if (q != me && piece.count > 0)
                convoy__add_send(s, CONVOY_COMM_NODE, q, TAG_OWN, piece, CONVOY_DEP(have));
            hand_on(a, &p, s, q, CONVOY_DEP(have));
        }
    } else {
        /* Another port: its own block (straight into place on the root node), its
         * children's ranges from the entry port, sent on to the children. It holds only
         * those: its own packed block (off the root node), then the ranges one after
         * another (`at`), not its node's subtree. */
        int64_t at = 0;
        if (mine > 0 && rootnode) {
            convoy__add_recv(s, CONVOY_COMM_NODE, p.entry, TAG_OWN, convoy__rooted_own(a), 0, NULL);
        } else if (mine > 0) {
            const convoy__region piece = convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, 0, mine);
            at = mine;
            const int in = convoy__add_recv(s, CONVOY_COMM_NODE, p.entry, TAG_OWN, piece, 0, NULL);
            convoy__add_copy(s, piece, convoy__rooted_own(a), 1, &in);
        }
        const int nc = convoy__rooted_klane_children(&p, me, ch, en, lv);
        for (int i = 0; i < nc; i++) {
            convoy__region r = convoy__rooted_klane_range(&p, ch[i], en[i]);
            if (r.count == 0) continue;
            r.off = at, at += r.count;
            const int in =
                convoy__add_recv(s, CONVOY_COMM_NODE, p.entry, TAG_RANGE + lv[i], r, 0, NULL);
            convoy__add_send(s, CONVOY_COMM_ALL, convoy__topo_rank_at(t, (p.R + ch[i]) % p.N, me),
                             TAG_LANE, r, 1, &in);
        }
        s->tmp_bytes = at;
    }
    convoy__rooted_klane_free(&p);
    return s->err;
}

double convoy__scatter_klane_tree_cost(const convoy__args *a, const convoy__machine *m)
{
    return convoy__rooted_klane_cost(a, m);
}
