/*
 * The builder interface: what an algorithm file sees. A builder is a pure function of
 * these arguments (no MPI calls, no globals), so the same code runs for real, in the
 * checker and in the cost model.
 */
#ifndef CONVOY_COLL_H
#define CONVOY_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "sched/sched.h"
#include "topo/topo.h"

enum convoy__coll {
    CONVOY_COLL_ALLGATHERV,
    CONVOY_COLL_ALLREDUCE,
    CONVOY_COLL_BARRIER,
    CONVOY_COLL_REDUCE_SCATTER,       /* Reduce_scatter (and the block form's shared algorithms) */
    CONVOY_COLL_ALLGATHER,            /* Allgather: allgatherv arguments with equal counts */
    CONVOY_COLL_REDUCE_SCATTER_BLOCK, /* reduce_scatter arguments with equal counts */
    CONVOY_COLL_BCAST,
    CONVOY_COLL_GATHER,
    CONVOY_COLL_GATHERV,
    CONVOY_COLL_SCATTER,
    CONVOY_COLL_SCATTERV,
    CONVOY_COLL_REDUCE,
    CONVOY_COLL_SCAN,
    CONVOY_COLL_EXSCAN,
    CONVOY_COLL_ALLTOALL,
    CONVOY_NCOLL
};

/* Whether the collective combines with an operation (and so has commutativity to honour). */
static inline int convoy__coll_reduces(int coll)
{
    return coll == CONVOY_COLL_ALLREDUCE || coll == CONVOY_COLL_REDUCE_SCATTER ||
           coll == CONVOY_COLL_REDUCE_SCATTER_BLOCK || coll == CONVOY_COLL_REDUCE ||
           coll == CONVOY_COLL_SCAN || coll == CONVOY_COLL_EXSCAN;
}

/* What a builder knows of a datatype: enough to compute offsets and scratch sizes. */
typedef struct convoy__dtype {
    int64_t size;   /* bytes of data in one element */
    int64_t extent; /* stride between elements */
    int64_t true_lb, true_extent;
} convoy__dtype;

/* Linear cost model: a message of n bytes costs alpha + beta * n; a local reduction of n
 * bytes costs gamma * n. alpha and beta are one pair of processes across nodes (or any two
 * processes when there is one node). The lane-aware fields (papers/004 §2, §5) refine it
 * per level: a message inside a node costs alpha_node + beta_node * n; when k processes of
 * a node send across at once, each message costs alpha + n * max(beta, k * beta_nic)
 * (beta_nic: seconds per byte of a node's total outgoing traffic, i.e. 1 / the bandwidth
 * of all its lanes together). Zero means unknown: convoy__machine_levels() fills in the
 * flat values (alpha, beta; beta_nic 0: lanes never saturate). */
typedef struct convoy__machine {
    double alpha;                 /* seconds per message */
    double beta;                  /* seconds per byte */
    double gamma;                 /* seconds per byte reduced */
    double alpha_node, beta_node; /* inside a node (shared memory) */
    double beta_nic;              /* per byte of a node's total outgoing traffic */
    double overhead; /* seconds of Convoy's own work per call, beyond the MPI library's */
    /* alpha of the MPI library's own blocking message path, which its collectives take;
     * alpha (and alpha_node) are Convoy's path: nonblocking posts completed by the
     * executor's wait policy, which costs more where processes share cores. 0: = alpha. */
    double alpha_native;
    /* One flag handshake through the node segment as measured at setup (machine.c: a
     * ping-pong of rank 0 and its node neighbour under the executor's wait policy); 0:
     * unmeasured (convoy__flag_cost then estimates it from alpha). */
    double flag;
    /* Seconds per byte that cross-memory attach (process_vm_readv) moves, as measured at
     * setup (machine.c: rank 0 reading its own PROBE_BYTES); 0: unmeasured or not
     * permitted. The single-copy variants' models charge their reads at it: a read pins
     * and maps the peer's pages one by one, which on some hosts costs several memcpys (a
     * virtual machine whose page tables the hypervisor shadows: 8 GB/s against 40-170). */
    double cma;
    /* Processes per CPU on rank 0's host, as its setup counted them (convoy__host_share:
     * the communicators' processes there over the CPUs they may run on together); above 1
     * the host is oversubscribed. 0: unknown (built-in values, simulation). */
    double share;
    /* The gap (LogGP's g and G): what each further message costs a process that posts
     * several at once, gap + gap_b * bytes, as measured at setup (machine.c: a burst of
     * messages from rank 0 to its partner against a single one). It is the part of a
     * message that serialises on its sender (the software's per-message work and its
     * copies: SMPI's smpi/ois, an MPI library's eager copy) or on the wire, whichever is
     * slower; alpha and beta are a whole message, end to end. 0: unmeasured
     * (convoy__gap then charges alpha / 2 + beta * bytes, the models' earlier share). */
    double gap, gap_b;
    double gap_node, gap_node_b; /* the same between rank 0 and its node neighbour */
    /* An exchange inside a node (each process sends and receives one message at once,
     * as a step of a node exchange does): what each further message pair costs each
     * process, xgap + xgap_b * bytes (a send's and a receive's serialised work: SMPI's
     * smpi/ois plus smpi/or). 0: unmeasured (convoy__xgap returns 0). */
    double xgap_node, xgap_node_b;
    /* Per byte of a large message (CONVOY_BETA_LARGE_BYTES), between the same pairs as beta
     * and beta_node (machine.c: the extra half round trip from CONVOY_BETA_BYTES to
     * CONVOY_BETA_LARGE_BYTES). beta and beta_node are the per-byte cost of a middle message,
     * which stays in the caches and, in an MPI library, may take the eager path; a large one
     * streams from memory by the library's large-message path. 0: unmeasured (beta at every
     * size). Only convoy__machine_sized reads them. */
    double beta_large, beta_node_large;
} convoy__machine;

