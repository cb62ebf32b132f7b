/*
 * Planning one call: the algorithm (forced by CONVOY_<COLL>_ALGO, or the cheapest
 * applicable one under the cost model), its parameters, and its schedule from the cache.
 * No applicable algorithm means the MPI library's own collective serves the call.
 */
#include "api/internal.h"
#include "select/tuning.h"

#include <ctype.h>
#include <stddef.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_int warned_forced;

/* CONVOY_TUNING_FILE's rules, loaded when the setting first names a file (again when it
 * names another). An invalid file is reported once, by the first call's rank 0, and
 * ignored whole: the cost model chooses. */
static pthread_mutex_t tuning_lock = PTHREAD_MUTEX_INITIALIZER;
static char *tuning_path;
static convoy__tuning tuning;
static int tuning_err_pending;
static char tuning_err[512];

static int tuning_rule(const convoy__config *c, const convoy__args *a, convoy__tuning_rule *out)
{
    if (!c->tuning_file) return 0;
    pthread_mutex_lock(&tuning_lock);
    if (!tuning_path || strcmp(tuning_path, c->tuning_file) != 0) {
        convoy__tuning_free(&tuning);
        free(tuning_path);
        size_t n = strlen(c->tuning_file) + 1;
        if ((tuning_path = malloc(n))) memcpy(tuning_path, c->tuning_file, n);
        tuning_err_pending =
            convoy__tuning_load(c->tuning_file, &tuning, tuning_err, sizeof tuning_err) != 0;
    }
    if (tuning_err_pending && a->topo->rank == 0) {
        tuning_err_pending = 0;
        fprintf(stderr,
                "convoy: CONVOY_TUNING_FILE=%s: %s; ignoring the file (the cost model "
                "chooses)\n",
                c->tuning_file, tuning_err);
    }
    const convoy__tuning_rule *r = convoy__tuning_find(&tuning, a);
    if (r) *out = *r;
    pthread_mutex_unlock(&tuning_lock);
    return r != NULL;
}

/* The rule's parameters, where the environment sets none. */
static void tuning_params(const convoy__tuning_rule *rule, convoy__args *a)
{
    for (int i = 0; i < rule->nparams && a->nparams < CONVOY_MAX_PARAMS; i++) {
        int set = 0;
        for (int j = 0; j < a->nparams; j++)
            set |= strcmp(a->params[j].name, rule->params[i].name) == 0;
        if (!set) a->params[a->nparams++] = rule->params[i];
    }
}

void convoy__algo_var(int coll, char env[64])
{
    const char *name = convoy__coll_name(coll);
    int n = snprintf(env, 64, "CONVOY_");
    for (; *name && n < 40; name++)
        env[n++] = (char)toupper((unsigned char)*name);
    snprintf(env + n, 64 - (size_t)n, "_ALGO");
}

/* --- the memo of the last call ------------------------------------------------------ */

/* The arguments as the memo keeps them: the pointers (topology, count vectors) cleared, so
 * that a byte comparison compares values; the vectors are compared by content. Padding
 * bytes the caller left undefined can only make a comparison fail, never succeed falsely:
 * the keyed cache then serves the call. */
/* Everything but the parameters is compared (the collectives pass none: they are read
 * after the choice): the part before them and whatever fields follow them. */
#define MEMO_BYTES offsetof(convoy__args, nparams)
#define MEMO_TAIL (offsetof(convoy__args, params) + sizeof(((convoy__args *)0)->params))

static void memo_form(const convoy__args *a, convoy__args *out)
{
    memcpy(out, a, MEMO_BYTES);
    memcpy((char *)out + MEMO_TAIL, (const char *)a + MEMO_TAIL, sizeof *a - MEMO_TAIL);
    out->topo = NULL;
    out->rcounts = out->displs = NULL;
}

static int memo_same(const convoy__args *x, const convoy__args *y)
{
    return memcmp(x, y, MEMO_BYTES) == 0 &&
           memcmp((const char *)x + MEMO_TAIL, (const char *)y + MEMO_TAIL,
                  sizeof *x - MEMO_TAIL) == 0;
}

static void memo_key(const convoy_request r, const convoy__args *a, int key[6])
{
    key[0] = r->may_block;
    key[1] = r->cs->barrier_n;
    key[2] = r->tune != NULL;
    key[3] = a->rcounts != NULL;
    key[4] = a->displs != NULL;
    key[5] = r->trial_cls;
}

