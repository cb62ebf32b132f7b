/*
 * Hand-back decisions and CONVOY_STATS.
 *
 * Read once, at the first wrapped call: CONVOY_DISABLE=coll,coll (collectives handed back
 * whole; "all" for every one), CONVOY_DEVICE=auto|host|device (auto: if the MPI library is
 * CUDA-aware, MPIX_Query_cuda_support() > 0, Convoy cannot tell device from host buffers
 * without the CUDA runtime and hands every call back; host: the program promises host
 * buffers; device: hand back as a CUDA-aware library would), CONVOY_STATS=1|path.
 * CONVOY_NATIVE_BLOCKING (colls.c: the kind of native call a handed-back blocking call
 * makes; on unless 0) is read when the library is loaded (dropin_loaded, below).
 *
 * Counts are per process; MPI_Finalize sums them over MPI_COMM_WORLD to rank 0, which
 * prints one table (stderr for CONVOY_STATS=1, else the file named; a "%r" in the name
 * makes one file per rank with that rank's own counts instead).
 */
#include "api/internal.h"
#include "pmpi/dropin.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#define DROPIN_NAME(id, name) name,
static const char *const coll_names[DROPIN_NCOLL] = {DROPIN_COLLS(DROPIN_NAME)};
static const char *const why_names[DROPIN_NWHY] = {DROPIN_REASONS(DROPIN_NAME)};
#undef DROPIN_NAME

enum { MAX_ALGOS = 256 };
/* served[c][i]: by convoy__algos[i]; back[c][w]: handed back for reason w. */
static atomic_long served[DROPIN_NCOLL][MAX_ALGOS], back[DROPIN_NCOLL][DROPIN_NWHY];

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int disabled[DROPIN_NCOLL], device, stats_on, native_blocking;
/* Set when MPI_Finalize begins: later calls are the library's (reason finalized). */
static atomic_int finalizing;
/* Bit c: collective c is handed back whole (CONVOY_DISABLE, CONVOY_DEVICE) or MPI_Finalize
 * began; set by the first wrapped call (read_settings), before any memo record exists. */
atomic_uint dropin_off_mask;
static const char *stats_path;

static void warn(const char *var, const char *value, const char *valid)
{
    int rank = 0, init = 0;
    PMPI_Initialized(&init);
    if (init) PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        fprintf(stderr, "convoy: %s=%s is not valid (valid: %s); ignoring it\n", var, value, valid);
}

static void read_settings(void)
{
    const char *v = getenv("CONVOY_DISABLE");
    if (v && *v) {
        const char *p = v;
        while (*p) {
            size_t n = strcspn(p, ",");
            int all = n == 3 && strncmp(p, "all", 3) == 0, found = all;
            for (int c = 0; c < DROPIN_NCOLL; c++)
                if (all || (strlen(coll_names[c]) == n && strncmp(p, coll_names[c], n) == 0))
                    disabled[c] = found = 1;
            if (!found && n > 0) {
                char list[256] = "all";
                for (int c = 0; c < DROPIN_NCOLL; c++)
                    strncat(strncat(list, ", ", sizeof list - strlen(list) - 1), coll_names[c],
                            sizeof list - strlen(list) - 1);
                warn("CONVOY_DISABLE", v, list);
                memset(disabled, 0, sizeof disabled);
                break;
            }
            p += n + (p[n] == ',');
        }
    }
    v = getenv("CONVOY_DEVICE");
    if (!v || !*v || strcmp(v, "auto") == 0) {
#if defined(MPIX_CUDA_AWARE_SUPPORT) || defined(MPICH)
        device = MPIX_Query_cuda_support() > 0;
#endif
    } else if (strcmp(v, "device") == 0) {
        device = 1;
    } else if (strcmp(v, "host") != 0) {
        warn("CONVOY_DEVICE", v, "auto, host, device");
    }
    unsigned off = 0;
    for (int c = 0; c < DROPIN_NCOLL; c++)
        off |= (unsigned)(disabled[c] || device) << c;
    atomic_fetch_or(&dropin_off_mask, off);
    v = getenv("CONVOY_STATS");
    if (v && *v && strcmp(v, "0") != 0) {
        stats_on = 1;
        stats_path = strcmp(v, "1") == 0 ? NULL : v;
    }
}

