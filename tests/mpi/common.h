/*
 * Helpers shared by the MPI tests: result bookkeeping (one line per failure, a closing
 * "N passed, M failed" line), deterministic data, wall-clock time and capturing this
 * process's stderr (to check the library's diagnostics).
 *
 * Every test compares Convoy with the native MPI collective (called through PMPI_, so
 * that no interposition can make the reference Convoy itself) or with values derived by
 * hand; never with Convoy.
 */
#ifndef CONVOY_TEST_COMMON_H
#define CONVOY_TEST_COMMON_H

#define _POSIX_C_SOURCE 200809L

#include <ctype.h>
#include <mpi.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Counts kept by the processes that are rank 0 of a check's communicator. */
static long tc_passed, tc_failed;
/* Failure lines of this process, printed by world rank 0 at the end (so that the summary
 * is the last line); each is also written to stderr at once, for a run that hangs. */
static char *tc_log;
static size_t tc_log_len, tc_log_cap;

static inline void tc_logf(const char *fmt, ...)
{
    char line[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    size_t n = strlen(line);
    fprintf(stderr, "%s\n", line);
    fflush(stderr);
    if (tc_log_len + n + 2 > tc_log_cap) {
        size_t cap = tc_log_cap ? tc_log_cap * 2 : 4096;
        while (cap < tc_log_len + n + 2)
            cap *= 2;
        char *p = realloc(tc_log, cap);
        if (!p) return;
        tc_log = p;
        tc_log_cap = cap;
    }
    memcpy(tc_log + tc_log_len, line, n);
    tc_log_len += n;
    tc_log[tc_log_len++] = '\n';
    tc_log[tc_log_len] = '\0';
}

static inline int tc_world_rank(void)
{
    int r;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    return r;
}

/* A hang guard: if no check completes for tc_guard_secs (CONVOY_TEST_GUARD, else the
 * program's default; 0: off), the process reports the last case it was in and exits, so
 * that a hang is named instead of ending in the ctest timeout. */
static char tc_case_buf[512];
static int tc_guard_secs, tc_guard_fd = 2;

static void tc_guard_handler(int sig)
{
    (void)sig;
    static const char a[] = "FAIL hang: no progress for the guard time; last case: ";
    ssize_t w = write(tc_guard_fd, a, sizeof a - 1);
    w = write(tc_guard_fd, tc_case_buf, strlen(tc_case_buf));
    w = write(tc_guard_fd, "\n", 1);
    (void)w;
    _exit(3);
}

/* Names the case now running (for the hang guard) and re-arms the guard. */
static inline void tc_case(const char *what)
{
    size_t n = strlen(what);
    if (n >= sizeof tc_case_buf) n = sizeof tc_case_buf - 1;
    memcpy(tc_case_buf, what, n);
    tc_case_buf[n] = '\0';
    if (tc_guard_secs > 0) alarm((unsigned)tc_guard_secs);
}

static inline void tc_guard_init(int default_secs)
{
    const char *v = getenv("CONVOY_TEST_GUARD");
    tc_guard_secs = v && *v ? atoi(v) : default_secs;
    if (tc_guard_secs <= 0) return;
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = tc_guard_handler;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    snprintf(tc_case_buf, sizeof tc_case_buf, "start-up");
    alarm((unsigned)tc_guard_secs);
}

/* One check over comm: ok is this process's verdict, detail says why it failed here.
 * Collective over comm. Returns the verdict of the whole communicator. */
static inline int tc_check(MPI_Comm comm, int ok, const char *what, const char *detail)
{
    int all = 0, crank;
    tc_case(what);
    PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, comm);
    MPI_Comm_rank(comm, &crank);
    if (!ok) tc_logf("FAIL %s [world rank %d]: %s", what, tc_world_rank(), detail ? detail : "");
    if (crank == 0) {
        if (all)
            tc_passed++;
        else
            tc_failed++;
    }
    return all;
}

/* Prints every process's failure lines and the summary on world rank 0. Returns the exit
 * status (the same on every rank). */
static inline int tc_finish(void)
{
    if (tc_guard_secs > 0) alarm(0);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    long c[2] = {tc_passed, tc_failed}, sum[2] = {0, 0};
    PMPI_Allreduce(c, sum, 2, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    int len = (int)tc_log_len;
    int *lens = rank == 0 ? calloc((size_t)size, sizeof(int)) : NULL;
    int *displs = rank == 0 ? calloc((size_t)size, sizeof(int)) : NULL;
    PMPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char *all = NULL;
    if (rank == 0) {
        int tot = 0;
        for (int i = 0; i < size; i++) {
            displs[i] = tot;
            tot += lens[i];
        }
        all = calloc((size_t)tot + 1, 1);
    }
    PMPI_Gatherv(tc_log ? tc_log : "", len, MPI_CHAR, all, lens, displs, MPI_CHAR, 0,
                 MPI_COMM_WORLD);
    if (rank == 0) {
        fflush(stderr);
        fputs(all, stdout);
        printf("%ld passed, %ld failed\n", sum[0], sum[1]);
        fflush(stdout);
    }
    free(all);
    free(lens);
    free(displs);
    free(tc_log);
    tc_log = NULL;
    return sum[1] != 0 || sum[0] == 0;
}

static inline uint64_t tc_mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* The hash behind every generated value: the same on every process for the same inputs. */
static inline uint64_t tc_hash(uint64_t seed, int rank, int64_t i)
{
    return tc_mix(tc_mix(seed * 0x100000001b3ull + (uint64_t)rank) ^ (uint64_t)i);
}

static inline double tc_now(void)
{
    return MPI_Wtime();
}

static inline void tc_sleep(double s)
{
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Forces `algo` (NULL: the default choice) for the collective named `coll` as Convoy names
 * it (convoy__coll_name: "allgather" sets CONVOY_ALLGATHER_ALGO, which convoy_Allgather
 * reads). */
static inline void tc_force_algo(const char *coll, const char *algo)
{
    char var[64];
    int k = snprintf(var, sizeof var, "CONVOY_");
    for (; *coll && k < 50; coll++)
        var[k++] = (char)toupper((unsigned char)*coll);
    snprintf(var + k, sizeof var - (size_t)k, "_ALGO");
    if (algo)
        setenv(var, algo, 1);
    else
        unsetenv(var);
}

/* Error class and text of an MPI return code. */
static inline const char *tc_errstr(int rc, char *buf, int len)
{
    int cls = -1, n = 0;
    char s[MPI_MAX_ERROR_STRING];
    s[0] = '\0';
    if (MPI_Error_class(rc, &cls) != MPI_SUCCESS) cls = -1;
    if (MPI_Error_string(rc, s, &n) != MPI_SUCCESS) s[0] = '\0';
    snprintf(buf, (size_t)len, "rc %d (class %d: %s)", rc, cls, s);
    return buf;
}

#endif
