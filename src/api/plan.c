/*
 * Planning one call: the algorithm (forced by CONVOY_<COLL>_ALGO, or the cheapest
 * applicable one under the cost model), its parameters, and its schedule from the cache.
 * No applicable algorithm means the MPI library's own collective serves the call.
 */
#include "api/internal.h"

#include <ctype.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static atomic_int warned_forced;

void convoy__algo_var(int coll, char env[64])
{
    const char *name = convoy__coll_name(coll);
    int n = snprintf(env, 64, "CONVOY_");
    for (; *name && n < 40; name++)
        env[n++] = (char)toupper((unsigned char)*name);
    snprintf(env + n, 64 - (size_t)n, "_ALGO");
}

int convoy__plan(convoy_request r, convoy__args *a)
{
    char env[64];
    const char *coll = convoy__coll_name(a->coll);
    const char *forced = r->cfg.algo[a->coll];
    convoy__machine m;
    convoy__machine_of_call(&r->cfg, r->cs, &m);
    a->machine = m;
    /* A deferred request has no segment: it may plan after a blocking call made one, and
     * segment operations must be numbered in call order. Set before the choice, so that
     * the applicability predicates and cost models of segment algorithms see it. */
    a->shm_bytes = r->cs->shm && !r->deferred ? r->cs->shm->bytes : 0;
    const convoy__algo *al = convoy__select(a, &m, forced, r->cfg.reproducible);
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
    r->algo = al;
    pthread_mutex_lock(&r->cs->lock);
    r->cs->last_algo = al ? al->name : "native";
    pthread_mutex_unlock(&r->cs->lock);
    if (r->cfg.verbose && a->topo->rank == 0) {
        fprintf(stderr,
                "convoy: MPI_%s on %d processes, %d nodes (alpha %.2f us, beta %.3f ns/B, "
                "gamma %.3f ns/B: %s): %s",
                r->what, a->topo->size, a->topo->nnodes, 1e6 * m.alpha, 1e9 * m.beta, 1e9 * m.gamma,
                r->cfg.reproducible  ? "built-in, reproducible"
                : r->cs->machine_how ? r->cs->machine_how
                                     : "built-in",
                al ? al->name : "native");
        for (int i = 0; i < convoy__nalgos; i++) {
            const convoy__algo *c = &convoy__algos[i];
            if (convoy__algo_serves(c, a->coll) && c->cost && (!c->applicable || c->applicable(a)))
                fprintf(stderr, " [%s %.1f us]", c->name, 1e6 * c->cost(a, &m));
        }
        fprintf(stderr, "\n");
    }
    if (!al) return MPI_SUCCESS;
    convoy__params_from_env(&r->cfg, al, a);
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
