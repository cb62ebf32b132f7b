/*
 * Internal interface of the API layer, for the tools and tests that link Convoy
 * statically (convoy-bench, the MPI tests).
 */
#ifndef CONVOY_API_H
#define CONVOY_API_H

#include <mpi.h>

#include "sched/sched.h"

/* How many schedules the builders have made in this process (persistent requests build
 * once; the schedule cache avoids rebuilding). */
long convoy__build_count(void);

/* Runs a hand-made schedule on comm (blocking), with the communicator's node segment if
 * the schedule uses one. For tests of the executor, the node segment and the transports.
 * sendtype/recvtype give the SEND and RECV type slots. */
int convoy__run_schedule(const convoy__schedule *s, const void *sendbuf, MPI_Datatype sendtype,
                         void *recvbuf, MPI_Datatype recvtype, MPI_Comm comm);

/* The decomposition Convoy uses for comm (made on first use; blocking, collective). */
int convoy__comm_topo(MPI_Comm comm, const convoy__topo **topo);
/* The node segment's data bytes blocking calls on comm offer to builders (0: none). */
int convoy__comm_segment_bytes(MPI_Comm comm, int64_t *bytes);

#endif