/* The sizes the per-byte costs are measured at: beta and beta_node at CONVOY_BETA_BYTES
 * (below the eager limits of MPI libraries and SMPI: a middle collective's messages), the
 * large values at CONVOY_BETA_LARGE_BYTES (beyond a core's L2 cache on current hosts). */
enum { CONVOY_BETA_BYTES = 1 << 15, CONVOY_BETA_LARGE_BYTES = 1 << 20 };

/* m with zero level fields replaced by the flat values. */
convoy__machine convoy__machine_levels(const convoy__machine *m);
/* m for a call that moves about `bytes` per process (plan.c: the call's data over its
 * processes): beta and beta_node are the middle message's up to CONVOY_BETA_BYTES, the large
 * one's from CONVOY_BETA_LARGE_BYTES, in between interpolated in log bytes, and never below
 * the middle one (docs/architecture.md, "A call's machine"). The result has no large values
 * left, so a nested call's arguments, which copy their parent's machine, are not sized
 * twice. */
convoy__machine convoy__machine_sized(const convoy__machine *m, double bytes);
/* What each further message of `bytes` costs when one process posts several at once
 * (sends, or receives all posted): the measured gap (m->gap, m->gap_b), at most a whole
 * message (a measurement on a loaded host must not make a further message dearer than a
 * message alone); unmeasured, alpha / 2 + beta * bytes (the latencies overlap, the bytes
 * do not). m at the level of the messages (convoy__lane_level maps the node's gap). */
double convoy__gap(const convoy__machine *m, double bytes);
/* What each further message pair of `bytes` costs each process of a node exchange (it
 * sends one and receives one): the measured m->xgap_node + m->xgap_node_b * bytes, at most
 * two whole node messages; 0 when unmeasured. */
double convoy__xgap(const convoy__machine *m, double bytes);
/* The work bound of a synchronisation on cores that processes share: where rank 0's host
 * has more processes than CPUs (m->share > 1), only the CPUs' worth of them run at once,
 * and every wait (for a message or a node peer's flag) is over only when the process
 * waited for has been scheduled, which the measured alpha pays (machine.c's probe waits as
 * the executor does, yielding to the other processes). So a pattern whose processes wait
 * w times each on average takes at least share * w * alpha, however its waits overlap on
 * paper; messages posted together and waited for at once are one wait (their senders run
 * side by side): with 4 processes on 2 cores, a fan-in to one rank and a fan-out (two
 * waits) against one round of 3 messages per rank (one), src/coll/barrier/. 0 where
 * processes have their cores (and with unknown share): the latency models decide. */
static inline double convoy__shared_cores_bound(const convoy__machine *m, double waits)
{
    return m->share > 1 ? m->share * waits * m->alpha : 0;
}
/* The same with the bytes: where processes share cores, the copies that carry a pattern's
 * bytes between them (a shared-memory transport, the receiver's single copy) run on those
 * cores too, so one whose processes each wait `waits` times and receive `bytes` takes at
 * least share * (waits * alpha + bytes * beta). 0 where processes have their cores. */
static inline double convoy__shared_cores_work(const convoy__machine *m, double waits, double bytes)
{
    return m->share > 1 ? m->share * (waits * m->alpha + bytes * m->beta) : 0;
}

/* The cost of one flag handshake between two processes of a node through the node
 * segment (a store-release seen by a polling load-acquire: a cache line moving between
 * cores, and the executor's step around it), in seconds; the segment algorithms' cost
 * models count these as the network ones count alpha. At least half a message's alpha:
 * the waiter needs its peer to run, as a message needs its receiver, and where processes
 * share cores (oversubscribed, or a loaded host) that, not the cache line, is the cost,
 * and the measured alpha shows it. Where the setup measured a handshake (m->flag), that,
 * with a core per process (a cache line's transfer, a fraction of alpha / 2); where
 * processes share cores (m->share > 1) not below alpha / 2 either: the probe's best
 * ping-pong is a moment when both happened to run, which a collective's handshakes, all of
 * its processes busy, rarely get (np 4 as 2 x 2 on 2 cores: probe 1.2 us, alpha 3.7-6.1; a
 * 1-int Allreduce `node_dissem`, one message and two handshakes, took 11.8 us against
 * `dissem`'s one round of messages 6.6, yet was predicted within 10 % of it and chosen
 * whenever alpha came out high). */
