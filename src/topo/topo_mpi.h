/* The topology of a real communicator (blocking, collective over comm). */
#ifndef CONVOY_TOPO_MPI_H
#define CONVOY_TOPO_MPI_H

#include <mpi.h>

#include "topo/topo.h"

/* Fills topo for comm and makes node_comm (the processes of this process's node, ordered
 * by rank, for the node segment). */
int convoy__topo_mpi(MPI_Comm comm, convoy__topo *topo, MPI_Comm *node_comm);

#endif