int dropin_native_blocking(void)
{
    pthread_once(&once, read_settings);
    return native_blocking;
}

void dropin_count_why(int coll, int why)
{
    atomic_fetch_add_explicit(&back[coll][why], 1, memory_order_relaxed);
}

int dropin_handback(int coll, MPI_Comm comm)
{
    pthread_once(&once, read_settings);
    /* The common case in a few loads: a communicator on which this thread made a blocking
     * Convoy call (it has state: an intracommunicator, valid; convoy__cstate_cached says
     * so only while no state was freed since), before MPI_Finalize. */
    if (!disabled[coll] && !device && !atomic_load_explicit(&finalizing, memory_order_relaxed) &&
        convoy__cstate_cached(comm))
        return 0;
    int why = -1, inter, fin = 0;
    if (disabled[coll])
        why = DROPIN_WHY_DISABLED;
    else if (device)
        why = DROPIN_WHY_DEVICE;
    else if (atomic_load(&finalizing) || PMPI_Finalized(&fin) || fin)
        why = DROPIN_WHY_FINALIZED;
    /* An invalid communicator is handed back too: the MPI library reports it as it would. */
    else if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) || inter)
        why = DROPIN_WHY_INTERCOMM;
    if (why < 0) return 0;
    dropin_count_why(coll, why);
    return 1 + why;
}

int dropin_handback_nb(int coll, MPI_Comm comm)
{
    int why = dropin_handback(coll, comm);
    if (why || !native_blocking) return why;
    dropin_count_why(coll, DROPIN_WHY_BLOCKING_ONLY);
    return 1 + DROPIN_WHY_BLOCKING_ONLY;
}

/* The reason strings Convoy hands over are its literals: the last one seen and its index
 * (per thread), so that a repeated call compares a pointer, not the reason names. */
static CONVOY_TLS_FAST const char *last_why;
static CONVOY_TLS_FAST int last_why_index;

int dropin_why_index(const char *why)
{
    if (!why || why != last_why) {
        int w = 0;
        while (why && w < DROPIN_NWHY && strcmp(why, why_names[w]) != 0)
            w++;
        /* Convoy's own native choice, unnamed or unknown here: "model" */
        last_why_index = why && w < DROPIN_NWHY ? w : DROPIN_WHY_MODEL;
        last_why = why;
    }
    return last_why_index;
}

void dropin_count(int coll, const convoy__algo *algo, const char *why)
{
    if (algo) {
        long i = algo - convoy__algos;
        if (i >= 0 && i < MAX_ALGOS)
            atomic_fetch_add_explicit(&served[coll][i], 1, memory_order_relaxed);
        return;
    }
    dropin_count_why(coll, dropin_why_index(why));
}

void dropin_count_last(int coll)
{
    const convoy__algo *al;
    const char *why;
    convoy__last_outcome(&al, &why);
    dropin_count(coll, al, why);
}

static void print(FILE *f, const long *s, const long *b, int nranks)
{
    fprintf(f,
            "convoy: CONVOY_STATS (%s %d rank%s): collective: served by Convoy "
            "(algorithm: calls) | handed back (reason: calls)\n",
            nranks > 1 ? "sum over" : "rank", nranks, nranks > 1 ? "s" : "");
    for (int c = 0; c < DROPIN_NCOLL; c++) {
        long ns = 0, nb = 0;
        for (int i = 0; i < convoy__nalgos && i < MAX_ALGOS; i++)
            ns += s[c * MAX_ALGOS + i];
        for (int w = 0; w < DROPIN_NWHY; w++)
            nb += b[c * DROPIN_NWHY + w];
        if (!ns && !nb) continue;
        fprintf(f, "convoy:   %-20s served %ld", coll_names[c], ns);
        for (int i = 0; i < convoy__nalgos && i < MAX_ALGOS; i++)
            if (s[c * MAX_ALGOS + i])
                fprintf(f, " %s:%ld", convoy__algos[i].name, s[c * MAX_ALGOS + i]);
        fprintf(f, " | handed back %ld", nb);
        for (int w = 0; w < DROPIN_NWHY; w++)
            if (b[c * DROPIN_NWHY + w]) fprintf(f, " %s:%ld", why_names[w], b[c * DROPIN_NWHY + w]);
        fprintf(f, "\n");
    }
}

