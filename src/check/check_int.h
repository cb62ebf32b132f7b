/*
 * Internals of the checker shared by its files: the symbolic world (world.c) that the
 * case runner (check.c) sets up, runs and inspects.
 */
#ifndef CONVOY_CHECK_INT_H
#define CONVOY_CHECK_INT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "check/check.h"

/* Byte pattern of memory nobody wrote: the receive buffers outside the blocks, scratch
 * memory, the node segment. As an allgatherv cell its origin is invalid, as an allreduce
 * cell its element index is. */
#define CHK_POISON 0xA5

/* A stamp that no notification can satisfy: an access still in flight. */
#define CHK_PENDING UINT32_MAX
/* A stamp for memory not written yet: no read of it is legal. */
#define CHK_NEVER (UINT32_MAX - 1)

struct chk_world;
struct chk_rank;

typedef struct chk_req {
    struct chk_req *next; /* in its channel's queue */
    struct chk_rank *owner;
    int is_send, peer, tag, chan;
    unsigned char *buf;
    int64_t bytes;
    int64_t nblk; /* blocks (strided and indexed regions: a derived type; else 1) */
    int64_t *blk; /* [2 nblk] each block's byte offset from buf and its bytes, in the
                     order the message's bytes stream through them (one[] for 1 block) */
    int64_t one[2];
    int64_t seq;     /* posting order, over the whole world */
    int done;        /* matched: the data has moved */
    int64_t shm_off; /* >= 0: the buffer lies in the node segment at this offset */
    int x_pending;   /* a receive into memory node peers may read (chk_rank.xw) */
    /* Causality (chk_world.sync): what the sender knew when it posted the send (a send's
     * own snapshot; a receive's copy of its match's), and in which operation. */
    int know_op;
    uint64_t know[]; /* chk_world.kw words */
} chk_req;

typedef struct chk_chan {
    uint64_t key;
    chk_req *sh, *st; /* sends, oldest first */
    chk_req *rh, *rt; /* receives, oldest first */
    int mpos;         /* index in the world's matchable list, or -1 */
} chk_chan;

/* The node segment and the notification flags of one node, with the happens-before
 * bookkeeping: vc[a*n + w] is the newest notification of node process w that node
 * process a has observed (directly or through others); vc[a*n + a] counts a's own. */
typedef struct chk_node {
    int n;         /* processes */
    int64_t bytes; /* data area */
    int64_t half;  /* alternating schedules (shm_alt): the second half's offset; else 0 */
    unsigned char *seg;
    int32_t *wr;     /* [bytes] node rank of the last writer, -1: never written */
    uint32_t *wneed; /* [bytes] a reader must have seen the writer's notification >= this */
    uint32_t *rneed; /* [bytes * n] a writer must have seen reader q's notification >= this */
    int nflags;      /* per process, including the executor's release flag 0 */
    uint64_t *fval;  /* [n * nflags] */
    uint32_t *fvc;   /* [n * nflags * n] the notifier's vc at the notification */
    uint32_t *vc;    /* [n * n] */
    /* Causality (chk_world.sync): the notifier's knowledge at the notification. */
    uint64_t *fknow; /* [n * nflags * kw] */
    int32_t *fknow_op;
} chk_node;

typedef struct chk_rank {
    struct chk_world *w;
    int rank, node, nrank;
    convoy__topo topo; /* this rank's view (arrays shared with the world's topology) */
    convoy__transport t;
    convoy__exec x;
    int op;      /* operation running (or next) */
    int running; /* x started and not yet freed */
    int done;    /* every operation finished */
    int dirty;   /* in the world's queue of ranks to progress */
    unsigned char *sendbuf, *recvbuf;
    int64_t sbytes, rbytes;
    /* Node peers reading this rank's buffers (CONVOY_STEP_READ), per byte of the send then
     * the receive buffer, like the segment's wneed/rneed: xw, the notification of this
     * rank a reader must have seen (CHK_PENDING while a receive lands, CHK_NEVER: not
     * written in this operation); xr[b * n + q], reader q's notification this rank must
     * see before it writes byte b again or finishes. NULL: no schedule reads. */
    uint32_t *xw, *xr;
    /* traffic */
    int64_t msgs_sent, bytes_sent, msgs_recv, bytes_recv, inter_sent, inter_recv;
    int64_t inter_msgs_sent, inter_msgs_recv, reduces; /* reduces: of at least one element */
    int64_t send_round, recv_round; /* lockstep: last round it sent / received in */
    int send_cnt, recv_cnt;         /* lockstep: messages sent / received in that round */
} chk_rank;

