/*
 * convoy-bench: the program. Everything but MPI's start and end is in bench.c, so that the
 * tests can run the same benchmark inside their own MPI job.
 */
#include "bench.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rc = convoy_bench_main(argc, argv, MPI_COMM_WORLD);
    MPI_Finalize();
    return rc;
}