#define CONVOY_FLAG_COST 2e-7
static inline double convoy__flag_cost(const convoy__machine *m)
{
    const double half = m->alpha / 2 > CONVOY_FLAG_COST ? m->alpha / 2 : CONVOY_FLAG_COST;
    if (m->flag <= 0) return half;
    return m->share > 1 && m->flag < half ? half : m->flag;
}

/* An algorithm parameter, named like its environment override. */
typedef struct convoy__param {
    char name[48];
    int64_t value;
} convoy__param;

#define CONVOY_MAX_PARAMS 8

typedef struct convoy__args {
    int coll;                 /* enum convoy__coll */
    const convoy__topo *topo; /* includes this rank */
    /* Allgatherv: scount elements of stype sent; rcounts/displs in elements of rtype.
     * Allreduce: count elements of the operation's datatype (stype == rtype).
     * Reduce_scatter (both forms): count = the whole vector (sum of rcounts), rcounts[i] =
     * rank i's block, displs[i] = its offset in the vector (prefix sums), all in elements
     * of the operation's datatype (stype == rtype); in place, the receive buffer holds the
     * whole vector on entry and rank i's block at its start on exit.
     * Reduce, Scan, Exscan: count elements of the operation's datatype (stype == rtype);
     * Reduce: only the root has a receive buffer (MPI_IN_PLACE only there: inplace is set
     * on the root alone); Exscan: rank 0's receive buffer is never written.
     * Alltoall: count = elements of stype per destination block of the send buffer,
     * rcounts[i] = elements of rtype per block (the same for all i), displs[i] = i *
     * rcounts[i]; in place, stype == rtype, count == rcounts[i] and the receive buffer
     * holds the blocks to send on entry.
     * Rooted collectives: see "Rooted collectives" below. */
    int64_t count;
    int root; /* rooted collectives: the root's rank in the communicator */
    const int64_t *rcounts, *displs;
    convoy__dtype stype, rtype;
    int inplace;       /* MPI_IN_PLACE was given as the send buffer */
    int commutative;   /* Allreduce, Reduce_scatter: the operation is commutative */
    int idempotent;    /* Allreduce, Reduce_scatter: x op x = x (MAX, MIN, BAND, BOR, LAND, LOR,
                          MINLOC, ...) */
    int counts_local;  /* Gatherv, Scatterv: the counts are known at the root only (a
                          nonblocking call): rcounts is NULL elsewhere */
    int packed;        /* rooted children of lane/hier builders (CONVOY_PACKED_*): which
                          regions hold packed bytes (T_BYTE; their type described as bytes) */
    int64_t shm_bytes; /* node segment data bytes available to the schedule (0: none) */
    int cma;           /* with a segment: node peers' buffers may be read (CONVOY_STEP_READ) */
    convoy__machine machine; /* the communicator's machine parameters (same on all ranks) */
    int nparams;
    convoy__param params[CONVOY_MAX_PARAMS];
} convoy__args;

/* args.packed: this rank's own block (Gather: what it sends, Scatter: where its block
 * goes) is packed bytes; the root's vector is (a lane's relay holds it packed). */
enum { CONVOY_PACKED_OWN = 1, CONVOY_PACKED_VEC = 2 };

/* The collective whose arguments coll's builders get (Allgather: allgatherv's; the block
 * form: reduce_scatter's); coll itself for the others. */
int convoy__coll_base(int coll);

/* Value of a parameter, or def when not set. */
int64_t convoy__param_get(const convoy__args *a, const char *name, int64_t def);
/* floor(log2 v) for v >= 1. */
int convoy__log2_floor(int64_t v);
/* Cost of k messages of `bytes` each that one process posts at once (or receives, all
 * posted at once): the first pays a whole message, alpha + beta bytes; each later one the
 * gap (convoy__gap: as measured, else its start-up share and its bytes, alpha / 2 + beta
 * bytes), as the latencies overlap (a linear scatter or gather, the sends of a tree node
 * to its children). 0 for k <= 0. */
double convoy__posted_cost(const convoy__machine *m, int k, double bytes);
/* A round of a flat algorithm in which every process sends q messages of `bytes` at once
 * (papers/004 §2, the lane-aware model): `off` of the messages of rank 0's node's
 * processes leave the node. None: the node's alpha and beta. Some: alpha, and per byte
 * each process's q times beta or the node's lanes carrying the off messages (off *
 * beta_nic), whichever is slower. Rank 0's node stands for all (every rank computes the
 * same cost). Returns the round's latency plus its bytes' time, without reductions. */
