/*
 * The CONVOY_* environment, read once per call in one pass over environ (a getenv per
 * setting cost more than the whole schedule of a small Allreduce). Read per call, not per
 * process, so that a tool may change a setting between calls.
 */
#include "api/internal.h"

#include <stdlib.h>
#include <string.h>

extern char **environ;

int convoy__native_candidate_default;

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
    if (c->verbose && convoy__machine_measuring()) c->verbose = 0;
}

const char *convoy__config_get(const convoy__config *c, const char *name)
{
    size_t n = strlen(name);
    for (int i = 0; i < c->nvars; i++)
        if (strncmp(c->vars[i], name, n) == 0 && c->vars[i][n] == '=') return c->vars[i] + n + 1;
    return NULL;
}
