/*
 * Internal interface of the API layer, for the tools and tests that link Convoy
 * statically (convoy-bench, the MPI tests).
 */
#ifndef CONVOY_API_H
#define CONVOY_API_H

#include <mpi.h>

#include "coll/coll.h"
#include "sched/sched.h"

/* How many schedules the builders have made in this process (persistent requests build
 * once; the schedule cache avoids rebuilding). */
long convoy__build_count(void);

/* Runs a hand-made schedule on comm (blocking), with the communicator's node segment if
 * the schedule uses one. For tests of the executor, the node segment and the transports.
 * sendtype/recvtype give the SEND and RECV type slots. */
int convoy__run_schedule(const convoy__schedule *s, const void *sendbuf, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Datatype recvtype, MPI_Comm comm);

/* The n that CONVOY_DISSEM_N=auto chose for comm's Barrier (0: none chosen yet). Makes
 * comm's state if it has none (then blocking, collective). */
int convoy__barrier_auto_n(MPI_Comm comm);

/* How many calls this thread's direct kernel ran (src/api/kernel.c; tests). */
long convoy__kernel_count(void);
/* Calls the kept one-round message path served in this thread (round.c). */
long convoy__round_count(void);

/* The algorithm Convoy chose for the last call on comm that it planned ("native": the MPI
 * library's), or NULL if none. For tools that report the default choice. */
const char *convoy__comm_last_algo(MPI_Comm comm);
/* How many kinds of call the trial (src/api/trial.c) is still timing on comm: a tool that
 * wants a kind's steady state repeats its call until none. */
int convoy__comm_trials_open(MPI_Comm comm);

/* The decomposition Convoy uses for comm (made on first use; blocking, collective). */
int convoy__comm_topo(MPI_Comm comm, const convoy__topo **topo);
/* The data bytes of comm's node segment, 0 without one (what builders get as
 * args.shm_bytes; blocking, collective on first use). */
int convoy__comm_shm_bytes(MPI_Comm comm, int64_t *bytes);

/* The machine parameters Convoy plans comm's calls with, and where they came from
 * ("measured", "measured earlier", "built-in"). Blocking, collective on first use. */
int convoy__comm_machine(MPI_Comm comm, convoy__machine *m, const char **how);

#endif
