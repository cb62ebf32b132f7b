/* The platform layer (see platform.h): the native side and the SMPI side. */
#define _GNU_SOURCE /* nanosleep, sched_yield */
#include "platform/platform.h"

#include <regex.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef CONVOY_SIMGRID
#include <sys/mman.h>
#endif

#ifdef CONVOY_SIMGRID
#include <simgrid/host.h>
#include <simgrid/semaphore.h>
#include <smpi/smpi.h>
#endif

static uint64_t fnv1a(const char *s, size_t n, uint64_t h)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ULL;
    return h;
}

/* The name of this process's node: its host's (processor) name, or under SimGrid the part
 * CONVOY_NODE_OF_HOST's regex picks out of it (the first group if there is one, else the
 * whole match; a host it does not match is a node by itself). */
static void node_name(char name[MPI_MAX_PROCESSOR_NAME])
{
    int len = 0;
    PMPI_Get_processor_name(name, &len);
    name[len] = '\0';
#ifdef CONVOY_SIMGRID
    const char *rule = getenv("CONVOY_NODE_OF_HOST");
    if (!rule || !*rule) return;
    regex_t re;
    regmatch_t m[2];
    if (regcomp(&re, rule, REG_EXTENDED)) {
        fprintf(stderr,
                "convoy: CONVOY_NODE_OF_HOST='%s' is not an extended regular "
                "expression; one node per host\n",
                rule);
        return;
    }
    if (regexec(&re, name, 2, m, 0) == 0) {
        regmatch_t *g = re.re_nsub > 0 && m[1].rm_so >= 0 ? &m[1] : &m[0];
        memmove(name, name + g->rm_so, (size_t)(g->rm_eo - g->rm_so));
        name[g->rm_eo - g->rm_so] = '\0';
    }
    regfree(&re);
#endif
}

int64_t convoy__plat_node_key(void)
{
    char name[MPI_MAX_PROCESSOR_NAME];
    node_name(name);
    return (int64_t)(fnv1a(name, strlen(name), 0xcbf29ce484222325ULL) >> 1);
}

int convoy__plat_split_node(MPI_Comm comm, int key, MPI_Comm *node)
{
#ifdef CONVOY_SIMGRID
    const char *rule = getenv("CONVOY_NODE_OF_HOST");
    if (rule && *rule) {
        /* Split by a hash of the node name, then by a second, independent hash within
         * each part: two different names that collide in both are not a practical risk. */
        char name[MPI_MAX_PROCESSOR_NAME];
        node_name(name);
        const size_t n = strlen(name);
        int h1 = (int)(fnv1a(name, n, 0xcbf29ce484222325ULL) >> 33);
        int h2 = (int)(fnv1a(name, n, 0x84222325cbf29ce4ULL) >> 33), lo, hi;
        MPI_Comm part;
        int rc = PMPI_Comm_split(comm, h1, key, &part);
        if (rc) return rc;
        if (!(rc = PMPI_Allreduce(&h2, &lo, 1, MPI_INT, MPI_MIN, part)) &&
            !(rc = PMPI_Allreduce(&h2, &hi, 1, MPI_INT, MPI_MAX, part))) {
            if (lo == hi) return *node = part, MPI_SUCCESS;
            rc = PMPI_Comm_split(part, h2, key, node);
        }
        PMPI_Comm_free(&part);
        return rc;
    }
#endif
    return PMPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, key, MPI_INFO_NULL, node);
}

int convoy__plat_shared_base(MPI_Win win, int q, MPI_Aint share, void *base)
{
    MPI_Aint qsize;
    int qdisp;
#ifdef CONVOY_SIMGRID
    /* SMPI 3.32 answers every query with process 0's base; the window is contiguous with
     * equal shares, so process q's share starts q shares further. */
    int rc = PMPI_Win_shared_query(win, 0, &qsize, &qdisp, base);
    if (!rc) *(char **)base += (MPI_Aint)q * share;
    return rc;
#else
    (void)share;
    return PMPI_Win_shared_query(win, q, &qsize, &qdisp, base);
#endif
}

void convoy__plat_call_errhandler(MPI_Comm comm, int err)
{
#ifdef CONVOY_SIMGRID
    /* SMPI's predefined handlers have no function (its own calls test for them before
     * calling): returning is MPI_ERRORS_RETURN, the message and abort MPI_ERRORS_ARE_FATAL. */
    MPI_Errhandler eh = MPI_ERRHANDLER_NULL;
    if (PMPI_Comm_get_errhandler(comm, &eh) != MPI_SUCCESS) return;
    const int predefined = eh == MPI_ERRORS_RETURN || eh == MPI_ERRORS_ARE_FATAL;
    if (eh == MPI_ERRORS_ARE_FATAL) {
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        if (PMPI_Error_string(err, msg, &len) != MPI_SUCCESS) len = 0;
        msg[len] = '\0';
        fprintf(stderr, "convoy: %s; MPI_ERRORS_ARE_FATAL: aborting\n", msg);
        PMPI_Abort(comm, err);
    }
    PMPI_Errhandler_free(&eh);
    if (predefined) return;
#endif
    PMPI_Comm_call_errhandler(comm, err);
}