double convoy__round_cost(const convoy__machine *m, int q, int off, double bytes);
/* How many messages of rank 0's node leave it in a round where each of its processes r
 * sends to ranks (r + i d) mod P for i = 1..n (a dissemination round at distance d). */
int convoy__round_off_shift(const convoy__topo *t, int64_t d, int n);
/* Cost of an exchange in which one process sends k messages of `bytes` and receives k,
 * all posted at once: one whole message and, for each further pair, the exchange gap
 * (convoy__xgap: the process's own work for a send and a receive); where that is not
 * measured, convoy__posted_cost. */
double convoy__exchange_cost(const convoy__machine *m, int k, double bytes);
/* Critical path of a binomial broadcast of `bytes` over p processes (children served
 * largest subtree first, each node's sends posted at once): the slowest leaf's sum over its
 * path of one message per hop plus, per hop, the gaps (convoy__posted_cost) of the
 * siblings sent before it. ceil(log2 p) (alpha + beta bytes) when p is a power of two,
 * less otherwise (36: 5 whole messages and one share, not 6). */
double convoy__binomial_bcast_cost(const convoy__machine *m, int p, double bytes);

/* Allgatherv: rank i's block in the receive buffer; where this rank's own contribution is
 * read (the send buffer, or its block when in place); the copy of the own contribution
 * into its block (none in place or when empty: returns -1, else the step). */
convoy__region convoy__agv_block(const convoy__args *a, int i);
convoy__region convoy__agv_own(const convoy__args *a);
int convoy__agv_copy_own(const convoy__args *a, convoy__schedule *s);

/* Rooted collectives (Bcast, Gather, Gatherv, Scatter, Scatterv); `root` is the root's rank.
 *  - Bcast: count elements of the datatype (stype == rtype) in the receive buffer on every
 *    rank: the root's input and everyone's output. There is no send buffer.
 *  - Gather(v): count = elements of stype this rank sends (an in-place root sends none: its
 *    block is already in the receive buffer). The root's vector is in its receive buffer:
 *    rank i's block is rcounts[i] elements of rtype at displs[i] extents.
 *  - Scatter(v), the mirror: the root's vector is in its send buffer, rcounts[i] elements of
 *    stype at displs[i]; count = elements of rtype this rank receives (an in-place root
 *    receives nothing: its block stays in the send buffer).
 * The vector type (rtype for Gather, stype for Scatter) is significant at the root only; on
 * the other ranks it is described as bytes (size = extent = 1) and rcounts[i] is the byte
 * size of rank i's block, displs packed prefix sums, so every rank knows every block's
 * size: Gather from its own (equal) count, Gatherv from the counts the API broadcasts once
 * per blocking or persistent call. A nonblocking Gatherv/Scatterv has counts_local set and
 * rcounts == NULL off the root: only algorithms that read no other rank's count apply.
 * Data moves between two user buffers in the user's types (equal signatures); anything
 * packed in scratch memory moves as bytes on both ends. */
int convoy__rooted_gathers(const convoy__args *a); /* Gather or Gatherv (else Scatter(v)) */
/* Bytes of rank i's block (any rank, unless counts_local). */
int64_t convoy__rooted_bytes(const convoy__args *a, int i);
/* Sum of convoy__rooted_bytes over all ranks. */
int64_t convoy__rooted_total(const convoy__args *a);
/* The root's region of rank i's block (only the root may use it). */
convoy__region convoy__rooted_block(const convoy__args *a, int i);
/* This rank's own contribution (Gather: what it sends) or result (Scatter: where its block
 * goes): the user's buffer, or the root's block when in place. */
convoy__region convoy__rooted_own(const convoy__args *a);
/* Rank of relative rank v (rank 0 = the root). */
static inline int convoy__rooted_rank(const convoy__args *a, int v)
{
    return (v + a->root) % a->topo->size;
}
/* Relative rank of this process. */
static inline int convoy__rooted_vrank(const convoy__args *a)
{
    return (a->topo->rank - a->root + a->topo->size) % a->topo->size;
}
/* Binomial tree over relative ranks (MPICH's): relative rank v > 0 has parent v minus its
 * lowest set bit and the subtree [v, v + convoy__binomial_subtree(v, p)); the root's is
 * [0, p). Children of v: v + m for m = powers of two below its lowest set bit (the root:
 * below p), v + m < p. */
int convoy__binomial_subtree(int v, int p);
/* Smallest power of two >= the subtree size bound of v: its lowest set bit (root: the
 * power of two >= p). Children are v + m for m = that / 2, / 4, ..., 1 with v + m < p. */
int convoy__binomial_span(int v, int p);
/* Byte offsets of the blocks of relative ranks v .. v + sub - 1 packed in that order:
 * off[q] for v + q, off[sub] = their bytes (malloc'd; NULL when out of memory). */
int64_t *convoy__rooted_packed(const convoy__args *a, int v, int sub);

/* Alltoall: block i of the receive buffer (from rank i); block j of the data to send (to
 * rank j): the send buffer's, or in place a copy of the receive buffer's in scratch at
 * offset 0 (convoy__a2a_stage makes it: tmp_bytes and the copy step, or -1 when not in
 * place). */
