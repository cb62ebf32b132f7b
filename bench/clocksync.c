/* Synchronised clocks: see clocksync.h. */
#define _POSIX_C_SOURCE 200809L

#include "clocksync.h"

#include <sched.h>
#include <stdlib.h>

#include "clock.h"

enum { PINGS = 20, LEAD_SAMPLES = 7 };

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int bench_clock_sync(MPI_Comm comm, bench_clock *k)
{
    int rank, size;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    k->offset = k->rtt = k->lead = 0;
    double sent[PINGS], remote[PINGS], recvd[PINGS];
    /* One rank at a time against rank 0, so the ping-pongs do not compete. */
    for (int r = 1; r < size; r++) {
        PMPI_Barrier(comm);
        for (int i = 0; i < PINGS; i++) {
            if (rank == r) {
                double t = 0;
                sent[i] = MPI_Wtime();
                PMPI_Send(&sent[i], 1, MPI_DOUBLE, 0, 77, comm);
                PMPI_Recv(&t, 1, MPI_DOUBLE, 0, 78, comm, MPI_STATUS_IGNORE);
                recvd[i] = MPI_Wtime();
                remote[i] = t;
            } else if (rank == 0) {
                double dummy;
                PMPI_Recv(&dummy, 1, MPI_DOUBLE, r, 77, comm, MPI_STATUS_IGNORE);
                double t = MPI_Wtime();
                PMPI_Send(&t, 1, MPI_DOUBLE, r, 78, comm);
            }
        }
        if (rank == r) bench_clock_offset(sent, remote, recvd, PINGS, &k->offset, &k->rtt);
    }
    double lat[LEAD_SAMPLES];
    for (int i = 0; i < LEAD_SAMPLES; i++) {
        double t0 = MPI_Wtime();
        PMPI_Barrier(comm);
        PMPI_Barrier(comm);
        lat[i] = MPI_Wtime() - t0;
    }
    qsort(lat, LEAD_SAMPLES, sizeof *lat, cmp_double);
    k->lead = 4.0 * lat[LEAD_SAMPLES / 2];
    if (k->lead < 200e-6) k->lead = 200e-6;
    return PMPI_Bcast(&k->lead, 1, MPI_DOUBLE, 0, comm);
}

int bench_clock_wait(const bench_clock *k, double t)
{
    double now = MPI_Wtime() + k->offset;
    if (now > t) return 1;
    while ((now = MPI_Wtime() + k->offset) < t)
        if (t - now > 100e-6) sched_yield();
    return 0;
}
