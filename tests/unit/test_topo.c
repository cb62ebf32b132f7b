/*
 * Topology math without MPI: convoy__topo_from_ids on hand-made node id arrays, with the
 * expected decomposition derived by hand (nodes numbered by their lowest rank, node ranks
 * by rank, lanes, the REGULAR / CONSECUTIVE / UNIFORM flags), the test layouts and the
 * CONVOY_NODEMAP parser.
 */
#include <stdlib.h>
#include <string.h>

#include "sched/sched.h"
#include "topo/topo.h"
#include "unit.h"

static int same_ints(const int *a, const int *b, int n)
{
    return memcmp(a, b, (size_t)n * sizeof *a) == 0;
}

/* Everything a rank's view should say, for one rank. */
typedef struct view {
    int rank, node, node_rank, ppn, lane_size, lane_rank;
} view;

static void expect_topo(const char *name, int P, const int64_t *ids, int nnodes, int flags,
                        int max_ppn, const int *node_of, const int *node_rank_of,
                        const int *node_size, const int *members, const view *views, int nviews)
{
    for (int k = 0; k < nviews; k++) {
        const view *v = &views[k];
        convoy__topo t;
        int rc = convoy__topo_from_ids(&t, P, v->rank, ids);
        EXPECT(rc == 0, "%s: from_ids rank %d returned %d", name, v->rank, rc);
        if (rc) continue;
        EXPECT(t.size == P && t.rank == v->rank, "%s: size/rank", name);
        EXPECT(t.nnodes == nnodes, "%s: nnodes %d, expected %d", name, t.nnodes, nnodes);
        EXPECT(t.flags == flags, "%s: flags %d, expected %d", name, t.flags, flags);
        EXPECT(t.max_ppn == max_ppn, "%s: max_ppn %d, expected %d", name, t.max_ppn, max_ppn);
        EXPECT(same_ints(t.node_of, node_of, P), "%s: node_of", name);
        EXPECT(same_ints(t.node_rank_of, node_rank_of, P), "%s: node_rank_of", name);
        EXPECT(same_ints(t.node_size, node_size, nnodes), "%s: node_size", name);
        EXPECT(same_ints(t.members, members, P), "%s: members", name);
        int first = 0;
        for (int n = 0; n < nnodes; n++) {
            EXPECT(t.node_first[n] == first, "%s: node_first[%d] = %d, expected %d", name, n,
                   t.node_first[n], first);
            first += node_size[n];
        }
        EXPECT(t.node_first[nnodes] == P, "%s: node_first[nnodes]", name);
        EXPECT(t.node == v->node, "%s rank %d: node %d, expected %d", name, v->rank, t.node,
               v->node);
        EXPECT(t.node_rank == v->node_rank, "%s rank %d: node_rank %d, expected %d", name, v->rank,
               t.node_rank, v->node_rank);
        EXPECT(t.ppn == v->ppn, "%s rank %d: ppn %d, expected %d", name, v->rank, t.ppn, v->ppn);
        EXPECT(t.lane_size == v->lane_size, "%s rank %d: lane_size %d, expected %d", name, v->rank,
               t.lane_size, v->lane_size);
        EXPECT(t.lane_rank == v->lane_rank, "%s rank %d: lane_rank %d, expected %d", name, v->rank,
               t.lane_rank, v->lane_rank);
        /* Lane peers: the ranks with my node rank, in node order; I am my own lane peer. */
        int l = 0;
        for (int n = 0; n < nnodes; n++) {
            if (node_size[n] <= v->node_rank) continue;
            int expect = -1;
            for (int r = 0; r < P; r++)
                if (node_of[r] == n && node_rank_of[r] == v->node_rank) expect = r;
            EXPECT(convoy__topo_lane_peer(&t, l) == expect,
                   "%s rank %d: lane peer %d is %d, "
                   "expected %d",
                   name, v->rank, l, convoy__topo_lane_peer(&t, l), expect);
            EXPECT(convoy__topo_lane_rank_of(&t, expect) == l,
                   "%s: lane_rank_of(%d) = %d, "
                   "expected %d",
                   name, expect, convoy__topo_lane_rank_of(&t, expect), l);
            l++;
        }
        EXPECT(convoy__topo_lane_peer(&t, v->lane_rank) == v->rank, "%s rank %d: own lane peer",
               name, v->rank);
        EXPECT(convoy__topo_lane_peer(&t, v->lane_size) == -1, "%s: lane peer past the end", name);
        for (int n = 0; n < nnodes; n++) {
            EXPECT(convoy__topo_rank_at(&t, n, node_size[n]) == -1, "%s: rank_at past the node",
                   name);
            for (int q = 0; q < node_size[n]; q++) {
                int r = convoy__topo_rank_at(&t, n, q);
                EXPECT(r >= 0 && r < P && node_of[r] == n && node_rank_of[r] == q,
                       "%s: rank_at(%d, %d) = %d", name, n, q, r);
            }
        }
        /* A copy is the same decomposition. */
        convoy__topo c;
        rc = convoy__topo_copy(&c, &t);
        EXPECT(rc == 0 && c.rank == t.rank && c.nnodes == t.nnodes && c.flags == t.flags &&
                   c.lane_rank == t.lane_rank && c.lane_size == t.lane_size &&
                   same_ints(c.members, t.members, P) && same_ints(c.node_of, t.node_of, P),
               "%s: topo_copy differs", name);
        if (!rc) convoy__topo_free(&c);
        convoy__topo_free(&t);
    }
}

