/*
 * Schedules and the one executor that runs them.
 *
 * A schedule is data: the ordered list of typed steps one rank performs in one collective,
 * each step naming the earlier steps it depends on. Builders (src/coll) make schedules
 * without calling MPI; the executor runs them over a transport (PMPI point-to-point and the
 * node segment for real runs, the checker's symbolic transport for proofs). The executor
 * never blocks: convoy__exec_progress() starts every step whose dependencies are done,
 * tests the ones in flight and returns.
 *
 * Buffers are named, not pointed to: a region is (buffer, byte offset, count, type slot),
 * resolved against the user's buffers, the schedule's scratch memory or the node segment
 * when the schedule runs. That is what makes a schedule reusable (persistent requests,
 * the schedule cache) and what lets the checker run it on symbolic data.
 */
#ifndef CONVOY_SCHED_H
#define CONVOY_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "topo/topo.h"

/* Status codes of the pure layers (builders, executor, checker). Zero is success, like
 * MPI_SUCCESS; negative codes are Convoy's own and become MPI error classes in the API
 * layer; positive codes are MPI error codes a transport returned, passed through. */
enum { CONVOY_OK = 0, CONVOY_ERR_NO_MEM = -1, CONVOY_ERR_INTERN = -2, CONVOY_ERR_ARG = -3 };

/* Where a region lives. */
enum convoy__buf {
    CONVOY_BUF_SEND, /* the user's send buffer */
    CONVOY_BUF_RECV, /* the user's receive buffer */
    CONVOY_BUF_TMP,  /* the schedule's scratch memory (tmp_bytes, aligned, per execution) */
    CONVOY_BUF_SHM,  /* the data area of the node segment, shared by the node's processes */
    CONVOY_NBUF
};

/* The element type of a region: the user's send type, the user's receive type (for
 * reductions both are the operation's datatype), or plain bytes (packed data). */
enum convoy__tslot { CONVOY_T_SEND, CONVOY_T_RECV, CONVOY_T_BYTE, CONVOY_NTSLOT };

/* The communicator a step's peer is numbered in. Every message travels on the operation's
 * private communicator; NODE and LANE ranks are translated through the topology (always the
 * top schedule's: a node rank is a node rank at any depth). MAP is for nested schedules
 * only: the child runs on an arbitrary group, its rank i being rank map[i] of its parent's
 * communicator (child->map; src/coll/lane.h builds such groups, e.g. virtual lanes on
 * nodes of different sizes). */
enum convoy__comm { CONVOY_COMM_ALL, CONVOY_COMM_NODE, CONVOY_COMM_LANE, CONVOY_COMM_MAP };

enum convoy__step_kind {
    CONVOY_STEP_SEND,   /* send src to peer */
    CONVOY_STEP_RECV,   /* receive into dst from peer (never a wildcard) */
    CONVOY_STEP_REDUCE, /* dst = src op dst (MPI_Reduce_local order: src holds lower ranks) */
    CONVOY_STEP_COPY,   /* copy src to dst (same type signature, types may differ) */
    CONVOY_STEP_NOTIFY, /* set my notification flag `flag` to this operation's `value` */
    CONVOY_STEP_WAIT,   /* wait until node process `peer`'s flag `flag` reaches `value` */
    CONVOY_STEP_NESTED, /* run child schedule `child` on the node, lane or a mapped group, its
                           send/recv buffers based at src/dst (offset and buffer only) */
    /* Single copy between node processes (cross-memory attach, args.cma): */
    CONVOY_STEP_PUBLISH, /* store src's address in the segment word dst (8 bytes); a NOTIFY
                            after it tells the node that the data there may be read */
    CONVOY_STEP_READ,    /* read dst's bytes (a contiguous region) from node process `peer`
                            at the address it published in the segment word src; the owner
                            must not write those bytes or finish before it sees a NOTIFY of
                            every reader issued after its read */
    CONVOY_NSTEP_KINDS
};