convoy__region convoy__a2a_rblock(const convoy__args *a, int i);
convoy__region convoy__a2a_sblock(const convoy__args *a, int j);
int convoy__a2a_stage(const convoy__args *a, convoy__schedule *s);

typedef int (*convoy__builder)(const convoy__args *a, convoy__schedule *s);

/* Allgather(v) or Bcast built by `build` on the call in bytes (src/coll/bytes.c): for the
 * builders that cut a rank's block at element positions, which ranks with different but
 * matching datatypes would place at different bytes. */
int convoy__build_in_bytes(const convoy__args *a, convoy__schedule *s, convoy__builder build);
/* Their cost models and explanations on the call in bytes as well, so that every rank
 * predicts the same time whatever its datatype. */
typedef double (*convoy__cost)(const convoy__args *a, const convoy__machine *m);
typedef void (*convoy__explainer)(const convoy__args *a, char *buf, size_t len);
double convoy__cost_in_bytes(const convoy__args *a, const convoy__machine *m, convoy__cost cost);
void convoy__explain_in_bytes(const convoy__args *a, char *buf, size_t len,
                              convoy__explainer explain);

/* Each algorithm file under src/coll/<coll>/ defines its builder and its cost model (the
 * predicted time under m, used by the default choice), and an applicability predicate if
 * it has restrictions. Keep the sections in order; add lines at the end of a section. */

/* allgatherv */
int convoy__allgatherv_ring(const convoy__args *a, convoy__schedule *s);
double convoy__allgatherv_ring_cost(const convoy__args *a, const convoy__machine *m);
int convoy__allgatherv_recdbl(const convoy__args *a, convoy__schedule *s);
double convoy__allgatherv_recdbl_cost(const convoy__args *a, const convoy__machine *m);
int convoy__allgatherv_bruck(const convoy__args *a, convoy__schedule *s);
double convoy__allgatherv_bruck_cost(const convoy__args *a, const convoy__machine *m);
int convoy__allgatherv_neighbor(const convoy__args *a, convoy__schedule *s);
int convoy__allgatherv_neighbor_applicable(const convoy__args *a);
double convoy__allgatherv_neighbor_cost(const convoy__args *a, const convoy__machine *m);
int convoy__allgatherv_gatherv_bcast(const convoy__args *a, convoy__schedule *s);
double convoy__allgatherv_gatherv_bcast_cost(const convoy__args *a, const convoy__machine *m);
int convoy__allgatherv_pipelined(const convoy__args *a, convoy__schedule *s);
double convoy__allgatherv_pipelined_cost(const convoy__args *a, const convoy__machine *m);
/* Its block size in elements of the receive type (the checker predicts rounds from it). */
int64_t convoy__allgatherv_pipelined_block(const convoy__args *a);
void convoy__allgatherv_pipelined_explain(const convoy__args *a, char *buf, size_t len);
int convoy__allgatherv_node_segment(const convoy__args *a, convoy__schedule *s);
int convoy__allgatherv_node_segment_applicable(const convoy__args *a);
double convoy__allgatherv_node_segment_cost(const convoy__args *a, const convoy__machine *m);
void convoy__allgatherv_node_segment_explain(const convoy__args *a, char *buf, size_t len);
int convoy__allgatherv_lane(const convoy__args *a, convoy__schedule *s);
int convoy__allgatherv_lane_applicable(const convoy__args *a);
double convoy__allgatherv_lane_cost(const convoy__args *a, const convoy__machine *m);
int convoy__allgatherv_hier(const convoy__args *a, convoy__schedule *s);
int convoy__allgatherv_hier_applicable(const convoy__args *a);
double convoy__allgatherv_hier_cost(const convoy__args *a, const convoy__machine *m);
int convoy__allgatherv_direct(const convoy__args *a, convoy__schedule *s);
int convoy__allgatherv_direct_applicable(const convoy__args *a);
double convoy__allgatherv_direct_cost(const convoy__args *a, const convoy__machine *m);

/* allreduce */
int convoy__allreduce_recdbl(const convoy__args *a, convoy__schedule *s);
double convoy__allreduce_recdbl_cost(const convoy__args *a, const convoy__machine *m);
int convoy__allreduce_ring(const convoy__args *a, convoy__schedule *s);
double convoy__allreduce_ring_cost(const convoy__args *a, const convoy__machine *m);
int convoy__allreduce_rabenseifner(const convoy__args *a, convoy__schedule *s);
double convoy__allreduce_rabenseifner_cost(const convoy__args *a, const convoy__machine *m);
/* Rabenseifner's first phase, shared by its Allreduce and Reduce (allreduce_rabenseifner.c):
 * the fold of the 2 rem lowest ranks and the reduce-scatter by recursive halving. The
 * working vector W is buffer `wbuf` at byte offset woff + i * extent for element i, received
 * halves go to scratch at toff + i * extent - true_lb. Returns s->err; a rank that folds out
 * gets me = -1 and no steps (the caller sends its vector to rank + 1 with TAG_FOLD). */
