/* The topology of a real communicator. */
#ifndef CONVOY_TOPO_MPI_H
#define CONVOY_TOPO_MPI_H

#include <mpi.h>

#include "topo/topo.h"

/* Blocking, collective over comm: fills topo (real nodes by shared memory). */
int convoy__topo_mpi(MPI_Comm comm, convoy__topo *topo);

/* The pieces, for the nonblocking setup: this process's key (real node key, virtual
 * node), a real-node key from the processor name, and the topology from every rank's key
 * (size pairs). */
int convoy__topo_key(int64_t real, int64_t key[2]);
int64_t convoy__host_key(void);
int convoy__topo_from_keys(convoy__topo *topo, int size, int rank, const int64_t *keys);

/* Blocking, collective over comm: the processes of this process's node that share memory,
 * ordered by rank (for the node segment). Its size may fall short of topo->ppn only where
 * the processor name and shared memory disagree. */
int convoy__node_comm_mpi(MPI_Comm comm, const convoy__topo *topo, MPI_Comm *node_comm);

#endif