/* The set of a call: its main scalar fields and first counts, hashed; a call is kept in
 * one of its set's CONVOY_MEMO_WAYS slots (each with the hash, compared first). A collision
 * costs a miss, never a wrong hit (memo_hit compares every field). */
static uint64_t memo_hash(const convoy__args *a)
{
    const int64_t v[] = {a->count,
                         a->root,
                         a->stype.size,
                         a->stype.extent,
                         a->rtype.size,
                         a->rtype.extent,
                         a->inplace,
                         a->rcounts ? a->rcounts[0] : -1,
                         a->rcounts && a->topo->size > 1 ? a->rcounts[1] : -1};
    uint64_t h = 0;
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        h = (h ^ (uint64_t)v[i]) * 0x9e3779b97f4a7c15ull;
        h ^= h >> 29;
    }
    return h | 1; /* 0: an empty slot */
}

static convoy__memo *memo_set(convoy__cstate *cs, const convoy__args *a, uint64_t h, int make)
{
    if (!cs->memo[a->coll]) {
        if (!make) return NULL;
        cs->memo[a->coll] = calloc(CONVOY_MEMO_SLOTS, sizeof *cs->memo[a->coll]);
        if (!cs->memo[a->coll]) return NULL;
    }
    return &cs->memo[a->coll]
                    [(h >> 32) % (CONVOY_MEMO_SLOTS / CONVOY_MEMO_WAYS) * CONVOY_MEMO_WAYS];
}

static int memo_vec_same(const convoy__memo *mo, const convoy__args *a)
{
    const int64_t n = a->topo->size;
    if ((mo->args.count != a->count)) return 0; /* (cheap test first) */
    if (a->rcounts && memcmp(mo->vec, a->rcounts, (size_t)n * sizeof *mo->vec) != 0) return 0;
    if (a->displs && memcmp(mo->vec + n, a->displs, (size_t)n * sizeof *mo->vec) != 0) return 0;
    return 1;
}

/* A hit: the same collective with the same arguments, settings and tuning state as the
 * communicator's planned calls of it kept in the call's set. Not for deferred requests (they plan
 * inside progress, possibly on another thread) or verbose runs (which print every choice). Every
 * collective's arguments hold no pointers but rcounts and displs (compared by content):
 * a field added behind another pointer (whose address may repeat while the content
 * changes) must be compared like them. */
static int memo_hit(convoy_request r, convoy__args *a)
{
    if (r->deferred || r->cfg.verbose || a->nparams != 0) return 0;
    const uint64_t h = memo_hash(a);
    const convoy__memo *set = memo_set(r->cs, a, h, 0), *mo = NULL;
    for (int w = 0; set && w < CONVOY_MEMO_WAYS && !mo; w++)
        if (set[w].valid && set[w].hash == h) mo = &set[w];
    if (!mo || mo->gen != r->cfg.gen) return 0;
    int key[6];
    memo_key(r, a, key);
    if (memcmp(key, mo->key, sizeof key) != 0 || !memo_vec_same(mo, a)) return 0;
    convoy__args f;
    memo_form(a, &f);
    if (!memo_same(&f, &mo->args)) return 0;
    a->nparams = mo->nparams;
    memcpy(a->params, mo->params, sizeof a->params);
    /* The memo holds a reference: the entry cannot be evicted, so no lock is needed. */
    if (mo->entry) atomic_fetch_add(&mo->entry->refs, 1);
    convoy__cstate_note_algo(r->cs, mo->algo ? mo->algo->name : convoy__native_name);
    r->algo = mo->algo;
    r->native_why = mo->native_why;
    r->entry = mo->entry;
    return 1;
}