enum { CONVOY_HALVING_TAG_FOLD = 0, CONVOY_HALVING_TAG_RS = 1 }; /* RS: 1 + level, < 64 */
typedef struct convoy__halving {
    int rem, levels, me;         /* p - p', log2 p', the number of this rank (-1: folded) */
    int last, tmp_free, in_send; /* W current after `last`; scratch free after `tmp_free` */
    int64_t lo, hi;              /* the window held at the end */
    int64_t wlo[32], whi[32];    /* the window held before level j */
    int rs_send[32];             /* level j's send (it reads the half given away) */
} convoy__halving;
int convoy__rabenseifner_halving(const convoy__args *a, convoy__schedule *s, int wbuf, int64_t woff,
                                 int64_t toff, convoy__halving *h);
double convoy__rabenseifner_halving_cost(const convoy__args *a, const convoy__machine *m);
int convoy__allreduce_reduce_bcast(const convoy__args *a, convoy__schedule *s);
double convoy__allreduce_reduce_bcast_cost(const convoy__args *a, const convoy__machine *m);
/* n-way dissemination (papers/003, and papers/001 as n = 1): the last round's plan for
 * (P, n), shared with the checker (round analysis, --dissem-table). */
#define CONVOY_DISSEM_MAXWIN 128
enum {
    CONVOY_DISSEM_PLAIN = 0,
    CONVOY_DISSEM_IDEM = 7,
    CONVOY_DISSEM_GB = 6,
    CONVOY_DISSEM_FALLBACK = -1
}; /* else Theorem 1's case 1..5 */
typedef struct convoy__dissem_plan {
    int P, n, k;                       /* ranks, ways, rounds of the standard scheme */
    int64_t m;                         /* (n+1)^(k-1): the window after k-1 rounds */
    int kase;                          /* CONVOY_DISSEM_* or 1..5 */
    int s, lsnd, lrcv, jsnd, jrcv;     /* the tuple (cases 1..5 and g_B) */
    int nwin;                          /* messages of the last round */
    int64_t win[CONVOY_DISSEM_MAXWIN]; /* their window sizes, outward from the receiver */
    int64_t take;                      /* the receiver's window left out (0: none) */
    int64_t extra;                     /* reductions the take-out adds */
    int rounds;                        /* lockstep rounds (windows sent ahead) */
} convoy__dissem_plan;
void convoy__dissem_plan_make(int P, int n, int idempotent, convoy__dissem_plan *pl);
void convoy__dissem_plan_describe(const convoy__dissem_plan *pl, char *buf, size_t len);
int convoy__allreduce_dissem_n(const convoy__args *a, int *forced);
void convoy__allreduce_dissem_plan(const convoy__args *a, convoy__dissem_plan *pl);
int convoy__allreduce_dissem(const convoy__args *a, convoy__schedule *s);
double convoy__allreduce_dissem_cost(const convoy__args *a, const convoy__machine *m);
void convoy__allreduce_dissem_explain(const convoy__args *a, char *buf, size_t len);

int convoy__allreduce_node_ring(const convoy__args *a, convoy__schedule *s);
int convoy__allreduce_node_ring_applicable(const convoy__args *a);
double convoy__allreduce_node_ring_cost(const convoy__args *a, const convoy__machine *m);
void convoy__allreduce_node_ring_explain(const convoy__args *a, char *buf, size_t len);
int convoy__allreduce_lane(const convoy__args *a, convoy__schedule *s);
int convoy__allreduce_lane_applicable(const convoy__args *a);
double convoy__allreduce_lane_cost(const convoy__args *a, const convoy__machine *m);
int convoy__allreduce_hier(const convoy__args *a, convoy__schedule *s);
int convoy__allreduce_hier_applicable(const convoy__args *a);
double convoy__allreduce_hier_cost(const convoy__args *a, const convoy__machine *m);

int convoy__allreduce_node_dissem(const convoy__args *a, convoy__schedule *s);
int convoy__allreduce_node_dissem_applicable(const convoy__args *a);
double convoy__allreduce_node_dissem_cost(const convoy__args *a, const convoy__machine *m);

/* barrier */
int convoy__barrier_dissem(const convoy__args *a, convoy__schedule *s);
double convoy__barrier_dissem_cost(const convoy__args *a, const convoy__machine *m);
void convoy__barrier_dissem_explain(const convoy__args *a, char *buf, size_t len);
/* Its n (CONVOY_DISSEM_N, else the cost model's), rounds k and last-round messages m. */
int convoy__barrier_dissem_n(const convoy__args *a);
void convoy__barrier_dissem_shape(const convoy__args *a, int *n, int *k, int *m);
int convoy__barrier_node_flags(const convoy__args *a, convoy__schedule *s);
int convoy__barrier_node_flags_applicable(const convoy__args *a);
double convoy__barrier_node_flags_cost(const convoy__args *a, const convoy__machine *m);
int convoy__barrier_linear(const convoy__args *a, convoy__schedule *s);
double convoy__barrier_linear_cost(const convoy__args *a, const convoy__machine *m);
void convoy__barrier_linear_explain(const convoy__args *a, char *buf, size_t len);

