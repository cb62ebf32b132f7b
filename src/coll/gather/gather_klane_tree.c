/*
 * Gather and Gatherv by the k-ported tree construction of papers/004 §5 ("non-pipelined
 * tree algorithms", proposed there for Gather and Scatter, never implemented): the node's
 * k = n processes act as the k ports of a (k+1)-nomial tree over the nodes, the reverse of
 * the Bcast `klane_tree` (rooted_klane.h has the tree).
 *
 * Idea: every process packs its block into its node's subtree layout; port i of node v
 * receives, from port i of each of its child nodes, that child's whole subtree (one packed
 * range), all k ports at once; the ports hand their own block and their children's ranges
 * to the node's entry port, which sends the node's subtree (one range) to its parent's port.
 * On the root node the processes send the root their blocks straight into place; the root
 * receives its own children's and its ports' ranges straight into place too (a strided or
 * indexed region per range, rooted_lane.h: no unpacking).
 * ceil(log_{k+1} N) inter-node steps, each followed by one node-internal step: at most
 * twice the k-ported algorithm's steps (the paper's bound).
 *
 * Bytes leaving each node (regular layout, N nodes of n processes, m bytes per process):
 * its subtree's n m |subtree| once, from its entry port; the root node receives (N - 1) n m
 * spread over its k ports (each port's children: about 1/k of the nodes); inside a node
 * every subtree byte crosses once more to the entry port.
 *
 * Cost: ceil(log_{k+1} N)(alpha + (k - 1) alpha_node) + beta_lanes (N n m) / k +
 * beta_node N n m + gamma N n m (rooted_klane.c).
 *
 * Restrictions: regular layouts (k ports on every node, ranks in any order), more than one
 * node, n > 1, every block's size on every rank (not a nonblocking Gatherv). Copies: blocks
 * off the root node are packed once by their owners (packed bytes travel as bytes); the
 * root copies nothing and allocates no scratch (`convoy-check --expect-tmp-root 0`,
 * check_rooted_klane_root_zero_copy). Scratch elsewhere is only what a process relays: an
 * entry port off the root node its node's subtree (it sends it as one message); any other
 * port its own packed block (off the root node) and its children's ranges, one after
 * another -- on the root node that is its child nodes' share, not the message
 * (`--expect-tmp-written`: every scratch byte is the target of one of its own steps).
 * Source: papers/004 §5.
 */
#include "coll/rooted_lane.h"
#include "coll/rooted_klane.h"

enum { TAG_OWN = 0, TAG_LANE = 1, TAG_RANGE = 2 };

int convoy__gather_klane_tree_applicable(const convoy__args *a)
{
    return convoy__rooted_klane_applicable(a);
}