typedef struct convoy__region {
    uint8_t buf;     /* enum convoy__buf */
    uint8_t tslot;   /* enum convoy__tslot */
    uint8_t indexed; /* 1: an indexed region (convoy__reg_indexed), for messages only: nblk >= 1
                        blocks listed in the schedule's index table from pair `stride` on,
                        block k of ix[2 (stride + k) + 1] elements at off + ix[2 (stride + k)]
                        bytes (an hindexed type: uneven displacements, counts, any order);
                        count is the elements of all blocks together */
    int32_t nblk;    /* strided (papers/004's vector types): nblk > 1 blocks of count elements,
                        block k at off + k * stride bytes; 0 or 1: one block. Messages only. */
    int64_t off;     /* byte offset from the buffer's base (may be negative for SEND/RECV) */
    int64_t count;   /* elements of the type slot (of each block when strided) */
    int64_t stride;
} convoy__region;

typedef struct convoy__step {
    uint8_t kind; /* enum convoy__step_kind */
    uint8_t comm; /* enum convoy__comm: numbering of peer (SEND, RECV, NESTED) */
    /* SEND/RECV, set by the adders: the message's channel (kind, comm, peer and tag in this
     * schedule) had an earlier step (chan_wait = 1), and the next step of the channel
     * (chan_next, 0: none). The executor posts a channel's messages in step order. */
    uint8_t chan_wait;
    int32_t peer; /* SEND/RECV: rank in comm; WAIT: node rank */
    int32_t tag;  /* SEND/RECV: 0 <= tag < CONVOY_STEP_TAGS, same on both sides */
    int32_t chan_next;
    convoy__region src;
    convoy__region dst;
    int32_t flag;             /* NOTIFY/WAIT: flag index < schedule nflags */
    uint32_t value;           /* NOTIFY/WAIT: value within this operation (> 0) */
    int32_t child;            /* NESTED: index into children */
    int32_t dep_first, ndeps; /* dependencies: deps[dep_first .. dep_first+ndeps) */
} convoy__step;

/* Builders keep step tags below this; the executor adds the operation's epoch above it. */
#define CONVOY_STEP_TAGS 1024

typedef struct convoy__schedule {
    convoy__step *steps;
    int32_t nsteps, cap;
    int32_t *deps; /* indices of earlier steps */
    int32_t ndeps, depcap;
    int64_t tmp_bytes; /* scratch memory the schedule needs */
    int32_t nflags;    /* notification flags per node process used (0: no segment) */
    int64_t shm_bytes; /* data area of the node segment used (0: none) */
    /* The schedule may alternate (1): its segment data fits half the data area (the
     * builder saw args.shm_bytes >= 2 * shm_bytes, with shm_bytes a multiple of 64; 0 for
     * flags alone) and it is the same kind on every process of a node. Then the caller may
     * run it in the half of the data area given by the operation's parity and let it start
     * while node peers still finish the previous segment operation, when that one
     * alternated too (convoy__transport.shm_alt). Only set by builders whose waits are
     * all for values a peer notifies in the same operation (flag values only grow, so a
     * wait that a peer's next operation satisfies was satisfied by this one's). */
    int32_t shm_alt;
    /* Kept by convoy__sched_seal (a built schedule that will not change; 0: not sealed, and
     * the executor works them out per start): 1 + convoy__exec_straight, and the executor
     * memory of the whole tree. */
    int32_t sealed_straight;
    size_t sealed_need;
    struct convoy__schedule **children;
    int32_t nchildren;
    int32_t nnested; /* schedules nested below this one, at any depth */
    /* Tag blocks the schedule tree may use, equal on every rank; 0: 1 + nnested (right
     * when every rank's tree has the same size). Builders whose trees differ between ranks
     * (lane.h) set a common bound, as the tag's epoch bits sit above the blocks. */
    int32_t tag_blocks;
    int32_t *map; /* CONVOY_COMM_MAP children: [nmap] ranks in the parent's numbering */
    int32_t nmap;
    /* The index table of the schedule's indexed regions (convoy__reg_indexed): pairs (byte
     * offset from the region's off, elements), [2 nix]. */
    int64_t *ix;
    int32_t nix, ixcap;
    /* The last step of each message channel, for the adders: an open-addressed table of
     * step indices (-1: empty) keyed by the steps' (kind, comm, peer, tag); freed with the
     * schedule. */
    int32_t *chan;
    int32_t nchan, chancap;
    int err; /* first error met while building (out of memory); sticky */
} convoy__schedule;