/* reduce_scatter */
int convoy__reduce_scatter_ring(const convoy__args *a, convoy__schedule *s);
double convoy__reduce_scatter_ring_cost(const convoy__args *a, const convoy__machine *m);
int convoy__reduce_scatter_rechalving(const convoy__args *a, convoy__schedule *s);
double convoy__reduce_scatter_rechalving_cost(const convoy__args *a, const convoy__machine *m);
int convoy__reduce_scatter_lane(const convoy__args *a, convoy__schedule *s);
int convoy__reduce_scatter_lane_applicable(const convoy__args *a);
double convoy__reduce_scatter_lane_cost(const convoy__args *a, const convoy__machine *m);
int convoy__reduce_scatter_hier(const convoy__args *a, convoy__schedule *s);
int convoy__reduce_scatter_hier_applicable(const convoy__args *a);
double convoy__reduce_scatter_hier_cost(const convoy__args *a, const convoy__machine *m);

/* bcast (and the rooted builders shared by Gather/Gatherv and Scatter/Scatterv: the
 * v-forms run the same builders with the root's counts) */
int convoy__bcast_binomial(const convoy__args *a, convoy__schedule *s);
double convoy__bcast_binomial_cost(const convoy__args *a, const convoy__machine *m);
int convoy__bcast_linear(const convoy__args *a, convoy__schedule *s);
double convoy__bcast_linear_cost(const convoy__args *a, const convoy__machine *m);
int convoy__bcast_scatter_allgather(const convoy__args *a, convoy__schedule *s);
double convoy__bcast_scatter_allgather_cost(const convoy__args *a, const convoy__machine *m);
int convoy__bcast_lane(const convoy__args *a, convoy__schedule *s);
int convoy__bcast_lane_applicable(const convoy__args *a);
double convoy__bcast_lane_cost(const convoy__args *a, const convoy__machine *m);
int convoy__bcast_hier(const convoy__args *a, convoy__schedule *s);
int convoy__bcast_hier_applicable(const convoy__args *a);
double convoy__bcast_hier_cost(const convoy__args *a, const convoy__machine *m);
int convoy__bcast_klane_pipeline(const convoy__args *a, convoy__schedule *s);
int convoy__bcast_klane_pipeline_applicable(const convoy__args *a);
double convoy__bcast_klane_pipeline_cost(const convoy__args *a, const convoy__machine *m);
void convoy__bcast_klane_pipeline_explain(const convoy__args *a, char *buf, size_t len);
/* Its pipeline blocks (CONVOY_BCAST_KLANE_BLOCKS, else the cost model's). */
int64_t convoy__bcast_klane_pipeline_blocks(const convoy__args *a);
int convoy__bcast_klane_tree(const convoy__args *a, convoy__schedule *s);
int convoy__bcast_klane_tree_applicable(const convoy__args *a);
double convoy__bcast_klane_tree_cost(const convoy__args *a, const convoy__machine *m);

/* gather, gatherv */
int convoy__gather_linear(const convoy__args *a, convoy__schedule *s);
double convoy__gather_linear_cost(const convoy__args *a, const convoy__machine *m);
int convoy__gather_binomial(const convoy__args *a, convoy__schedule *s);
int convoy__rooted_all_counts(const convoy__args *a); /* !counts_local */
double convoy__gather_binomial_cost(const convoy__args *a, const convoy__machine *m);
int convoy__gather_lane(const convoy__args *a, convoy__schedule *s);
int convoy__gather_lane_applicable(const convoy__args *a);
double convoy__gather_lane_cost(const convoy__args *a, const convoy__machine *m);
int convoy__gather_hier(const convoy__args *a, convoy__schedule *s);
int convoy__gather_hier_applicable(const convoy__args *a);
double convoy__gather_hier_cost(const convoy__args *a, const convoy__machine *m);
int convoy__gather_klane_tree(const convoy__args *a, convoy__schedule *s);
int convoy__gather_klane_tree_applicable(const convoy__args *a);
double convoy__gather_klane_tree_cost(const convoy__args *a, const convoy__machine *m);

