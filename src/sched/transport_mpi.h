/*
 * The real transport: PMPI point-to-point on the operation's private communicator, local
 * copies and reductions with the user's datatypes and op, and the node segment.
 */
#ifndef CONVOY_TRANSPORT_MPI_H
#define CONVOY_TRANSPORT_MPI_H

#include <mpi.h>

#include "sched/sched.h"
#include "shm/shm.h"

/* Local reductions without the MPI library (reduce_local_mpi.c): dst[i] = src[i] op dst[i]
 * for n elements, where the library would compute the same bits with one C expression per
 * element; find returns NULL for every other op and type. convoy__local_reduce runs f for
 * small counts and the library's MPI_Reduce_local otherwise (f may be NULL). */
typedef void (*convoy__local_op)(const void *src, void *dst, int64_t n);
convoy__local_op convoy__local_op_find(MPI_Op op, MPI_Datatype type);
int convoy__local_reduce(convoy__local_op f, const void *src, void *dst, int64_t n,
                         MPI_Datatype type, MPI_Op op);

typedef struct convoy__mpi_transport {
    convoy__transport t; /* t.ctx points to this struct */
    MPI_Comm comm;
    MPI_Datatype type[CONVOY_NTSLOT];
    int contig[CONVOY_NTSLOT]; /* count elements are one block of count * size bytes */
    int64_t size[CONVOY_NTSLOT];
    MPI_Op op;
    MPI_Datatype op_type;   /* the datatype a user-defined op is given: the caller's handle */
    convoy__local_op local; /* op on op_type without the library, or NULL */
    convoy__shm *shm;
} convoy__mpi_transport;

/* op_type: the datatype handle the caller passed with op (a user-defined op sees it). */
void convoy__mpi_transport_init(convoy__mpi_transport *m, MPI_Comm comm, int tag_ub,
                                MPI_Datatype stype, MPI_Datatype rtype, MPI_Op op,
                                MPI_Datatype op_type, convoy__shm *shm, uint64_t shm_seq);

#endif