/* --- building ----------------------------------------------------------------------- */

void convoy__sched_init(convoy__schedule *s);
void convoy__sched_free(convoy__schedule *s);

convoy__region convoy__reg(int buf, int tslot, int64_t off, int64_t count);
/* nblk blocks of count elements, stride bytes apart (a plain region when nblk <= 1). */
convoy__region convoy__reg_strided(int buf, int tslot, int64_t off, int64_t count, int nblk,
                                   int64_t stride);
/* n blocks, block k of counts[k] elements at off + disp[k] bytes (any order; overlapping only
 * in a send), listed in s's index table: papers/004's derived datatypes for blocks that no
 * vector type describes (a Gatherv's uneven displacements). Blocks of 0 elements are left
 * out; none left: a plain region of 0 elements. On allocation failure s->err is set and the
 * region is empty. */
convoy__region convoy__reg_indexed(convoy__schedule *s, int buf, int tslot, int64_t off, int n,
                                   const int64_t *disp, const int64_t *counts);
/* The n blocks of counts[i] elements (all > 0) at byte offsets disp[i] of one buffer, elements
 * of ext bytes, as one message's region: plain for one block; strided (papers/004's vector
 * type) when the blocks are equal and evenly spaced at least a block's extent apart; else
 * indexed (the hindexed type of the blocks). */
convoy__region convoy__reg_blocklist(convoy__schedule *s, int buf, int tslot, int64_t ext, int n,
                                     const int64_t *disp, const int64_t *counts);
/* Region r of schedule src as a region of dst (an indexed region's pairs copied into dst's
 * table; anything else unchanged): for steps moved from one schedule into another. */
convoy__region convoy__reg_move(convoy__schedule *dst, const convoy__schedule *src,
                                convoy__region r);
/* A region of several blocks (strided or indexed): a message of a derived type. */
static inline int convoy__reg_blocks(const convoy__region *r)
{
    return r->indexed || r->nblk > 1;
}
/* The (byte offset, elements) pairs of an indexed region r of schedule s. */
static inline const int64_t *convoy__reg_table(const convoy__schedule *s, const convoy__region *r)
{
    return r->indexed ? s->ix + 2 * r->stride : NULL;
}
/* Elements of a region, all blocks together. */
static inline int64_t convoy__reg_elems(const convoy__region *r)
{
    return !r->indexed && r->nblk > 1 ? r->count * r->nblk : r->count;
}

/* Each adder returns the new step's index (or -1 after an allocation failure, which also
 * sets s->err). deps: indices of earlier steps; ndeps may be 0. */
int convoy__add_send(convoy__schedule *s, int comm, int peer, int tag, convoy__region src,
                     int ndeps, const int *deps);
int convoy__add_recv(convoy__schedule *s, int comm, int peer, int tag, convoy__region dst,
                     int ndeps, const int *deps);
int convoy__add_reduce(convoy__schedule *s, convoy__region src, convoy__region dst, int ndeps,
                       const int *deps);
int convoy__add_copy(convoy__schedule *s, convoy__region src, convoy__region dst, int ndeps,
                     const int *deps);
int convoy__add_notify(convoy__schedule *s, int flag, uint32_t value, int ndeps, const int *deps);
int convoy__add_wait(convoy__schedule *s, int node_peer, int flag, uint32_t value, int ndeps,
                     const int *deps);
/* slot: 8 bytes of the segment (CONVOY_BUF_SHM, CONVOY_T_BYTE, off, 8). */
int convoy__add_publish(convoy__schedule *s, convoy__region src, convoy__region slot, int ndeps,
                        const int *deps);
