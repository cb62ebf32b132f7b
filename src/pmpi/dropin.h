/*
 * libconvoy_pmpi: the MPI_* names of Convoy's collectives, for unmodified programs
 * (LD_PRELOAD, or linked before the MPI library). Each wrapper hands the call back to the
 * MPI library's own collective (PMPI_*) when Convoy must not serve it (the reasons below),
 * else calls convoy_*. Nonblocking calls return a generalized request, persistent ones a
 * persistent receive on a private self-communicator (requests.c); both complete through
 * the MPI library's own MPI_Wait/Test family, which the wrappers of that family feed by
 * running Convoy's pending operations first. CONVOY_STATS counts what served each call.
 */
#ifndef CONVOY_PMPI_DROPIN_H
#define CONVOY_PMPI_DROPIN_H

#include <mpi.h>
#include <stdatomic.h>

#include "convoy.h"
#include "select/select.h"

/* The MPI collectives the wrappers cover (CONVOY_DISABLE and CONVOY_STATS names). */
#define DROPIN_COLLS(X)                                                                            \
    X(ALLGATHER, "allgather")                                                                      \
    X(ALLGATHERV, "allgatherv")                                                                    \
    X(ALLREDUCE, "allreduce")                                                                      \
    X(BARRIER, "barrier")                                                                          \
    X(REDUCE_SCATTER, "reduce_scatter")                                                            \
    X(REDUCE_SCATTER_BLOCK, "reduce_scatter_block")                                                \
    X(BCAST, "bcast")                                                                              \
    X(GATHER, "gather")                                                                            \
    X(GATHERV, "gatherv")                                                                          \
    X(SCATTER, "scatter")                                                                          \
    X(SCATTERV, "scatterv")                                                                        \
    X(REDUCE, "reduce")                                                                            \
    X(SCAN, "scan")                                                                                \
    X(EXSCAN, "exscan")                                                                            \
    X(ALLTOALL, "alltoall")

#define DROPIN_ID(id, name) DROPIN_##id,
enum { DROPIN_COLLS(DROPIN_ID) DROPIN_NCOLL };
#undef DROPIN_ID

/* Why a call went to the MPI library's collective. The first ones are decided here, the
 * rest by Convoy (convoy__req_outcome's strings). */
#define DROPIN_REASONS(X)                                                                          \
    X(DISABLED, "disabled")           /* CONVOY_DISABLE names the collective */                    \
    X(INTERCOMM, "intercomm")         /* an intercommunicator */                                   \
    X(DEVICE, "device")               /* buffers Convoy cannot prove are host memory */            \
    X(COUNT, "count")                 /* a large-count call whose counts do not fit an int */      \
    X(FINALIZED, "finalized")         /* called after MPI_Finalize began */                        \
    X(SETUP, "setup")                 /* first nonblocking call on a communicator */               \
    X(NO_STATE, "no_state")           /* nonblocking, MPI_THREAD_MULTIPLE, no state yet */         \
    X(FORCED, "forced")               /* CONVOY_<COLL>_ALGO=native */                              \
    X(MODEL, "model")                 /* the cost model predicts the MPI library faster */         \
    X(TRIAL, "trial")                 /* timed faster than Convoy, or being timed (trial.c) */     \
    X(TUNING, "tuning")               /* CONVOY_TUNING_FILE says native */                         \
    X(NO_ALGORITHM, "no_algorithm")   /* no Convoy algorithm accepts these arguments */            \
    X(BLOCKING_ONLY, "blocking_only") /* nonblocking or persistent, CONVOY_NATIVE_BLOCKING */

#define DROPIN_ID(id, name) DROPIN_WHY_##id,
enum { DROPIN_REASONS(DROPIN_ID) DROPIN_NWHY };
#undef DROPIN_ID

/* 0 if Convoy may serve a call of collective `coll` on comm, else 1 + the reason
 * (counted). */
int dropin_handback(int coll, MPI_Comm comm);
/* CONVOY_NATIVE_BLOCKING (on unless 0, read when the library is loaded): a handed-back
 * blocking call is the library's blocking one. */
int dropin_native_blocking(void);
/* dropin_handback for the nonblocking and persistent forms: under CONVOY_NATIVE_BLOCKING
 * they are the library's too (reason blocking_only), so that Convoy never has an operation
 * pending while a process blocks in the library's blocking collective. */
int dropin_handback_nb(int coll, MPI_Comm comm);
/* Counts a call Convoy served (algo) or handed back (why: a reason string, or NULL with
 * algo NULL for "unknown"). */
void dropin_count(int coll, const convoy__algo *algo, const char *why);
void dropin_count_why(int coll, int why);
/* The DROPIN_WHY_ index of a reason string Convoy gave (unknown: model). */
int dropin_why_index(const char *why);
/* Bit c set: CONVOY_DISABLE or CONVOY_DEVICE hand collective c back whole, or MPI_Finalize
 * began (valid once a wrapped call asked dropin_handback). */
extern atomic_uint dropin_off_mask;
/* After a blocking convoy_* call: counts what served it. */
void dropin_count_last(int coll);

/* Nonblocking and persistent requests (requests.c). */
int dropin_nonblocking(int coll, convoy_request cr, MPI_Request *request);
int dropin_persistent(int coll, convoy_request cr, MPI_Request *request);
/* Nonzero while Convoy has operations the program has not completed. */
int dropin_pending(void);
/* Runs every pending Convoy operation once; completes the requests of finished ones. */
void dropin_drive(void);
/* Waits for a native request while running Convoy's pending operations. */
int dropin_wait_native(MPI_Request *request, MPI_Status *status);

/* CONVOY_STATS output (stats.c), called from MPI_Finalize. */
void dropin_stats_report(void);
/* This process's count of calls of coll served by the algorithm `name`, handed back for
 * the reason `name`, or all "served" / "handed_back" (for tests). */
long dropin_stats_get(int coll, const char *name);

#endif