/* Remembers a planned call (pre: its arguments before planning, a: after). */
static void memo_keep(convoy_request r, const convoy__args *pre, const convoy__args *a)
{
    if (r->deferred) return;
    const uint64_t h = memo_hash(a);
    convoy__memo *set = memo_set(r->cs, a, h, 1), *mo = NULL;
    if (!set) return;
    /* The slot with this hash (a call that missed on another field), else an empty one,
     * else the set's next victim in turn (set[0].victim). */
    for (int w = 0; w < CONVOY_MEMO_WAYS && !mo; w++)
        if (set[w].hash == h) mo = &set[w];
    for (int w = 0; w < CONVOY_MEMO_WAYS && !mo; w++)
        if (!set[w].valid) mo = &set[w];
    if (!mo) mo = &set[set[0].victim++ % CONVOY_MEMO_WAYS];
    const int64_t n = a->topo->size, need = (a->rcounts || a->displs) ? 2 * n : 0;
    if (need > mo->veccap) {
        int64_t *v = realloc(mo->vec, (size_t)need * sizeof *v);
        if (!v) return;
        mo->vec = v;
        mo->veccap = need;
    }
    convoy__sched_release(r->cs, mo->entry);
    mo->entry = NULL;
    mo->valid = 0;
    if (r->algo && !r->entry) return;
    if (a->rcounts) memcpy(mo->vec, a->rcounts, (size_t)n * sizeof *mo->vec);
    if (a->displs) memcpy(mo->vec + n, a->displs, (size_t)n * sizeof *mo->vec);
    memo_form(pre, &mo->args);
    memo_key(r, a, mo->key);
    mo->hash = h;
    mo->gen = r->cfg.gen;
    mo->algo = r->algo;
    mo->native_why = r->native_why;
    mo->nparams = a->nparams;
    memcpy(mo->params, a->params, sizeof mo->params);
    if (r->entry) atomic_fetch_add(&r->entry->refs, 1);
    mo->entry = r->entry;
    mo->valid = 1;
}

static int plan_full(convoy_request r, convoy__args *a);

int convoy__plan(convoy_request r, convoy__args *a)
{
    convoy__machine_of_call(&r->cfg, r->cs, &a->machine);
    /* A deferred request has no segment: it may plan after a blocking call made one, and
     * segment operations must be numbered in call order. Set before the choice, so that
     * the applicability predicates and cost models of segment algorithms see it. */
    a->shm_bytes = r->cs->shm && !r->deferred ? r->cs->shm->bytes : 0;
    a->cma = a->shm_bytes > 0 && r->cs->cma;
    int rc = convoy__trial_state(r, a);
    if (rc) return rc;
    if (memo_hit(r, a)) return MPI_SUCCESS;
    convoy__args pre;
    memo_form(a, &pre);
    pre.nparams = a->nparams;
    rc = plan_full(r, a);
    if (!rc && !r->cfg.verbose && pre.nparams == 0) memo_keep(r, &pre, a);
    return rc;
}