/* scatter, scatterv */
int convoy__scatter_linear(const convoy__args *a, convoy__schedule *s);
double convoy__scatter_linear_cost(const convoy__args *a, const convoy__machine *m);
int convoy__scatter_binomial(const convoy__args *a, convoy__schedule *s);
double convoy__scatter_binomial_cost(const convoy__args *a, const convoy__machine *m);
int convoy__scatter_lane(const convoy__args *a, convoy__schedule *s);
int convoy__scatter_lane_applicable(const convoy__args *a);
double convoy__scatter_lane_cost(const convoy__args *a, const convoy__machine *m);
int convoy__scatter_hier(const convoy__args *a, convoy__schedule *s);
int convoy__scatter_hier_applicable(const convoy__args *a);
double convoy__scatter_hier_cost(const convoy__args *a, const convoy__machine *m);
int convoy__scatter_klane_tree(const convoy__args *a, convoy__schedule *s);
int convoy__scatter_klane_tree_applicable(const convoy__args *a);
double convoy__scatter_klane_tree_cost(const convoy__args *a, const convoy__machine *m);

/* reduce */
int convoy__reduce_binomial(const convoy__args *a, convoy__schedule *s);
double convoy__reduce_binomial_cost(const convoy__args *a, const convoy__machine *m);
int convoy__reduce_linear(const convoy__args *a, convoy__schedule *s);
double convoy__reduce_linear_cost(const convoy__args *a, const convoy__machine *m);
int convoy__reduce_rabenseifner(const convoy__args *a, convoy__schedule *s);
double convoy__reduce_rabenseifner_cost(const convoy__args *a, const convoy__machine *m);
int convoy__reduce_hier(const convoy__args *a, convoy__schedule *s);
int convoy__reduce_hier_applicable(const convoy__args *a);
double convoy__reduce_hier_cost(const convoy__args *a, const convoy__machine *m);
int convoy__reduce_lane(const convoy__args *a, convoy__schedule *s);
int convoy__reduce_lane_applicable(const convoy__args *a);
double convoy__reduce_lane_cost(const convoy__args *a, const convoy__machine *m);
int convoy__reduce_lane_gather(const convoy__args *a, convoy__schedule *s);
double convoy__reduce_lane_gather_cost(const convoy__args *a, const convoy__machine *m);
/* The node reduce-scatter of the full-lane Reduce and Scan (papers/004 §3.4, §3.5): the
 * node's vector (`in`, a region of s: count elements) reduced over the node (the node
 * group nt) so that each process ends with the node's partial result of the lane blocks
 * it serves (lane.h), block j at out.off + (its offset) extent (out may be the parent's
 * scratch). One child per group of n blocks, padded with placeholders to the most groups
 * of any node, and an empty child joining them, whose step it returns;
 * convoy__lane_node_skip adds the same number of empty children (a node that skips it). */
int convoy__lane_node_rs(convoy__schedule *s, const convoy__args *a, const convoy__topo *nt,
                         convoy__region in, convoy__region out, int ndeps, const int *deps);
int convoy__lane_node_skip(convoy__schedule *s, const convoy__topo *t);
/* Groups of n consecutive lane blocks on a node of n processes, the most on any node. */
int convoy__lane_node_groups(const convoy__topo *t);
/* The lane phase of both full-lane Reduces: block j reduced on virtual lane j (lane topology
 * lt) to its member on the root's node, from send (into recv) rebased at the block's offset,
 * in place where inplace; a child per lane (placeholders where this process serves none),
 * each after dep; lanes[j] its step (-1: none). */
void convoy__lane_reduces(convoy__schedule *s, const convoy__args *a, const convoy__topo *lt,
                          convoy__region send, convoy__region recv, int inplace, int dep,
                          int *lanes);

/* scan and exscan (one file per algorithm serves both: a->coll tells which) */
int convoy__scan_linear(const convoy__args *a, convoy__schedule *s);
double convoy__scan_linear_cost(const convoy__args *a, const convoy__machine *m);
void convoy__scan_linear_explain(const convoy__args *a, char *buf, size_t len);
int convoy__scan_recdbl(const convoy__args *a, convoy__schedule *s);
double convoy__scan_recdbl_cost(const convoy__args *a, const convoy__machine *m);
int convoy__scan_hier(const convoy__args *a, convoy__schedule *s);
int convoy__scan_hier_applicable(const convoy__args *a);
double convoy__scan_hier_cost(const convoy__args *a, const convoy__machine *m);
int convoy__scan_lane(const convoy__args *a, convoy__schedule *s);
int convoy__scan_lane_applicable(const convoy__args *a);
double convoy__scan_lane_cost(const convoy__args *a, const convoy__machine *m);

/* alltoall */
int convoy__alltoall_pairwise(const convoy__args *a, convoy__schedule *s);
double convoy__alltoall_pairwise_cost(const convoy__args *a, const convoy__machine *m);
int convoy__alltoall_linear(const convoy__args *a, convoy__schedule *s);
double convoy__alltoall_linear_cost(const convoy__args *a, const convoy__machine *m);
int convoy__alltoall_bruck(const convoy__args *a, convoy__schedule *s);
double convoy__alltoall_bruck_cost(const convoy__args *a, const convoy__machine *m);
int convoy__alltoall_lane(const convoy__args *a, convoy__schedule *s);
int convoy__alltoall_lane_applicable(const convoy__args *a);
double convoy__alltoall_lane_cost(const convoy__args *a, const convoy__machine *m);

#endif
