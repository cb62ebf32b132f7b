/*
 * The symbolic checker: runs a builder's schedules for all P ranks of a layout in one
 * process, through the real executor (src/sched/exec.c) and a symbolic transport, and
 * proves the result.
 *
 * The transport has zero buffering (a send completes only when a receive matches it),
 * matches by (source, destination, tag) in posting order and moves the data at the match.
 * A seeded scheduler picks at random among the matchable pairs and the ranks that have
 * something to do, so every seed is another completion order. A lockstep mode lets every
 * rank complete at most one send and one receive per round, which measures rounds.
 *
 * Data is symbolic: an allgatherv element ("cell") names its origin rank and index, an
 * allreduce cell is the set of ranks whose contributions it holds (plus its element
 * index); reductions fail on any contribution counted twice and, for algorithms that
 * claim to keep rank order, on combining anything but adjacent rank intervals in order.
 * Accesses to the node segment are checked for happens-before through notifications.
 *
 * No MPI anywhere: this library links only the pure core.
 */
#ifndef CONVOY_CHECK_H
#define CONVOY_CHECK_H

#include <stdint.h>

#include "coll/coll.h"
#include "select/select.h"

enum {
    CONVOY_CHECK_LOCKSTEP = 1, /* rounds: each rank at most one send + one receive per round */
    CONVOY_CHECK_SHUFFLE = 2   /* random completion order from the seed */
};

/* Called once per rank, in rank order, after the builder; may edit the schedule (the
 * mutation suite). Returns 1 if it changed this rank's schedule, 0 if not, < 0 on error. */
typedef int (*convoy__check_mutator)(void *ctx, const convoy__args *a, convoy__schedule *s);

typedef struct convoy__check_case {
    int coll;                 /* enum convoy__coll */
    const convoy__algo *algo; /* builder, applicability, properties, name */
    int procs, ppn, layout;   /* layout: CONVOY_LAYOUT_* (ignored when ids is set) */
    const int64_t *ids;       /* explicit node id per rank, or NULL */
    const char *counts;       /* allgatherv, reduce_scatter, gatherv, scatterv: distribution
                                 name (check/dist.h) */
    int64_t base;             /* allgatherv, reduce_scatter: base count c of the distribution */
    int64_t count;            /* allreduce, bcast, reduce, scan, exscan: elements; gather,
                                 scatter: per rank; alltoall: elements per block */
    int root;                 /* rooted collectives: the root's rank (< procs) */
    const char *displs;       /* gatherv, scatterv: the root's displacements (NULL or "seeded":
                                 gaps of 0..2, shuffled for odd seeds; "packed", "stride" (a
                                 gap of 1), "gaps" (1..3 by rank), "reversed", "shuffled",
                                 "overlap" (Scatterv only: blocks overlap by half) */
    uint64_t seed;            /* layout, counts, displacements and completion order */
    int inplace;              /* MPI_IN_PLACE */
    int commutative;          /* allreduce, reduce_scatter: the operation commutes (else rank
                                 order checked) */
    int idempotent;           /* allreduce: x op x = x (args.idempotent): a reduction may
                                 combine overlapping contributor sets; the result must still
                                 hold every rank's contribution (implies commutative) */
    int modes;                /* CONVOY_CHECK_LOCKSTEP | CONVOY_CHECK_SHUFFLE */
    int ops;                  /* operations in a row in shuffle mode (segment reuse), >= 1 */
    int64_t shm_bytes;        /* node segment offered to the builder (args.shm_bytes) */
    int cma;                  /* node peers' buffers readable (args.cma, with a segment) */
    int smp_check;            /* lockstep: fail a round in which a node sends or receives more
                                 than one inter-node message (always on for algorithms that
                                 claim SMP-aware rounds, see rounds.c) */
    convoy__machine machine;  /* given to the builders (default: the built-in machine) */
    int nparams;
    convoy__param params[CONVOY_MAX_PARAMS];
    convoy__check_mutator mutate;
    void *mutate_ctx;
} convoy__check_case;