int convoy__add_read(convoy__schedule *s, int node_peer, convoy__region slot, convoy__region dst,
                     int ndeps, const int *deps);
/* Takes ownership of child. comm is CONVOY_COMM_NODE, CONVOY_COMM_LANE or CONVOY_COMM_MAP
 * (then child->map must be set). The child sees the parent's send and receive buffers. */
int convoy__add_nested(convoy__schedule *s, int comm, convoy__schedule *child, int ndeps,
                       const int *deps);
/* The same with the child's send and receive buffers rebased: the child's CONVOY_BUF_SEND
 * starts at send's (buffer, offset) of the parent, its CONVOY_BUF_RECV at recv's (counts
 * and type slots of the two regions are not used). A child can so run on the parent's
 * scratch memory or on a slice of the user's buffers; its own scratch stays its own. */
int convoy__add_nested_on(convoy__schedule *s, int comm, convoy__schedule *child,
                          convoy__region send, convoy__region recv, int ndeps, const int *deps);
/* A step taken from another schedule as it is (its regions already made s's with
 * convoy__reg_move, a NESTED step's child index one of s's children), with new
 * dependencies. */
int convoy__add_step(convoy__schedule *s, const convoy__step *st, int ndeps, const int *deps);
/* Appends x's steps to s (x's children, if any, already moved to s at the same indices):
 * each region made s's (convoy__reg_move) and then map(ctx, region), each message's tag
 * plus tag_off, each dependency shifted past s's steps; x's steps without dependencies
 * depend on s's first `after` steps. Returns s->err. */
int convoy__append_steps(convoy__schedule *s, const convoy__schedule *x, int tag_off, int after,
                         convoy__region (*map)(const void *ctx, convoy__region r), const void *ctx);
/* Convenience for the common "depends on one step, or none if dep < 0". */
#define CONVOY_DEP(d) ((d) >= 0 ? 1 : 0), ((d) >= 0 ? (const int[]){(d)} : NULL)

/* --- transport ---------------------------------------------------------------------- */

/* What the executor needs from the world. Peers are ranks of the operation's communicator
 * (the executor translates NODE and LANE numbering); tags are final (the executor adds the
 * epoch). Requests are opaque; test() frees a request when it reports it done. Every
 * function returns 0 or an error code (MPI's, or CONVOY_ERR_*). */
typedef struct convoy__transport {
    void *ctx;
    int tag_ub; /* largest tag the transport accepts (>= 32767, MPI's minimum) */
    int (*isend)(void *ctx, int peer, int tag, const void *buf, int64_t count, int tslot,
                 void **req);
    int (*irecv)(void *ctx, int peer, int tag, void *buf, int64_t count, int tslot, void **req);
    int (*test)(void *ctx, void **req, int *done);
    void (*cancel)(void *ctx, void **req); /* abandon a request (error paths) */
    int (*copy)(void *ctx, const void *src, int64_t scount, int stslot, void *dst, int64_t dcount,
                int dtslot);
    int (*reduce)(void *ctx, const void *in, void *inout, int64_t count, int tslot);
    /* The node segment, for schedules with nflags > 0 or shm_bytes > 0 (else unused):
     * the data area's base, this process's flag store and a node peer's flag test.
     * Flag indices run 0..nflags: the executor reserves flag 0 (CONVOY_FLAG_RELEASE) and
     * shifts the schedule's flags up by one. Values are absolute and only grow. */
    void *shm_base;
    uint64_t shm_seq; /* segment-using operations that ran before this one on the node */
    /* Alternation (convoy__schedule.shm_alt), set by the caller: shm_alt = this operation
     * runs in half (shm_seq & 1) of the data area, shm_half bytes from shm_base;
     * shm_prev_alt = the previous segment operation of the node did so too, so this one
     * need only wait at the gate for the one before that (the halves differ). The same on
     * every process of the node. */
    int shm_alt, shm_prev_alt;
    int64_t shm_half;
    int (*notify)(void *ctx, int flag, uint64_t value);
    int (*flag_test)(void *ctx, int node_peer, int flag, uint64_t value, int *done);
    /* Cross-memory attach, for schedules with PUBLISH/READ steps (builders use them only
     * when args.cma): publish stores addr into the segment word slot; peer_read reads
     * bytes at the address in node_peer's published word slot into dst (contiguous). */
    int (*publish)(void *ctx, const void *addr, void *slot);
    int (*peer_read)(void *ctx, int node_peer, const void *slot, void *dst, int64_t bytes);
    /* Blocks until one of n requests completes (its slot then reads as done); optional. */
    int (*wait_any)(void *ctx, void **const *slots, int n);
    /* isend and irecv of a strided or indexed region r (convoy__reg_blocks) at buf; ix: an
     * indexed region's (byte offset, elements) pairs (convoy__reg_table), else NULL.
     * Optional (without them a schedule with such messages fails). */
    int (*isendv)(void *ctx, int peer, int tag, const void *buf, const convoy__region *r,
                  const int64_t *ix, void **req);
    int (*irecvv)(void *ctx, int peer, int tag, void *buf, const convoy__region *r,
                  const int64_t *ix, void **req);
} convoy__transport;