static void hand_made(void)
{
    enum { R = CONVOY_TOPO_REGULAR, C = CONVOY_TOPO_CONSECUTIVE, U = CONVOY_TOPO_UNIFORM };
    {
        /* Regular but not consecutive, ids not in rank order: 5 names node 0 (rank 0 is
         * lowest), 7 names node 1. Node 0 = {0,1,5}, node 1 = {2,3,4}. */
        const int64_t ids[] = {5, 5, 7, 7, 7, 5};
        const int node_of[] = {0, 0, 1, 1, 1, 0}, nro[] = {0, 1, 0, 1, 2, 2};
        const int size[] = {3, 3}, members[] = {0, 1, 5, 2, 3, 4};
        const view v[] = {
            {0, 0, 0, 3, 2, 0}, {4, 1, 2, 3, 2, 1}, {5, 0, 2, 3, 2, 0}, {2, 1, 0, 3, 2, 1}};
        expect_topo("interleaved", 6, ids, 2, R, 3, node_of, nro, size, members, v, 4);
    }
    {
        /* Consecutive, non-uniform: sizes 3, 1, 2. Node rank 1 exists on nodes 0 and 2
         * only, node rank 2 on node 0 only. */
        const int64_t ids[] = {0, 0, 0, 1, 2, 2};
        const int node_of[] = {0, 0, 0, 1, 2, 2}, nro[] = {0, 1, 2, 0, 0, 1};
        const int size[] = {3, 1, 2}, members[] = {0, 1, 2, 3, 4, 5};
        const view v[] = {{3, 1, 0, 1, 3, 1},
                          {4, 2, 0, 2, 3, 2},
                          {5, 2, 1, 2, 2, 1},
                          {2, 0, 2, 3, 1, 0},
                          {1, 0, 1, 3, 2, 0}};
        expect_topo("nonuniform", 6, ids, 3, C, 3, node_of, nro, size, members, v, 5);
    }
    {
        const int64_t ids[] = {0, 0, 1, 1, 2, 2};
        const int node_of[] = {0, 0, 1, 1, 2, 2}, nro[] = {0, 1, 0, 1, 0, 1};
        const int size[] = {2, 2, 2}, members[] = {0, 1, 2, 3, 4, 5};
        const view v[] = {{3, 1, 1, 2, 3, 1}, {0, 0, 0, 2, 3, 0}, {5, 2, 1, 2, 3, 2}};
        expect_topo("uniform", 6, ids, 3, R | C | U, 2, node_of, nro, size, members, v, 3);
    }
    {
        const int64_t ids[] = {42};
        const int z[] = {0}, one[] = {1};
        const view v[] = {{0, 0, 0, 1, 1, 0}};
        expect_topo("single", 1, ids, 1, R | C | U, 1, z, z, one, z, v, 1);
    }
    {
        /* One process per node: trivially uniform; every lane is the whole communicator. */
        const int64_t ids[] = {9, 8, 7, 6};
        const int node_of[] = {0, 1, 2, 3}, nro[] = {0, 0, 0, 0}, size[] = {1, 1, 1, 1};
        const int members[] = {0, 1, 2, 3};
        const view v[] = {{2, 2, 0, 1, 4, 2}};
        expect_topo("distinct", 4, ids, 4, R | C | U, 1, node_of, nro, size, members, v, 1);
    }
    {
        /* Round-robin placement: regular, not consecutive. */
        const int64_t ids[] = {0, 1, 0, 1};
        const int node_of[] = {0, 1, 0, 1}, nro[] = {0, 0, 1, 1}, size[] = {2, 2};
        const int members[] = {0, 2, 1, 3};
        const view v[] = {{1, 1, 0, 2, 2, 1}, {2, 0, 1, 2, 2, 0}};
        expect_topo("roundrobin", 4, ids, 2, R, 2, node_of, nro, size, members, v, 2);
    }
    {
        /* Any integers name nodes, negative and large ones too; neither flag holds. */
        const int64_t ids[] = {-3, (int64_t)1 << 40, -3};
        const int node_of[] = {0, 1, 0}, nro[] = {0, 0, 1}, size[] = {2, 1};
        const int members[] = {0, 2, 1};
        const view v[] = {{1, 1, 0, 1, 2, 1}, {2, 0, 1, 2, 1, 0}};
        expect_topo("odd ids", 3, ids, 2, 0, 2, node_of, nro, size, members, v, 2);
    }
    {
        convoy__topo t;
        const int64_t ids[] = {0, 0};
        EXPECT(convoy__topo_from_ids(&t, 0, 0, ids) != 0, "size 0 accepted");
        EXPECT(convoy__topo_from_ids(&t, 2, 2, ids) != 0, "rank = size accepted");
        EXPECT(convoy__topo_from_ids(&t, 2, -1, ids) != 0, "rank -1 accepted");
    }
}