/* Traffic of one operation, measured in lockstep mode (or in shuffle mode without it). */
typedef struct convoy__check_stats {
    int64_t rounds;                         /* lockstep rounds (0 without lockstep) */
    int64_t msgs, bytes;                    /* all messages of all ranks */
    int64_t rank_msgs_max;                  /* most messages one rank sends */
    int64_t rank_bytes_max;                 /* most bytes one rank sends */
    int64_t rank_inter_max, rank_inter_min; /* inter-node bytes sent + received by a rank */
    /* Within one node: the largest and smallest inter-node bytes (sent + received) of its
     * ranks, for the node where they are furthest apart (rooted collectives: the spread over
     * a node's lanes, apart from where the node sits in the trees). */
    int64_t node_rank_inter_max, node_rank_inter_min;
    int64_t node_out_max, node_in_max; /* inter-node bytes a node sends / receives */
    int64_t node_out_min;              /* the least a node sends */
    int64_t inter_total;               /* inter-node bytes all nodes send together */
    int64_t tmp_max;   /* scratch bytes one rank's schedule tree allocates (all its nodes) */
    int64_t tmp_root;  /* rooted collectives: the root's (else 0) */
    int64_t tmp_peers; /* rooted collectives: the most of one of the root's node peers */
    int64_t tmp_total; /* all ranks' together */
    /* Scratch bytes of one rank's schedule tree that none of its own steps writes (receives,
     * copies, reduces or reads into): the most over the ranks, and that rank (-1: none). A
     * rank whose scratch is all written allocates only what it holds. */
    int64_t tmp_unwritten;
    int tmp_unwritten_rank;
    int64_t cell_bytes;         /* bytes of one element in this case (symbolic cells) */
    int64_t lane_max, lane_min; /* inter-node bytes sent by the ranks of node rank j */
    int64_t round_node_out_max; /* lockstep: most inter-node messages a node sends */
    int64_t round_node_in_max;  /*   or receives in one round */
    int nnodes;
    /* Who works, and how many inter-node messages are under way at once. With 2+ nodes:
     * ranks that send / receive no inter-node message; in a reduction: ranks that reduce
     * nothing (0 otherwise). inflight_max: most inter-node sends posted and not yet matched
     * at one moment; round_inter_max (lockstep): most inter-node messages in one round,
     * all nodes together (each rank moves at most one each way per round, so N x M there
     * means every process of every node has one on the wire). */
    int64_t ranks_not_sending, ranks_not_receiving, ranks_not_reducing;
    int64_t inflight_max, round_inter_max;
    /* Lockstep rounds as the algorithm's analysis predicts them (rounds.c), -1 where it has
     * none: an upper bound, the exact count, and the formulas with their values. */
    int64_t rounds_bound, rounds_exact;
    char rounds_how[256];
} convoy__check_stats;

enum { CONVOY_CHECK_PASS, CONVOY_CHECK_FAIL, CONVOY_CHECK_SKIP };

typedef struct convoy__check_result {
    int status;        /* CONVOY_CHECK_PASS, _FAIL, or _SKIP (algorithm not applicable) */
    int mutated;       /* ranks whose schedule the mutator changed */
    char reason[4096]; /* why it failed (or was skipped) */
    convoy__check_stats st;
} convoy__check_result;

/* Fills a case with defaults: both modes, one operation (two for schedules that use the
 * node segment, to prove its reuse), 64 KiB segment, seed 1. */
void convoy__check_case_init(convoy__check_case *c);

/* Runs one case. Returns 0 (the verdict is in r->status) or an error code when the
 * checker itself could not run (out of memory, bad case). */
int convoy__check_run(const convoy__check_case *c, convoy__check_result *r);
/* Whether name is a displacement pattern of convoy__check_case.displs. */
int convoy__check_displs_known(const char *name);

/* Algorithms the checker knows beyond the registry (test builders such as the streaming
 * node-segment allgatherv of tests/common/shm_stream.c). */
extern const convoy__algo convoy__check_extra_algos[];
extern const int convoy__check_nextra_algos;
/* Registry first, then the checker's extras. */
const convoy__algo *convoy__check_algo_find(int coll, const char *name);

/* convoy-check --kernel: replaces each rank's schedule that the direct kernel would run
 * (convoy__kernel_compile with the case's types) by the schedule the kernel's compiled
 * form is (convoy__kernel_schedule), so the checker proves what the kernel does. Returns
 * 1 if it replaced the schedule, 0 if the kernel does not apply to it, < 0 on error. */
int convoy__check_kernel_mutator(void *ctx, const convoy__args *a, convoy__schedule *s);

/* --- the mutation suite ------------------------------------------------------------- */

typedef struct convoy__check_mutation {
    const char *name; /* drop, wrongsrc, dupreduce, offbyone, cycle, shmread, shmreuse,
                         dropmsg */
    const char *what;
    int target; /* the rank it changes (convoy__mutate_ctx.target) */
    /* The case it is shown on by default (coll, algorithm, layout, counts). */
    void (*setup)(convoy__check_case *c);
    convoy__check_mutator mutate;
} convoy__check_mutation;

extern const convoy__check_mutation convoy__check_mutations[];
extern const int convoy__check_nmutations;
const convoy__check_mutation *convoy__check_mutation_find(const char *name);

/* Per-run state of a mutator (which rank it targets, the partner it picked). */
typedef struct convoy__mutate_ctx {
    const convoy__check_mutation *m;
    int target; /* rank whose schedule is changed (cycle: also its partner) */
    int partner;
    int tag; /* dropmsg: the step tag of the dropped message */
} convoy__mutate_ctx;

/* Schedule surgery used by the mutations, exposed for tests: drops step `drop` (its
 * dependents inherit its dependencies), appends a duplicate of step `dup` (after it),
 * makes step `edge_to` depend on step `edge_from`; -1 leaves each out. The steps are
 * renumbered in a topological order. Returns 0, or an error code (a cycle: ARG). */
int convoy__check_rewrite(convoy__schedule *s, int drop, int dup, int edge_from, int edge_to);

#endif
