/*
 * Clock-offset estimation for the window-based start of repetitions (bench/sync.c), in the
 * manner of ReproMPI (Hunold and Carpen-Amarie): pure C without MPI, unit-tested alone.
 */
#ifndef CONVOY_BENCH_CLOCK_H
#define CONVOY_BENCH_CLOCK_H

/*
 * n ping-pongs with a reference process: ping k left at local time sent[k], the reference
 * stamped its clock remote[k] on receipt and replied at once, the reply arrived at local
 * time recvd[k]. The ping with the shortest round trip bounds the error best (half its
 * round trip): offset = remote - (sent + recvd) / 2, so that local + offset is the
 * reference's time. Returns the index of that ping (-1 when n < 1), and its offset and
 * round trip.
 */
int bench_clock_offset(const double *sent, const double *remote, const double *recvd, int n,
                       double *offset, double *rtt);

#endif