typedef struct chk_world {
    int P, nnodes, ops, mode;
    int inplace;
    int inplace_rank; /* >= 0: MPI_IN_PLACE at this rank alone (Reduce's root); -1: all */
    chk_rank *r;
    chk_node *nodes;
    const convoy__topo *topo;             /* full topology (any rank's view) */
    const convoy__schedule *const *sched; /* [P] */
    /* per operation and rank, [op * P + rank] */
    unsigned char **sbuf, **rbuf;
    int64_t *sbytes, *rbytes;
    int64_t tslot_bytes[CONVOY_NTSLOT];
    uint64_t epoch0;
    /* channels and matching */
    chk_chan *chans;
    int nchans, capchans;
    int32_t *hash; /* chan index + 1, 0: empty */
    int hashcap;
    int *match;
    int nmatch, capmatch;
    chk_rank **dirtyq;
    int ndirty;
    int ndone;
    uint64_t rng;
    int64_t seq;
    /* lockstep */
    int64_t rounds;
    int64_t *round_in, *round_out; /* [nnodes] this round */
    int64_t round_in_max, round_out_max;
    int64_t round_inter, round_inter_max; /* inter-node messages in this round / any round */
    int64_t inflight, inflight_max;       /* inter-node sends posted and not yet matched */
    int smp_check;                        /* fail the first round that breaks round_in/out <= 1 */
    int xreads; /* some schedule has READ steps: model the ranks' buffers (chk_rank.xw) */
    /* Causality check (barriers): every rank carries the set of ranks it has heard from in
     * its current operation, itself at the start. A send takes a snapshot of its sender's
     * set when it is posted, the receiver merges it when its executor sees the receive
     * complete; notifications carry the notifier's set to whoever waits for them. A rank
     * that finishes an operation must know every rank: its completion then happens after
     * every rank's entry. Sets of earlier operations are not merged (a message of
     * operation k says nothing about entries into k + 1). */
    int sync;
    int kw;         /* words per set */
    uint64_t *know; /* [P * kw] */
    int ports;      /* lockstep: sends and receives per rank and round (0, 1: one each) */
    /* verdict */
    int failed;
    char reason[4096];
    /* The collective's reduction on cells (check.c); returns 0 or fails the world. */
    int (*reduce)(struct chk_world *w, chk_rank *r, const unsigned char *in, unsigned char *inout,
                  int64_t count);
    void *ctx;
} chk_world;

/* Records the first failure (later ones are consequences); returns CONVOY_ERR_INTERN so a
 * transport function can hand it to the executor. */
int chk_fail(chk_world *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* Sets up the world: ranks, transports, segments and flags sized from the schedules.
 * The caller fills P, nnodes, ops, mode, inplace, topo, sched, buffers, tslot_bytes,
 * epoch0, reduce/ctx and the r[].topo views before; world_init does the rest. */
int chk_world_init(chk_world *w, uint64_t seed);
/* Runs every rank's operations to the end, a deadlock or the first failure. */
int chk_world_run(chk_world *w);
void chk_world_free(chk_world *w);

/* Names the step of `kind` that rank r is executing right now (for reports). */
void chk_active_step(const chk_rank *r, int kind, char *buf, size_t len);

/* Round analyses (rounds.c): whether the algorithm claims SMP-aware rounds (at most one
 * inter-node message per node and direction per round), and the verdict on the measured
 * lockstep rounds st->rounds of a case that passed: fills st's predictions and returns 1
 * (reason in why) if the measurement contradicts the algorithm's analysis. */
int chk_claims_smp(const convoy__algo *al);
/* Lockstep ports per rank and direction the algorithm's round analysis assumes (1 for
 * all but multi-port algorithms such as the n-way dissemination). */
int chk_lockstep_ports(const convoy__check_case *c, const convoy__args *args);
int chk_rounds_verdict(const convoy__check_case *c, const convoy__args *args,
                       const convoy__schedule *const *scheds, convoy__check_stats *st, char *why,
                       size_t len);

#endif