/* The executor's own flag: a process sets it to k + 1 when it has finished the k-th
 * segment-using operation; the next one starts only when every node process has (the
 * segment is then free for reuse: no ABA between consecutive operations), or, when it and
 * the one before alternate (shm_alt), when every node process has finished operation k - 1:
 * the two use different halves of the data area. */
#define CONVOY_FLAG_RELEASE 0
/* Absolute value of a schedule's notification value in segment operation shm_seq. */
#define CONVOY_FLAG_VALUE(shm_seq, v) ((((uint64_t)(shm_seq) + 1) << 32) | (uint64_t)(v))

/* The gate of segment operation seq: every node process released the previous segment
 * operation (release flag >= seq), or, when this one and the previous alternate, the one
 * before that (seq - 1). The process's own previous operation must be done all the same
 * (exec.c test_gate). Shared by the executor and the direct kernel (src/api/kernel.c). */
static inline uint64_t convoy__gate_seq(uint64_t seq, int alt, int prev_alt)
{
    return alt && prev_alt ? (seq > 0 ? seq - 1 : 0) : seq;
}
/* The data area an operation runs in: an alternating one in the half its parity names. */
static inline void *convoy__shm_op_base(void *base, int64_t half, uint64_t seq, int alt)
{
    return alt && (seq & 1) ? (char *)base + half : base;
}

/* --- executing ---------------------------------------------------------------------- */

enum convoy__step_state { CONVOY_S_PENDING, CONVOY_S_ACTIVE, CONVOY_S_DONE };

typedef struct convoy__exec {
    const convoy__schedule *s;
    const convoy__transport *t;
    const convoy__topo *topo;          /* translates NODE/LANE peers */
    int comm_kind;                     /* which communicator this executor's ALL means */
    const struct convoy__exec *parent; /* nested: the parent's executor (MAP translation) */
    int top;                           /* the root of the schedule tree (owns the segment gate) */
    int tag_block;     /* this schedule's preorder number in the tree: its tag block */
    int tag_shift;     /* bits below the epoch: step tag and tag block */
    int gate;          /* waiting for the node's release flags before starting */
    uint64_t gate_seq; /* ... until each is at least this (convoy__transport.shm_alt) */
    /* Straight (convoy__exec_straight): the schedule runs in step order, pc the next step;
     * no per-step arrays. */
    int straight;
    int32_t pc;
    void *base[CONVOY_NBUF];
    void *tmp_alloc;
    void *block;                /* the per-step arrays below, in one allocation */
    int borrowed;               /* block, tmp_alloc, child array and subtree are the caller's */
    uint64_t epoch;             /* operation number, added to tags and notification values */
    uint8_t *state;             /* per step */
    void **req;                 /* per step */
    int32_t *missing;           /* per step: dependencies not yet done */
    int32_t *succ_first, *succ; /* successor lists (reverse dependencies) */
    int32_t *ready;             /* steps whose dependencies are done, not yet started */
    int32_t nready;
    int32_t *active; /* steps in flight */
    int32_t nactive;
    int32_t ndone;
    struct convoy__exec *child; /* per step, for NESTED (allocated lazily unless borrowed) */
    char *arena;                /* borrowed: the rest of this slice, for the children's */
    int err;
} convoy__exec;

