/*
 * The CONVOY_* environment, read in one pass over environ (a getenv per setting cost more
 * than the whole schedule of a small Allreduce) and kept for the process: a call costs a
 * check that the environment did not change (below), not a pass over it. Read again when
 * the check sees a change (setenv/unsetenv/putenv of a new string), on
 * convoy_config_refresh(), and on every call under CONVOY_CONFIG_REFRESH=1.
 */
#include "api/internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

int convoy__native_candidate_default;
int convoy__native_blocking_fixed = -1;

static double number(const char *v, double def)
{
    char *end;
    double d = strtod(v, &end);
    return *v && *end == '\0' && d >= 0 ? d : def;
}

void convoy__config_read(convoy__config *c)
{
    memset(c, 0, sizeof *c);
    c->alpha = c->beta = c->gamma = -1;
    c->native_candidate = convoy__native_candidate_default;
    c->native_blocking = convoy__native_blocking_fixed > 0;
    c->kernel = 1;
#ifdef CONVOY_SIMGRID
    c->trial = 0; /* a simulated cluster shows the model's choices (trial.c) */
#else
    c->trial = 1;
#endif
    c->trial_within = 3;
    c->trial_min = 1e-3;
    c->trial_bytes = 1 << 20;
    for (char **e = environ; e && *e; e++) {
        const char *s = *e;
        if (strncmp(s, "CONVOY_", 7) != 0) continue;
        const char *eq = strchr(s, '=');
        if (!eq) continue;
        const char *name = s + 7, *v = eq + 1;
        size_t n = (size_t)(eq - name);
#define IS(lit) (n == sizeof lit - 1 && memcmp(name, lit, n) == 0)
        if (IS("VERBOSE"))
            c->verbose = *v && strcmp(v, "0") != 0;
        else if (IS("CHECK_ARGS"))
            c->check_args = *v && strcmp(v, "0") != 0;
        else if (IS("ALGO_STRICT"))
            c->strict = *v && strcmp(v, "0") != 0;
        else if (IS("REPRODUCIBLE"))
            c->reproducible = *v && strcmp(v, "0") != 0;
        else if (IS("WATCHDOG"))
            c->watchdog = number(v, 0);
        else if (IS("ALPHA"))
            c->alpha = number(v, -1);
        else if (IS("BETA"))
            c->beta = number(v, -1);
        else if (IS("GAMMA"))
            c->gamma = number(v, -1);
        else if (IS("NATIVE_CANDIDATE"))
            c->native_candidate = *v && strcmp(v, "0") != 0;
        else if (IS("NATIVE_BLOCKING") && convoy__native_blocking_fixed < 0)
            c->native_blocking = *v && strcmp(v, "0") != 0;
        else if (IS("KERNEL"))
            c->kernel = strcmp(v, "0") != 0;
        else if (IS("TRIAL"))
            c->trial = strcmp(v, "0") != 0;
        else if (IS("TRIAL_WITHIN")) {
            c->trial_within = number(v, 3);
            if (c->trial_within < 1) c->trial_within = 1;
        } else if (IS("TRIAL_MIN"))
            c->trial_min = number(v, 1e-3);
        else if (IS("TRIAL_BYTES"))
            c->trial_bytes = number(v, 1 << 20);
        else if (IS("TUNING_FILE"))
            c->tuning_file = *v ? v : NULL;
        else if (n > 5 && memcmp(name + n - 5, "_ALGO", 5) == 0) {
            for (int k = 0; k < CONVOY_NCOLL; k++) {
                const char *coll = convoy__coll_name(k);
                size_t m = strlen(coll);
                int same = m == n - 5;
                /* Upper case letters; '_' (reduce_scatter) stays as it is. */
                for (size_t i = 0; same && i < m; i++)
                    same = name[i] ==
                           (coll[i] >= 'a' && coll[i] <= 'z' ? coll[i] - 'a' + 'A' : coll[i]);
                if (same) c->algo[k] = *v && strcmp(v, "auto") != 0 ? v : NULL;
            }
        }
#undef IS
        if (c->nvars < CONVOY_CONFIG_VARS) c->vars[c->nvars++] = s;
    }
}