static int plan_full(convoy_request r, convoy__args *a)
{
    char env[64];
    const char *coll = convoy__coll_name(a->coll);
    const char *forced = r->cfg.algo[a->coll];
    /* The machine at this call's size (convoy__machine_sized), here and not before the memo:
     * a memo hit needs no sum over the counts, and it compares the unsized machine, which
     * with the same counts gives the same one. */
    const convoy__machine unsized = a->machine;
    a->machine = convoy__machine_sized(&unsized, (double)convoy__args_bytes(a) / a->topo->size);
    const convoy__machine m = a->machine;
    /* A tuning rule (unless forced or reproducible); else the model. A rule's algorithm that
     * does not apply to this call leaves the choice to the model. */
    convoy__tuning_rule rule;
    const int ruled = !forced && !r->cfg.reproducible && tuning_rule(&r->cfg, a, &rule);
    const convoy__algo *al = NULL;
    if (ruled && rule.algo) al = convoy__select(a, &m, rule.algo->name, 0);
    if (ruled && !rule.algo) r->native_why = "tuning";
    if (!ruled || (rule.algo && !al)) al = convoy__select(a, &m, forced, r->cfg.reproducible);
    if (!al && forced && r->cfg.strict && strcmp(forced, "native") != 0) {
        if (a->topo->rank == 0 && r->cfg.verbose)
            fprintf(stderr, "convoy: %s algorithm %s does not apply to this call\n", coll, forced);
        return MPI_ERR_ARG;
    }
    if (!al && forced) {
        convoy__algo_var(a->coll, env);
        if (strcmp(forced, "native") != 0 && a->topo->rank == 0 &&
            atomic_exchange(&warned_forced, 1) == 0)
            fprintf(stderr,
                    "convoy: %s=%s names no %s algorithm that applies to this call "
                    "(convoy-check --list shows them); using the default choice\n",
                    env, forced, coll);
        al =
            strcmp(forced, "native") == 0 ? NULL : convoy__select(a, &m, NULL, r->cfg.reproducible);
    }
    /* A call the trial (trial.c) serves: the side it timed fastest, or the side of this
     * timed call, the library's collective or one of Convoy's candidates (taken as a forced
     * algorithm would be; where it does not apply to this form of the kind's call, the
     * model's choice). Else, where native is a candidate (not forced, not reproducible: the
     * MPI library promises no bitwise agreement), it is kept where the best baseline,
     * without Convoy's overhead, is predicted faster than Convoy's choice with it. */
    double tn = -1;
    const int cls = r->trial_cls;
    const convoy__algo *side = r->trial_algo ? convoy__select(a, &m, r->trial_algo->name, 0) : NULL;
    if (al && cls != CONVOY_TRIAL_MODEL && !r->trial_algo) {
        al = NULL;
        r->native_why = "trial";
    } else if (al && side) {
        al = side;
    } else if (al && cls == CONVOY_TRIAL_MODEL && !ruled && !forced && !r->cfg.reproducible &&
               r->cfg.native_candidate && convoy__native_preferred(al, a, &m, &tn)) {
        al = NULL;
        r->native_why = "model";
    }
    if (!al && !r->native_why) r->native_why = forced ? "forced" : "no_algorithm";
    r->algo = al;
    convoy__cstate_note_algo(r->cs, al ? al->name : convoy__native_name);
    if (r->cfg.verbose && a->topo->rank == 0) {
        /* The lane levels as the cost models use them (unmeasured: the flat values). */
        const convoy__machine lv = convoy__machine_levels(&m);
        fprintf(stderr,
                "convoy: MPI_%s on %d processes, %d nodes (alpha %.2f us, "
                "beta %.3f ns/B (%.3f middle, %.3f large), gamma %.3f ns/B, overhead %.2f us, "
                "native alpha %.2f us, flag %.2f us, cma read %.3f ns/B, "
                "%.2f processes per CPU; node alpha %.2f us, beta %.3f ns/B; "
                "all lanes %.3f ns/B; gap %.2f us + %.3f ns/B, node %.2f us + %.3f ns/B, "
                "node exchange %.2f us + %.3f ns/B: %s): %s",
                r->what, a->topo->size, a->topo->nnodes, 1e6 * m.alpha, 1e9 * m.beta,
                1e9 * unsized.beta, 1e9 * unsized.beta_large, 1e9 * m.gamma, 1e6 * m.overhead,
                1e6 * (m.alpha_native > 0 ? m.alpha_native : m.alpha), 1e6 * convoy__flag_cost(&m),
                1e9 * m.cma, m.share, 1e6 * lv.alpha_node, 1e9 * lv.beta_node, 1e9 * lv.beta_nic,
                1e6 * lv.gap, 1e9 * lv.gap_b, 1e6 * lv.gap_node, 1e9 * lv.gap_node_b,
                1e6 * lv.xgap_node, 1e9 * lv.xgap_node_b,
                r->cfg.reproducible  ? "built-in, reproducible"
                : r->cs->machine_how ? r->cs->machine_how
                                     : "built-in",
                al ? al->name : "native");
        if (ruled) fprintf(stderr, " (CONVOY_TUNING_FILE rule)");
        for (int i = 0; i < convoy__nalgos; i++) {
            const convoy__algo *c = &convoy__algos[i];
            if (convoy__algo_serves(c, a->coll) && c->cost && (!c->applicable || c->applicable(a)))
                fprintf(stderr, " [%s %.1f us]", c->name, 1e6 * convoy__algo_time(c, a, &m));
        }
        if (tn >= 0) fprintf(stderr, " [native %.1f us]", 1e6 * tn);
        fprintf(stderr, "\n");
    }
    if (!al) return MPI_SUCCESS;
    convoy__params_from_env(&r->cfg, al, a);
    if (ruled && rule.algo == al) tuning_params(&rule, a);
    if (r->tune) {
        int rc = r->tune(r, al, a);
        if (rc) return rc;
    }
    if (r->cfg.verbose && a->topo->rank == 0 && al->explain) {
        char line[512];
        al->explain(a, line, sizeof line);
        fprintf(stderr, "convoy: %s: %s\n", al->name, line);
    }
    return convoy__sched_get(r->cs, al, a, &r->entry);
}