int convoy__plat_private_comm(MPI_Comm comm, MPI_Comm *priv, int *shared)
{
    *shared = 0;
#ifdef CONVOY_SIMGRID
    /* SMPI 3.32 gives every new communicator an id by a broadcast on it; under the ompi
     * selector that broadcast (mvapich2_knomial_intra_node from 64 processes on) first
     * runs Comm::init_smp, a ring allgather over the whole communicator: p - 1 rounds of p
     * messages, 16.7 million at 4096 processes, only to learn the node layout. */
    const char *share = getenv("CONVOY_SIM_SHARE_COMM");
    if (share && !strcmp(share, "1")) {
        *priv = comm;
        *shared = 1;
        return MPI_SUCCESS;
    }
#endif
    return PMPI_Comm_dup(comm, priv);
}

int convoy__plat_nonblocking_setup(void)
{
#ifdef CONVOY_SIMGRID
    return 0; /* SMPI 3.32: "Not yet implemented: PMPI_Comm_idup" */
#else
    /* MPI_Comm_idup allocates a context id nonblockingly, which both Open MPI 4.1 and
     * MPICH get wrong when threads do it at the same time (even on different
     * communicators): under MPI_THREAD_MULTIPLE, leave the setup to a blocking call. */
    int level;
    return PMPI_Query_thread(&level) == MPI_SUCCESS && level != MPI_THREAD_MULTIPLE;
#endif
}

#ifdef CONVOY_SIMGRID
/* One wake-up object per simulated host, made by its first user and kept in the host's
 * user data (shared by all ranks: SMPI privatises only the program's globals). A
 * notification counts in gen and releases the semaphore once per waiter. A waiter that
 * sees gen moved since its last wait returns at once (a notification may have come after
 * its caller tested the flags), so none is lost; otherwise it sleeps until released or
 * for a timeout. A semaphore, not a condition: SimGrid 3.32's sg_cond_wait_for fails on
 * its timeout ("Cannot release that mutex: you're not the owner"). A release nobody takes
 * only makes a later wait return early, which the caller's loop absorbs. */
typedef struct {
    sg_sem_t sem;
    int waiters;
    unsigned long gen;
} host_wake;

static unsigned long seen_gen; /* per rank: gen at the end of this rank's last wait */

static host_wake *host_wake_of_self(void)
{
    sg_host_t h = sg_host_self();
    host_wake *w = sg_host_get_data(h);
    if (!w && (w = calloc(1, sizeof *w))) { /* never freed: lives as long as the host */
        w->sem = sg_sem_init(0);
        sg_host_set_data(h, w);
    }
    return w;
}

static double env_double(const char *name, double def)
{
    const char *v = getenv(name);
    char *end;
    double d = v && *v ? strtod(v, &end) : def;
    return v && *v && *end == '\0' && d > 0 ? d : def;
}

/* Sleeps until the host's next notification, or timeout seconds. */
static void sleep_for_notification(double timeout)
{
    host_wake *w = host_wake_of_self();
    if (!w) {
        struct timespec ts = {0, 100};
        nanosleep(&ts, NULL);
        return;
    }
    if (w->gen == seen_gen) {
        w->waiters++;
        sg_sem_acquire_timeout(w->sem, timeout);
        w->waiters--;
    }
    seen_gen = w->gen;
}

void convoy__plat_wait(unsigned *iter)
{
    /* The wait may also end with a message, which no notification signals: poll every
     * CONVOY_SIM_POLL seconds (default 100 ns of simulated time). */
    static double poll = -1;
    if (poll < 0) poll = env_double("CONVOY_SIM_POLL", 1e-7);
    (*iter)++;
    sleep_for_notification(poll);
}

int convoy__plat_wait_notified(void)
{
    /* A flag set by a process on another host of the node (CONVOY_NODE_OF_HOST) wakes
     * nobody here: then poll. Otherwise the timeout is only a guard. */
    const char *rule = getenv("CONVOY_NODE_OF_HOST");
    if (rule && *rule) return 0;
    sleep_for_notification(1e-3);
    return 1;
}

void convoy__plat_notified(void)
{
    host_wake *w = host_wake_of_self();
    if (!w) return;
    w->gen++;
    for (int k = w->waiters; k > 0; k--)
        sg_sem_release(w->sem);
}

static void charge(double bytes, const char *name, double def, double *rate)
{
    if (*rate <= 0) *rate = env_double(name, def);
    if (bytes > 0) smpi_execute_benched(bytes / *rate);
}

void convoy__plat_charge_copy(int64_t bytes)
{
    static double bw; /* per rank: SMPI privatises globals */
    charge((double)bytes, "CONVOY_SIM_COPY_BW", 5e9, &bw);
}

void convoy__plat_charge_reduce(int64_t count, MPI_Datatype type)
{
    static double bw;
    int size = 0;
    PMPI_Type_size(type, &size);
    charge((double)count * size, "CONVOY_SIM_REDUCE_BW", 2.5e9, &bw);
}
#else
void convoy__plat_notified(void) {}
#endif

void *convoy__plat_probe_alloc(size_t bytes)
{
#ifdef CONVOY_SIMGRID
    return calloc(1, bytes);
#else
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return p == MAP_FAILED ? NULL : p;
#endif
}

void convoy__plat_probe_free(void *p, size_t bytes)
{
    if (!p) return;
#ifdef CONVOY_SIMGRID
    (void)bytes;
    free(p);
#else
    munmap(p, bytes);
#endif
}