static void layouts(void)
{
    int64_t ids[200];
    EXPECT(convoy__layout_ids(CONVOY_LAYOUT_REGULAR, 7, 3, 1, ids) == 0, "regular layout");
    const int64_t want[] = {0, 0, 0, 1, 1, 1, 2};
    EXPECT(memcmp(ids, want, sizeof want) == 0, "regular layout of 7 by 3");
    EXPECT(convoy__layout_ids(CONVOY_LAYOUT_REGULAR, 0, 3, 1, ids) != 0, "size 0 accepted");
    EXPECT(convoy__layout_ids(CONVOY_LAYOUT_REGULAR, 4, 0, 1, ids) != 0, "ppn 0 accepted");
    EXPECT(convoy__layout_ids(17, 4, 1, 1, ids) != 0, "unknown layout accepted");
    for (int ppn = 1; ppn <= 4; ppn++) {
        for (uint64_t seed = 1; seed <= 20; seed++) {
            const int P = 37 + (int)seed;
            convoy__topo t;
            /* Nonuniform: consecutive nodes of 1 .. 2 ppn - 1 processes. */
            EXPECT(convoy__layout_ids(CONVOY_LAYOUT_NONUNIFORM, P, ppn, seed, ids) == 0,
                   "nonuniform layout");
            if (convoy__topo_from_ids(&t, P, 0, ids) == 0) {
                EXPECT(t.flags & CONVOY_TOPO_CONSECUTIVE, "nonuniform P=%d ppn=%d not consecutive",
                       P, ppn);
                for (int n = 0; n < t.nnodes; n++)
                    EXPECT(t.node_size[n] >= 1 && t.node_size[n] <= 2 * ppn - 1,
                           "nonuniform P=%d ppn=%d: node of %d", P, ppn, t.node_size[n]);
                convoy__topo_free(&t);
            }
            int64_t again[200];
            convoy__layout_ids(CONVOY_LAYOUT_NONUNIFORM, P, ppn, seed, again);
            EXPECT(memcmp(ids, again, (size_t)P * sizeof *ids) == 0, "nonuniform not reproducible");
            /* Scattered: nodes of ppn (the last one smaller), ranks dealt out. */
            EXPECT(convoy__layout_ids(CONVOY_LAYOUT_SCATTERED, P, ppn, seed, ids) == 0,
                   "scattered layout");
            if (convoy__topo_from_ids(&t, P, 0, ids) == 0) {
                EXPECT(t.nnodes == (P + ppn - 1) / ppn, "scattered P=%d ppn=%d: %d nodes", P, ppn,
                       t.nnodes);
                int small = 0;
                for (int n = 0; n < t.nnodes; n++) {
                    EXPECT(t.node_size[n] <= ppn, "scattered: node of %d", t.node_size[n]);
                    small += t.node_size[n] < ppn;
                }
                EXPECT(small <= 1, "scattered: %d short nodes", small);
                if (ppn > 1 && seed == 1)
                    EXPECT(!(t.flags & CONVOY_TOPO_CONSECUTIVE),
                           "scattered P=%d ppn=%d is "
                           "consecutive",
                           P, ppn);
                convoy__topo_free(&t);
            }
        }
    }
    for (int l = 0; l < 3; l++)
        EXPECT(convoy__layout_parse(convoy__layout_name(l)) == l, "layout name %d", l);
    EXPECT(convoy__layout_parse("bogus") == -1, "bogus layout parsed");
}

static void nodemap(void)
{
    int64_t ids[8];
    EXPECT(convoy__nodemap_parse("0,0,1,1,1,0", ids, 8) == 6, "six entries");
    const int64_t want[] = {0, 0, 1, 1, 1, 0};
    EXPECT(memcmp(ids, want, sizeof want) == 0, "values");
    EXPECT(convoy__nodemap_parse("17", ids, 8) == 1 && ids[0] == 17, "one entry");
    EXPECT(convoy__nodemap_parse("3,12,3", ids, 8) == 3 && ids[1] == 12, "multi-digit");
    const char *bad[] = {"0,,1", "0,1,", ",0", "a", "0 1", "0;1", "1,2,x", " 0", "0x1", "0,1 "};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        EXPECT(convoy__nodemap_parse(bad[i], ids, 8) == -1, "\"%s\" accepted", bad[i]);
    EXPECT(convoy__nodemap_parse("0,1,2", ids, 2) == -1, "more entries than room accepted");
    EXPECT(convoy__nodemap_parse("", ids, 8) <= 0, "empty map gives entries");
}

int main(void)
{
    hand_made();
    layouts();
    nodemap();
    return unit_done();
}