/* Tag of a step: its step tag, in the tag block of its (nested) schedule, with the
 * operation's epoch in the bits above `shift` that the communicator's tag bound allows. */
int convoy__tag(uint64_t epoch, int block, int step_tag, int shift, int tag_ub);
/* What a top-level executor of s uses for its messages (exec.c), for the kept one-round
 * message path (src/api/round.c), which posts the same messages without an executor: the
 * shift of the epoch in its tags (the tag of step i at epoch e is
 * convoy__tag(e, 0, s->steps[i].tag, shift, tag_ub)), and step i's peer rank in the
 * operation's communicator (-1: none). */
int convoy__exec_tag_shift(const convoy__schedule *s, int tag_ub);
int convoy__exec_top_peer(const convoy__schedule *s, const convoy__topo *topo, int i);

/* The phases of a schedule for the kept message path (src/api/round.c): steps grouped by
 * their dependency sets, so that posting each phase's steps in step order once the steps
 * it depends on are done is what the executor does. A phase is the steps with one
 * dependency set (as a set, in the order the sets first appear), phase 0 the steps without
 * dependencies, and the sets must grow along the phases (D_0 = {} and D_j a subset of
 * D_j+1: when D_j+1 is done, D_j is too, so waiting phase by phase posts no step later than
 * its dependencies allow, and never earlier). For each phase: its steps' indices in
 * step[first .. first + n) and the steps it must wait for beyond the previous phase's
 * (D_j minus D_j-1) in wait[wfirst .. wfirst + nwait). With more than one phase no two
 * message steps may share kind, peer and tag (MPI orders same-envelope messages by
 * posting, and the executor's posting order across phases follows completion times): the
 * messages then match alike in every order. Returns the number of phases (>= 1), or 0 when
 * s does not have that form or the arrays are too small (maxph phases, s->nsteps entries
 * of step and of wait) or s has more than 64 steps. Messages only: a step other than send,
 * receive or copy, or a nested schedule, returns 0; a wait list names message steps only
 * (a copy is done when its phase has run it). */
typedef struct convoy__phase {
    int first, n, wfirst, nwait;
} convoy__phase;
int convoy__sched_phases(const convoy__schedule *s, const convoy__topo *topo, convoy__phase *ph,
                         int maxph, int *step, int *wait);

/* sendbuf/recvbuf: the user's buffers (sendbuf may be NULL for MPI_IN_PLACE builders).
 * epoch: the operation's number on its communicator (same on all ranks). */
int convoy__exec_start(convoy__exec *x, const convoy__schedule *s, const convoy__transport *t,
                       const convoy__topo *topo, const void *sendbuf, void *recvbuf,
                       uint64_t epoch);
/* The same, the whole schedule tree (nested schedules too) in memory the caller lends
 * (grown when too small, kept by the caller for the next start: repeated operations
 * allocate nothing); NULL: allocate. */
typedef struct convoy__exec_mem {
    void *p;
    size_t cap;
} convoy__exec_mem;
int convoy__exec_start_mem(convoy__exec *x, const convoy__schedule *s, const convoy__transport *t,
                           const convoy__topo *topo, const void *sendbuf, void *recvbuf,
                           uint64_t epoch, convoy__exec_mem *mem);
/* Makes all progress possible now without blocking; *done = 1 when every step is done. */
int convoy__exec_progress(convoy__exec *x, int *done);
/* Frees what start allocated; cancels requests still in flight. */
void convoy__exec_free(convoy__exec *x);
/* What x waits for, in it and its nested schedules: the request slots of its messages
 * (their number, at most max, is returned) and, in *flags (set to 1, never cleared),
 * whether anything else: a notification, or messages past max. With messages only a wait
 * may block in the transport's wait_any (simulation: src/platform/platform.h). */
