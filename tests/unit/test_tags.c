/*
 * The executor's tag layout: operations in flight on one communicator never make equal
 * tags, whatever their schedule trees. An operation's tags are (epoch, tag block, step
 * tag) packed under the MPI library's tag bound; the epoch must sit at the same bits in
 * every operation, or one with more tag blocks than another could send a tag the other
 * receives (the MPI_ERR_TRUNCATE seen with Allreduce hier beside Allgatherv lane on a
 * split communicator, whose tag bound Open MPI does not attach). Checked for the bounds of
 * real libraries and MPI's minimum, for trees of 1 to 256 blocks, 4 operations in flight.
 */
#include <stdint.h>
#include <stdlib.h>

#include "sched/sched.h"
#include "unit.h"

enum { NOPS = 4, MAXB = 256 };

/* The executor's tag shift for a schedule tree of `blocks` tag blocks under tag_ub. */
static int shift_for(int blocks, int tag_ub)
{
    convoy__schedule s;
    convoy__sched_init(&s);
    s.tag_blocks = blocks;
    convoy__transport t = {0};
    t.tag_ub = tag_ub;
    convoy__topo topo = {0};
    convoy__exec x;
    int rc = convoy__exec_start(&x, &s, &t, &topo, NULL, NULL, 0);
    int shift = rc ? -1 : x.tag_shift;
    convoy__exec_free(&x);
    convoy__sched_free(&s);
    return shift;
}

int main(void)
{
    static const int bounds[] = {32767, (1 << 20) - 1, (1 << 29) - 1, INT32_MAX};
    static const int sizes[] = {1, 2, 3, 5, 8, 9, 64, 256};
    enum { NS = sizeof sizes / sizeof *sizes };
    for (size_t b = 0; b < sizeof bounds / sizeof *bounds; b++) {
        const int ub = bounds[b];
        int shift[NS];
        for (int i = 0; i < NS; i++)
            shift[i] = shift_for(sizes[i], ub);
        /* Every pair of operations i (epoch e) and j (epoch e + d, 0 < d < NOPS) whose
         * trees both fit the fixed block field of this bound: no tag of one is a tag of
         * the other (same step tag; a step tag is below CONVOY_STEP_TAGS in both). */
        for (int i = 0; i < NS; i++)
            for (int j = 0; j < NS; j++) {
                if (shift[i] != shift[0] || shift[j] != shift[0]) continue;
                for (int d = 1; d < NOPS; d++) {
                    int clash = 0;
                    for (uint64_t e = 0; e < 70 && !clash; e += 7)
                        for (int bi = 0; bi < sizes[i] && !clash; bi++)
                            for (int bj = 0; bj < sizes[j] && !clash; bj++)
                                clash = convoy__tag(e, bi, 5, shift[i], ub) ==
                                        convoy__tag(e + (uint64_t)d, bj, 5, shift[j], ub);
                    EXPECT(!clash, "tag bound %d: trees of %d and %d blocks, epochs %d apart", ub,
                           sizes[i], sizes[j], d);
                }
            }
        /* Which trees fit the fixed field: 8 blocks at least under MPI's minimum, 256
         * under every library's bound (2^20 and up), and every tag within the bound. */
        int fixed = 0;
        for (int i = 0; i < NS; i++)
            fixed += shift[i] == shift[0];
        EXPECT(fixed >= (ub >= (1 << 20) - 1 ? NS : 5),
               "tag bound %d: %d of %d trees share the layout", ub, fixed, NS);
        for (int i = 0; i < NS; i++)
            if ((int64_t)sizes[i] * CONVOY_STEP_TAGS - 1 <= ub) /* a tree the bound holds */
                EXPECT(convoy__tag(UINT64_MAX, sizes[i] - 1, CONVOY_STEP_TAGS - 1, shift[i], ub) <=
                           ub,
                       "tag bound %d: tree of %d blocks exceeds it", ub, sizes[i]);
    }
    return unit_done();
}
