/*
 * Fortran names of the blocking collectives, for Open MPI. Open MPI's Fortran bindings
 * (mpif.h and `use mpi`: mpi_allreduce_; mpi_f08: ompi_allreduce_f) convert the handles
 * and call PMPI_Allreduce directly, so a Fortran program would never reach the C
 * wrappers; MPICH's call MPI_Allreduce and need nothing here (tests/pmpi/test_fortran.f90
 * checks both). Each entry converts the handles (MPI_*_f2c) and Fortran's MPI_IN_PLACE /
 * MPI_BOTTOM sentinels, then calls the C wrapper, which decides serve or hand back and
 * counts. MPI_Finalize's Fortran names run the C wrapper too, so CONVOY_STATS is printed.
 *
 * The nonblocking and persistent forms keep Open MPI's own Fortran entries (the
 * collective stays native): Open MPI's Fortran MPI_Wait/MPI_Test call PMPI_Wait/PMPI_Test,
 * which would not run Convoy's pending operations.
 */
#define _GNU_SOURCE /* RTLD_DEFAULT */
#include "pmpi/dropin.h"

#if defined(OPEN_MPI) && OPEN_MPI

#include <dlfcn.h>

/* Fortran INTEGER arrays (counts, displacements) are passed to the C calls as they are. */
_Static_assert(sizeof(MPI_Fint) == sizeof(int), "MPI_Fint must be a C int");

/* Fortran's MPI_IN_PLACE and MPI_BOTTOM are common blocks of the MPI library (gfortran's
 * name); a buffer at their address stands for the C constant. */
static void *fbuf(void *b)
{
    static void *in_place, *bottom;
    static int looked;
    if (!looked) { /* benign race: every thread finds the same addresses */
        in_place = dlsym(RTLD_DEFAULT, "mpi_fortran_in_place_");
        bottom = dlsym(RTLD_DEFAULT, "mpi_fortran_bottom_");
        looked = 1;
    }
    if (b && b == in_place) return MPI_IN_PLACE;
    if (b && b == bottom) return MPI_BOTTOM;
    return b;
}

#define CB(b) fbuf((void *)(b))
#define COMM PMPI_Comm_f2c(*comm)
#define TYPE(t) PMPI_Type_f2c(*t)
#define OP PMPI_Op_f2c(*op)

/* Both names of one Fortran entry: mpi_<name>_ (mpif.h, use mpi) and ompi_<name>_f
 * (mpi_f08's, and the one the first is an alias of inside Open MPI). */
#define F_ENTRY(name, params, call)                                                                \
    void ompi_##name##_f params;                                                                   \
    void mpi_##name##_ params;                                                                     \
    void ompi_##name##_f params                                                                    \
    {                                                                                              \
        *ierr = call;                                                                              \
    }                                                                                              \
    void mpi_##name##_ params                                                                      \
    {                                                                                              \
        *ierr = call;                                                                              \
    }

typedef MPI_Fint F; /* a Fortran INTEGER argument, by reference */

F_ENTRY(allgather, (void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *comm, F *ierr),
        MPI_Allgather(CB(sb), *sc, TYPE(st), CB(rb), *rc, TYPE(rt), COMM))
F_ENTRY(allgatherv, (void *sb, F *sc, F *st, void *rb, F *rcs, F *ds, F *rt, F *comm, F *ierr),
        MPI_Allgatherv(CB(sb), *sc, TYPE(st), CB(rb), rcs, ds, TYPE(rt), COMM))
F_ENTRY(allreduce, (void *sb, void *rb, F *n, F *t, F *op, F *comm, F *ierr),
        MPI_Allreduce(CB(sb), CB(rb), *n, TYPE(t), OP, COMM))
F_ENTRY(barrier, (F * comm, F *ierr), MPI_Barrier(COMM))
F_ENTRY(reduce_scatter, (void *sb, void *rb, F *rcs, F *t, F *op, F *comm, F *ierr),
        MPI_Reduce_scatter(CB(sb), CB(rb), rcs, TYPE(t), OP, COMM))
F_ENTRY(reduce_scatter_block, (void *sb, void *rb, F *rc, F *t, F *op, F *comm, F *ierr),
        MPI_Reduce_scatter_block(CB(sb), CB(rb), *rc, TYPE(t), OP, COMM))
F_ENTRY(bcast, (void *b, F *n, F *t, F *root, F *comm, F *ierr),
        MPI_Bcast(CB(b), *n, TYPE(t), *root, COMM))
F_ENTRY(gather, (void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *root, F *comm, F *ierr),
        MPI_Gather(CB(sb), *sc, TYPE(st), CB(rb), *rc, TYPE(rt), *root, COMM))
F_ENTRY(gatherv,
        (void *sb, F *sc, F *st, void *rb, F *rcs, F *ds, F *rt, F *root, F *comm, F *ierr),
        MPI_Gatherv(CB(sb), *sc, TYPE(st), CB(rb), rcs, ds, TYPE(rt), *root, COMM))
F_ENTRY(scatter, (void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *root, F *comm, F *ierr),
        MPI_Scatter(CB(sb), *sc, TYPE(st), CB(rb), *rc, TYPE(rt), *root, COMM))
F_ENTRY(scatterv,
        (void *sb, F *scs, F *ds, F *st, void *rb, F *rc, F *rt, F *root, F *comm, F *ierr),
        MPI_Scatterv(CB(sb), scs, ds, TYPE(st), CB(rb), *rc, TYPE(rt), *root, COMM))
F_ENTRY(reduce, (void *sb, void *rb, F *n, F *t, F *op, F *root, F *comm, F *ierr),
        MPI_Reduce(CB(sb), CB(rb), *n, TYPE(t), OP, *root, COMM))
F_ENTRY(scan, (void *sb, void *rb, F *n, F *t, F *op, F *comm, F *ierr),
        MPI_Scan(CB(sb), CB(rb), *n, TYPE(t), OP, COMM))
F_ENTRY(exscan, (void *sb, void *rb, F *n, F *t, F *op, F *comm, F *ierr),
        MPI_Exscan(CB(sb), CB(rb), *n, TYPE(t), OP, COMM))
F_ENTRY(alltoall, (void *sb, F *sc, F *st, void *rb, F *rc, F *rt, F *comm, F *ierr),
        MPI_Alltoall(CB(sb), *sc, TYPE(st), CB(rb), *rc, TYPE(rt), COMM))
F_ENTRY(finalize, (F * ierr), MPI_Finalize())

#endif