enum { CONVOY_WAIT_ANY_MAX = 256 };
/* Whether s may run in the order of its steps instead of by readiness (1): a small
 * schedule of notifications, waits, copies and reductions alone (no message, no nested
 * schedule) in which every step depends, through its dependencies, on every wait listed
 * before it. Step order is an order the readiness executor may take (dependencies point to
 * earlier steps), and a process stopped at a wait has done everything the readiness
 * executor could do before that wait is satisfied, so nothing a peer waits for is held
 * back and no local work is postponed: no deadlock and no interleaving the checker does
 * not meet (it runs this executor, so the straight way too). The executor uses it by
 * itself. */
int convoy__exec_straight(const convoy__schedule *s);
/* Works out once what every start of a finished schedule would (the schedule cache's
 * entries: a repeated small call spends no instructions on it). */
void convoy__sched_seal(convoy__schedule *s);
/* 0 while x runs in step order and stands at a wait whose flag is not reached (a test
 * of that flag alone); 1 when a progress call has something to do. */
int convoy__exec_poll(const convoy__exec *x);
int convoy__exec_waits(const convoy__exec *x, void **slots[], int max, int *flags);
/* Describes the steps in flight or waiting (for the watchdog and the checker). */
int convoy__exec_describe(const convoy__exec *x, char *buf, size_t len);

const char *convoy__step_kind_name(int kind);

/* --- the direct kernel (kernel.c) ------------------------------------------------------ */

/* A step-order schedule (convoy__exec_straight) of a kept blocking call, compiled once into
 * the operations a direct kernel runs one after the other (src/api/kernel.c): no request,
 * executor, dependency or type slot at run time. Each op is one step of the schedule, in
 * the schedule's order, with what the kernel reads resolved: a copy's bytes (both types
 * contiguous), a reduction's count, a flag's segment index (the schedule's flag + 1,
 * above the executor's release flag). */
typedef struct convoy__kop {
    uint8_t kind;       /* CONVOY_STEP_NOTIFY, _WAIT, _COPY or _REDUCE */
    uint8_t sbuf, dbuf; /* enum convoy__buf: SEND, RECV or SHM */
    int32_t peer;       /* WAIT: node rank */
    int32_t word;       /* NOTIFY/WAIT: segment flag index */
    uint32_t value;     /* NOTIFY/WAIT: value within the operation */
    int64_t soff, doff; /* COPY/REDUCE: byte offsets from the buffers' bases */
    int64_t n;          /* COPY: bytes; REDUCE: elements of the operation's datatype */
    int64_t fidx;       /* NOTIFY/WAIT: the flag's word in the segment (convoy__shm_flag_word of the
                           notifying process), resolved by the process that keeps the call */
} convoy__kop;

typedef struct convoy__kernel {
    int32_t nops;
    /* The schedule's segment use (as convoy__schedule: the gate, alternation, release). */
    int32_t nflags, shm_alt;
    int64_t shm_bytes;
    int32_t alt; /* this process runs it alternating (resolved when the call is kept) */
    convoy__kop op[64];
} convoy__kernel;

/* Compiles s (sizes and contiguity per type slot, as the transport describes the call's
 * types) into k. Returns 1 if it did; 0 if s is no kernel's: not step order, no segment
 * use, scratch memory, a region in scratch or strided, a copy between non-contiguous
 * types or of unequal bytes. */
int convoy__kernel_compile(const convoy__schedule *s, const int64_t size[CONVOY_NTSLOT],
                           const int contig[CONVOY_NTSLOT], convoy__kernel *k);
/* The schedule k runs: its ops as steps in k's order, each depending on the one before
 * (copies as bytes, reductions in the operation's type), with k's segment use. The
 * checker proves it (convoy-check --kernel), so the kernel's protocol is proved, not just
 * the schedule it was compiled from. Appends to s (initialized, empty); returns s->err. */
int convoy__kernel_schedule(const convoy__kernel *k, convoy__schedule *s);

#endif