/* The process's settings and what the environment looked like when they were read: the
 * array, its length, and the pointer of every CONVOY_ entry. setenv and unsetenv replace
 * an entry's pointer or change the length (glibc never edits a string in place), so equal
 * snapshots mean equal settings; a program that writes into a putenv'd string must call
 * convoy_config_refresh(). */
static pthread_mutex_t cfg_lock = PTHREAD_MUTEX_INITIALIZER;
static convoy__config cfg;
static char **snap_env;
static long snap_len;
static int snap_idx[CONVOY_CONFIG_VARS];
static atomic_int cfg_valid, cfg_always;
static uint64_t cfg_gen;

static int snapshot_same(void)
{
    char **e = environ;
    if (e != snap_env || !e) return e == snap_env;
    if (snap_len > 0 && (e[snap_len - 1] == NULL || e[snap_len] != NULL)) return 0;
    if (snap_len == 0 && e[0] != NULL) return 0;
    for (int i = 0; i < cfg.nvars; i++)
        if (e[snap_idx[i]] != cfg.vars[i]) return 0;
    return 1;
}

static void reread(void)
{
    convoy__config_read(&cfg);
    cfg.gen = ++cfg_gen;
    snap_env = environ;
    snap_len = 0;
    int k = 0;
    for (char **e = environ; e && *e; e++, snap_len++)
        if (k < cfg.nvars && *e == cfg.vars[k]) snap_idx[k++] = (int)snap_len;
    const char *v = convoy__config_get(&cfg, "CONVOY_CONFIG_REFRESH");
    atomic_store(&cfg_always, v && *v && strcmp(v, "0") != 0);
    atomic_store(&cfg_valid, 1);
}

/* Odd while the settings are being read again: a reader that saw the same even value
 * before and after its copy has a consistent one (a sequence lock, so that the common case
 * takes no lock). */
static atomic_uint cfg_seq;

static void config_current(convoy__config *c);

void convoy__config_current(convoy__config *c)
{
    config_current(c);
    /* The machine measurement's own calls (the per-call overhead on a one-process
     * communicator) time Convoy's default path: no CONVOY_VERBOSE lines, and no forced
     * algorithm, which might not apply there (CONVOY_ALGO_STRICT would fail the probe).
     * Applied to the copy, so the process's settings stay as read and the probe's calls
     * keep the plan memo whenever the settings were read. */
    if (convoy__machine_measuring()) {
        c->verbose = c->strict = 0;
        for (int k = 0; k < CONVOY_NCOLL; k++)
            c->algo[k] = NULL;
    }
}

static void config_current(convoy__config *c)
{
    unsigned s1 = atomic_load_explicit(&cfg_seq, memory_order_acquire);
    if (!(s1 & 1) && atomic_load(&cfg_valid) && !atomic_load(&cfg_always)) {
        memcpy(c, &cfg, sizeof *c);
        int same = snapshot_same();
        atomic_thread_fence(memory_order_acquire);
        if (same && atomic_load_explicit(&cfg_seq, memory_order_relaxed) == s1) return;
    }
    pthread_mutex_lock(&cfg_lock);
    if (!atomic_load(&cfg_valid) || atomic_load(&cfg_always) || !snapshot_same()) {
        atomic_fetch_add_explicit(&cfg_seq, 1, memory_order_acq_rel);
        reread();
        atomic_fetch_add_explicit(&cfg_seq, 1, memory_order_release);
    }
    *c = cfg;
    pthread_mutex_unlock(&cfg_lock);
}

uint64_t convoy__config_gen(void)
{
    unsigned s1 = atomic_load_explicit(&cfg_seq, memory_order_acquire);
    if ((s1 & 1) || !atomic_load(&cfg_valid) || atomic_load(&cfg_always)) return 0;
    const uint64_t gen = cfg.gen;
    const int same = snapshot_same();
    atomic_thread_fence(memory_order_acquire);
    return same && atomic_load_explicit(&cfg_seq, memory_order_relaxed) == s1 ? gen : 0;
}

int convoy_config_refresh(void)
{
    atomic_store(&cfg_valid, 0);
    return MPI_SUCCESS;
}

const char *convoy__config_get(const convoy__config *c, const char *name)
{
    size_t n = strlen(name);
    for (int i = 0; i < c->nvars; i++)
        if (strncmp(c->vars[i], name, n) == 0 && c->vars[i][n] == '=') return c->vars[i] + n + 1;
    return NULL;
}
