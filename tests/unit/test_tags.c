/*
 * The executor's tag layout: operations in flight on one communicator never make equal
 * tags, whatever their schedule trees. An operation's tags are (epoch, tag block, step
 * tag) packed under the MPI library's tag bound; the epoch must sit at the same bits in
 * every operation, or one with more tag blocks than another could send a tag the other
 * receives (the MPI_ERR_TRUNCATE seen with Allreduce hier beside Allgatherv lane on a
 * split communicator, whose tag bound Open MPI does not attach). Checked for the bounds of
 * real libraries and MPI's minimum, for trees of 1 to 256 blocks, 4 operations in flight.
 *
 * And a tag that repeats within one operation: the executor posts the messages of a
 * channel (kind, peer, tag) in step order, whatever order their dependencies are done in
 * (MPI matches a channel's messages in posting order and completes them in any order).
 * Checked over a transport that records what is posted and completes receives in the order
 * the test says.
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

/* --- channel order ------------------------------------------------------------------- */

enum { MAXP = 16 };

typedef struct post_log {
    int n, kind[MAXP], peer[MAXP], tag[MAXP];
    int arrived[MAXP]; /* per posted message: complete */
} post_log;

/* Sends complete at once; receives when the test lets them. */
static int log_post(post_log *l, int kind, int peer, int tag, void **req)
{
    if (l->n >= MAXP) return CONVOY_ERR_INTERN;
    l->kind[l->n] = kind, l->peer[l->n] = peer, l->tag[l->n] = tag;
    l->arrived[l->n] = kind == CONVOY_STEP_SEND;
    *req = &l->arrived[l->n++];
    return 0;
}

static int rec_isend(void *ctx, int peer, int tag, const void *buf, int64_t count, int tslot,
                     void **req)
{
    (void)buf, (void)count, (void)tslot;
    return log_post(ctx, CONVOY_STEP_SEND, peer, tag, req);
}

static int rec_irecv(void *ctx, int peer, int tag, void *buf, int64_t count, int tslot, void **req)
{
    (void)buf, (void)count, (void)tslot;
    return log_post(ctx, CONVOY_STEP_RECV, peer, tag, req);
}

static int rec_test(void *ctx, void **req, int *done)
{
    (void)ctx;
    *done = *(int *)*req;
    return 0;
}

/* The posted message of kind, peer and tag, the k-th such (-1: not posted). */
static int posted(const post_log *l, int kind, int peer, int tag, int k)
{
    for (int i = 0; i < l->n; i++)
        if (l->kind[i] == kind && l->peer[i] == peer && l->tag[i] == tag && k-- == 0) return i;
    return -1;
}

/* Rank 0 receives A and B from rank 1 (tags 1, 2) and forwards each to rank 2 with tag 7
 * (X after A, Y after B; a tag-8 send Z after B too); it also receives C and D from rank 3
 * with tag 9, D's receive after B, C's after A. B arrives first: Y and D must wait for X and
 * C to be posted (they are the later messages of their channels), Z need not. */
static void test_channel_order(void)
{
    convoy__schedule s;
    convoy__sched_init(&s);
    const convoy__region r = convoy__reg(CONVOY_BUF_RECV, CONVOY_T_BYTE, 0, 0);
    const int A = convoy__add_recv(&s, CONVOY_COMM_ALL, 1, 1, r, 0, NULL);
    const int B = convoy__add_recv(&s, CONVOY_COMM_ALL, 1, 2, r, 0, NULL);
    convoy__add_send(&s, CONVOY_COMM_ALL, 2, 7, r, 1, &A); /* X */
    convoy__add_send(&s, CONVOY_COMM_ALL, 2, 7, r, 1, &B); /* Y */
    convoy__add_send(&s, CONVOY_COMM_ALL, 2, 8, r, 1, &B); /* Z */
    convoy__add_recv(&s, CONVOY_COMM_ALL, 3, 9, r, 1, &A); /* C */
    convoy__add_recv(&s, CONVOY_COMM_ALL, 3, 9, r, 1, &B); /* D */
    EXPECT(s.err == 0, "building: %d", s.err);
    post_log l = {0};
    convoy__transport t = {
        .ctx = &l, .tag_ub = INT32_MAX, .isend = rec_isend, .irecv = rec_irecv, .test = rec_test};
    convoy__topo topo = {0};
    convoy__exec x;
    int done = 0;
    EXPECT(convoy__exec_start(&x, &s, &t, &topo, NULL, NULL, 0) == 0, "start");
    EXPECT(convoy__exec_progress(&x, &done) == 0 && !done, "first progress");
    const int pa = posted(&l, CONVOY_STEP_RECV, 1, 1, 0),
              pb = posted(&l, CONVOY_STEP_RECV, 1, 2, 0);
    EXPECT(pa >= 0 && pb >= 0 && l.n == 2, "A and B posted first (%d messages)", l.n);
    l.arrived[pb] = 1; /* B arrives, A does not yet */
    EXPECT(convoy__exec_progress(&x, &done) == 0 && !done, "after B");
    EXPECT(posted(&l, CONVOY_STEP_SEND, 2, 8, 0) >= 0, "Z (its own channel) goes after B");
    EXPECT(posted(&l, CONVOY_STEP_SEND, 2, 7, 0) < 0, "Y waits for X to be posted");
    EXPECT(posted(&l, CONVOY_STEP_RECV, 3, 9, 0) < 0, "D waits for C to be posted");
    l.arrived[pa] = 1;
    EXPECT(convoy__exec_progress(&x, &done) == 0, "after A");
    const int px = posted(&l, CONVOY_STEP_SEND, 2, 7, 0),
              py = posted(&l, CONVOY_STEP_SEND, 2, 7, 1);
    const int pc = posted(&l, CONVOY_STEP_RECV, 3, 9, 0),
              pd = posted(&l, CONVOY_STEP_RECV, 3, 9, 1);
    EXPECT(px >= 0 && py > px, "X then Y (posted %d, %d)", px, py);
    EXPECT(pc >= 0 && pd > pc, "C then D (posted %d, %d)", pc, pd);
    /* Which step was posted: X's request slot is step 2's, C's step 5's. */
    EXPECT(x.req[2] == &l.arrived[px] && x.req[5] == &l.arrived[pc], "the earlier steps first");
    for (int i = 0; i < l.n; i++)
        l.arrived[i] = 1;
    EXPECT(convoy__exec_progress(&x, &done) == 0 && done, "all done");
    convoy__exec_free(&x);
    convoy__sched_free(&s);
}

int main(void)
{
    test_channel_order();
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
