/*
 * Simulation builds (CONVOY_SIMGRID): the MPI library's reducing collectives with their
 * local reductions charged simulated time. With smpi/simulate-computation:no, SMPI's own
 * collectives reduce for free while Convoy charges every reduction from the platform's
 * model (src/platform/platform.h); timing natives that way would flatter them. Here the
 * native call gets a user-defined commutative operation that applies the real one and
 * charges the same model, so both sides pay the same rate for the same bytes reduced.
 */
#include "bench.h"

#ifdef CONVOY_SIMGRID
#include "platform/platform.h"

static MPI_Op real_op; /* the operation the charged one applies (per rank: privatised) */
static MPI_Op charged = MPI_OP_NULL;

static void apply(void *in, void *inout, int *len, MPI_Datatype *type)
{
    PMPI_Reduce_local(in, inout, *len, *type, real_op);
    convoy__plat_charge_reduce(*len, *type);
}

static MPI_Op charged_op(MPI_Op op)
{
    if (charged == MPI_OP_NULL) PMPI_Op_create(apply, 1, &charged);
    real_op = op;
    return charged;
}

int bench_charged_Allreduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    return PMPI_Allreduce(s, r, n, t, charged_op(op), c);
}

int bench_charged_Reduce(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, int root,
                         MPI_Comm c)
{
    return PMPI_Reduce(s, r, n, t, charged_op(op), root, c);
}

int bench_charged_Reduce_scatter_block(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
                                       MPI_Comm c)
{
    return PMPI_Reduce_scatter_block(s, r, n, t, charged_op(op), c);
}

int bench_charged_Scan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    return PMPI_Scan(s, r, n, t, charged_op(op), c);
}

int bench_charged_Exscan(const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
    return PMPI_Exscan(s, r, n, t, charged_op(op), c);
}

int bench_charged_Reduce_local(const void *in, void *inout, int n, MPI_Datatype t, MPI_Op op)
{
    int rc = PMPI_Reduce_local(in, inout, n, t, op);
    convoy__plat_charge_reduce(n, t);
    return rc;
}
#else
typedef int bench_charged_unused; /* natively the plain PMPI_* functions are timed */
#endif