int convoy__gather_klane_tree(const convoy__args *a, convoy__schedule *s)
{
    const convoy__topo *t = a->topo;
    convoy__rooted_klane p;
    if (convoy__rooted_klane_plan(a, &p)) return s->err = CONVOY_ERR_NO_MEM;
    const int me = t->node_rank, rootnode = p.v == 0;
    int ch[CONVOY_KLANE_MAXCHILD], en[CONVOY_KLANE_MAXCHILD], lv[CONVOY_KLANE_MAXCHILD];
    convoy__lane_deps got = {0};
    const int root = t->rank == a->root, entry = me == p.entry;
    /* The root receives every range straight into place; an entry port off the root node
     * collects its node's subtree in its scratch (it sends it as one range); another port
     * holds only what it relays: its own packed block (off the root node), then its
     * children's ranges one after another (`at`). */
    int64_t at = 0;
    /* The own block: into place at the root, straight to the root on its node, else packed. */
    const int64_t mine = convoy__rooted_bytes(a, t->rank);
    if (t->rank == a->root) {
        if (!a->inplace && mine > 0)
            convoy__add_copy(s, convoy__rooted_own(a), convoy__rooted_block(a, t->rank), 0, NULL);
    } else if (rootnode) {
        if (mine > 0)
            convoy__add_send(s, CONVOY_COMM_NODE, p.entry, TAG_OWN, convoy__rooted_own(a), 0, NULL);
    } else if (mine > 0) {
        const convoy__region piece = entry ? convoy__rooted_klane_piece(a, me)
                                           : convoy__reg(CONVOY_BUF_TMP, CONVOY_T_BYTE, 0, mine);
        if (!entry) at = mine;
        const int packed = convoy__add_copy(s, convoy__rooted_own(a), piece, 0, NULL);
        if (!entry)
            convoy__add_send(s, CONVOY_COMM_NODE, p.entry, TAG_OWN, piece, 1, &packed);
        else
            convoy__lane_deps_add(&got, packed, s);
    }
    /* My port: each child's subtree, handed on to the entry port. */
    const int nc = convoy__rooted_klane_children(&p, me, ch, en, lv);
    for (int i = 0; i < nc; i++) {
        convoy__region r = convoy__rooted_klane_range(&p, ch[i], en[i]);
        if (r.count == 0) continue;
        if (!entry) r.off = at, at += r.count;
        if (root) {
            convoy__rooted_klane_root_range(a, &p, s, CONVOY_COMM_ALL,
                                            convoy__topo_rank_at(t, (p.R + ch[i]) % p.N, me),
                                            TAG_LANE, ch[i], en[i]);
            continue;
        }
        const int in =
            convoy__add_recv(s, CONVOY_COMM_ALL, convoy__topo_rank_at(t, (p.R + ch[i]) % p.N, me),
                             TAG_LANE, r, 0, NULL);
        if (!entry)
            convoy__add_send(s, CONVOY_COMM_NODE, p.entry, TAG_RANGE + lv[i], r, 1, &in);
        else
            convoy__lane_deps_add(&got, in, s);
    }
    s->tmp_bytes = root ? 0 : entry ? p.off[p.end] - p.off[p.v] : at;
    if (entry) {
        /* The entry port collects the other ports' blocks and ranges. */
        for (int q = 0; q < p.k; q++) {
            if (q == me) continue;
            const int r = convoy__topo_rank_at(t, t->node, q);
            if (rootnode && convoy__rooted_bytes(a, r) > 0)
                convoy__add_recv(s, CONVOY_COMM_NODE, q, TAG_OWN, convoy__rooted_block(a, r), 0,
                                 NULL);
            else if (!rootnode && convoy__rooted_bytes(a, r) > 0)
                convoy__lane_deps_add(&got,
                                      convoy__add_recv(s, CONVOY_COMM_NODE, q, TAG_OWN,
                                                       convoy__rooted_klane_piece(a, q), 0, NULL),
                                      s);
            const int nq = convoy__rooted_klane_children(&p, q, ch, en, lv);
            for (int i = 0; i < nq; i++) {
                const convoy__region rg = convoy__rooted_klane_range(&p, ch[i], en[i]);
                if (root)
                    convoy__rooted_klane_root_range(a, &p, s, CONVOY_COMM_NODE, q,
                                                    TAG_RANGE + lv[i], ch[i], en[i]);
                else if (rg.count > 0)
                    convoy__lane_deps_add(
                        &got,
                        convoy__add_recv(s, CONVOY_COMM_NODE, q, TAG_RANGE + lv[i], rg, 0, NULL),
                        s);
            }
        }
        const convoy__region all = convoy__rooted_klane_range(&p, p.v, p.end);
        if (!rootnode && all.count > 0)
            convoy__add_send(s, CONVOY_COMM_ALL, p.parent, TAG_LANE, all, got.n, got.v);
    }
    convoy__lane_deps_free(&got);
    convoy__rooted_klane_free(&p);
    return s->err;
}

double convoy__gather_klane_tree_cost(const convoy__args *a, const convoy__machine *m)
{
    return convoy__rooted_klane_cost(a, m);
}