static FILE *open_out(const char *path, int rank)
{
    if (!path) return stderr;
    char name[4096];
    const char *r = strstr(path, "%r");
    if (r)
        snprintf(name, sizeof name, "%.*s%d%s", (int)(r - path), path, rank, r + 2);
    else
        snprintf(name, sizeof name, "%s", path);
    FILE *f = fopen(name, "w");
    if (!f) fprintf(stderr, "convoy: CONVOY_STATS=%s: cannot write %s\n", path, name);
    return f;
}

void dropin_stats_report(void)
{
    pthread_once(&once, read_settings);
    if (!stats_on) return;
    enum { NS = DROPIN_NCOLL * MAX_ALGOS, NB = DROPIN_NCOLL * DROPIN_NWHY };
    static long mine[NS + NB], sum[NS + NB];
    for (int c = 0; c < DROPIN_NCOLL; c++) {
        for (int i = 0; i < MAX_ALGOS; i++)
            mine[c * MAX_ALGOS + i] = atomic_load(&served[c][i]);
        for (int w = 0; w < DROPIN_NWHY; w++)
            mine[NS + c * DROPIN_NWHY + w] = atomic_load(&back[c][w]);
    }
    int rank = 0, size = 1;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    if (stats_path && strstr(stats_path, "%r")) {
        FILE *f = open_out(stats_path, rank);
        if (f) print(f, mine, mine + NS, 1), fclose(f);
        return;
    }
    PMPI_Reduce(mine, sum, NS + NB, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank != 0) return;
    FILE *f = open_out(stats_path, rank);
    if (!f) return;
    print(f, sum, sum + NS, size);
    if (f != stderr) fclose(f);
}

/* A program running the drop-in gets the MPI library's collective as a candidate in every
 * choice (CONVOY_NATIVE_CANDIDATE=0 turns it off), and by default the library's blocking
 * collective for every blocking call handed back, the library's nonblocking and persistent
 * collectives for those forms (CONVOY_NATIVE_BLOCKING=0: Convoy serves them, and handed-back
 * blocking calls become the library's nonblocking collective plus Convoy's wait; colls.c).
 * Read once, here, for the whole run: the wrappers and Convoy's own native choice
 * (convoy__native_blocking_fixed) must make the same kind of call. */
__attribute__((constructor)) static void dropin_loaded(void)
{
    convoy__native_candidate_default = 1;
    const char *v = getenv("CONVOY_NATIVE_BLOCKING");
    native_blocking = !v || !*v || strcmp(v, "0") != 0;
    convoy__native_blocking_fixed = native_blocking;
}

int MPI_Finalize(void)
{
    atomic_store(&finalizing, 1);
    atomic_store(&dropin_off_mask, ~0u);
    dropin_stats_report();
    return PMPI_Finalize();
}

long dropin_stats_get(int coll, const char *name)
{
    long n = 0;
    for (int i = 0; i < convoy__nalgos && i < MAX_ALGOS; i++)
        if (strcmp(name, "served") == 0 || strcmp(name, convoy__algos[i].name) == 0)
            n += atomic_load(&served[coll][i]);
    for (int w = 0; w < DROPIN_NWHY; w++)
        if (strcmp(name, "handed_back") == 0 || strcmp(name, why_names[w]) == 0)
            n += atomic_load(&back[coll][w]);
    return n;
}
