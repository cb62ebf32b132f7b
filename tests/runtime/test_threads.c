/*
 * Thread safety: under MPI_THREAD_MULTIPLE, several threads run Convoy collectives at the
 * same time, each on its own communicator, including the communicators' first use (state
 * setup) and freeing them. Results are compared with values derived by hand.
 */
#include <convoy.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { THREADS = 3, ROUNDS = 40 };

typedef struct {
    MPI_Comm comm;
    int id, failures;
} job;

static void *work(void *arg)
{
    job *j = arg;
    int rank, size;
    MPI_Comm_rank(j->comm, &rank);
    MPI_Comm_size(j->comm, &size);
    int *counts = malloc((size_t)size * sizeof *counts),
        *displs = malloc((size_t)size * sizeof *displs);
    int total = 0;
    for (int i = 0; i < size; i++) {
        counts[i] = (i + j->id) % 3;
        displs[i] = total;
        total += counts[i];
    }
    int *all = malloc((size_t)(total + 1) * sizeof *all), mine[3];
    for (int round = 0; round < ROUNDS; round++) {
        /* Allreduce: sum of (rank + round + id) over ranks, by hand. */
        long v[5], w[5];
        for (int k = 0; k < 5; k++)
            v[k] = rank + round + j->id + k;
        int rc = round % 2 ? convoy_Allreduce(v, w, 5, MPI_LONG, MPI_SUM, j->comm) : 0;
        if (round % 2 == 0) {
            convoy_request q;
            rc = convoy_Iallreduce(v, w, 5, MPI_LONG, MPI_SUM, j->comm, &q);
            if (!rc) rc = convoy_wait(&q);
        }
        for (int k = 0; k < 5; k++)
            if (rc || w[k] != (long)size * (size - 1) / 2 + (long)size * (round + j->id + k))
                j->failures++;
        /* Allgatherv: rank i contributes counts[i] values i*100 + round + k. */
        for (int k = 0; k < counts[rank]; k++)
            mine[k] = rank * 100 + round + k;
        rc = convoy_Allgatherv(mine, counts[rank], MPI_INT, all, counts, displs, MPI_INT, j->comm);
        for (int i = 0; i < size; i++)
            for (int k = 0; k < counts[i]; k++)
                if (rc || all[displs[i] + k] != i * 100 + round + k) j->failures++;
    }
    free(counts);
    free(displs);
    free(all);
    return NULL;
}

int main(int argc, char **argv)
{
    int provided, rank;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (provided < MPI_THREAD_MULTIPLE) {
        if (rank == 0)
            printf("MPI_THREAD_MULTIPLE not provided: nothing to test\n0 passed, 0 failed\n");
        MPI_Finalize();
        return 0;
    }
    int failures = 0;
    for (int generation = 0; generation < 2; generation++) {
        job jobs[THREADS];
        pthread_t th[THREADS];
        for (int t = 0; t < THREADS; t++) {
            /* Made in the main thread: communicator creation is collective in call order. */
            MPI_Comm_dup(MPI_COMM_WORLD, &jobs[t].comm);
            jobs[t].id = t;
            jobs[t].failures = 0;
        }
        for (int t = 0; t < THREADS; t++)
            pthread_create(&th[t], NULL, work, &jobs[t]);
        for (int t = 0; t < THREADS; t++) {
            pthread_join(th[t], NULL);
            failures += jobs[t].failures;
            MPI_Comm_free(&jobs[t].comm);
        }
    }
    int all;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) printf("%d passed, %d failed\n", all ? 0 : 1, all ? 1 : 0);
    MPI_Finalize();
    return all != 0;
}
