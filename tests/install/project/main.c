/* Uses an installed Convoy: convoy_Allreduce must give what MPI_Allreduce gives. */
#include <stdio.h>
#include <stdlib.h>

#include <convoy.h>
#include <mpi.h>

#define COUNT 1000

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    long *in = malloc(COUNT * sizeof *in);
    long *got = malloc(COUNT * sizeof *got);
    long *want = malloc(COUNT * sizeof *want);
    for (int i = 0; i < COUNT; i++) {
        in[i] = (long)rank * 1000003L + i;
        got[i] = -1;
        want[i] = -2;
    }

    int rc = convoy_Allreduce(in, got, COUNT, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(in, want, COUNT, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);

    int bad = rc != MPI_SUCCESS;
    for (int i = 0; i < COUNT; i++)
        if (got[i] != want[i]) {
            if (!bad)
                fprintf(stderr, "rank %d: element %d is %ld, MPI says %ld\n", rank, i, got[i],
                        want[i]);
            bad = 1;
        }
    int anybad = 0;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rank == 0)
        printf("%s: convoy_Allreduce on %d processes %s\n", argv[0], size,
               anybad ? "FAILED" : "matches MPI_Allreduce");
    free(in);
    free(got);
    free(want);
    MPI_Finalize();
    return anybad ? 1 : 0;
}
