/*
 * Count distributions (see dist.h). Kept free of MPI and of any global state so that the
 * benchmark and the checker generate exactly the same counts for the same name and seed.
 */
#include "check/dist.h"
#include "util/splitmix.h"

#include <math.h>
#include <string.h>

enum { ERR_ARG = -3 }; /* CONVOY_ERR_ARG, without pulling in the scheduler's header */

static const char *const names[] = {"regular",   "broadcast", "spike", "halffull", "decreasing",
                                    "geometric", "random",    "zeros", "single"};
enum { NNAMES = (int)(sizeof names / sizeof names[0]) };

int convoy__dist_count(void)
{
    return NNAMES;
}

const char *convoy__dist_name(int i)
{
    return i >= 0 && i < NNAMES ? names[i] : NULL;
}

static void geometric(int p, int64_t c, int64_t *m)
{
    int k = 0;
    while ((1 << k) < p && k < 30)
        k++;
    int pow2 = (1 << k) == p;
    double lg = log2((double)p);
    for (int64_t i = 1; i - 1 < p; i *= 2) {
        /* For a power of two the paper's quotient is exact in integers; otherwise log2 p
         * is irrational and the real quotient is rounded down. */
        int64_t v = pow2 ? (c * p) / (i * k) : (int64_t)floor((double)c * p / ((double)i * lg));
        for (int64_t j = i - 1; j <= 2 * i - 2 && j < p; j++)
            m[j] = v;
    }
}

int convoy__dist_counts(const char *name, int p, int64_t c, uint64_t seed, int64_t *m)
{
    if (!name || p < 1 || c < 0) return ERR_ARG;
    int d = 0;
    while (d < NNAMES && strcmp(names[d], name) != 0)
        d++;
    if (d == NNAMES) return ERR_ARG;
    for (int i = 0; i < p; i++)
        m[i] = 0;
    const char *n = names[d];
    if (p == 1 && strcmp(n, "zeros") != 0 && strcmp(n, "random") != 0) {
        m[0] = c; /* the paper's convention: one process contributes the base count */
        return 0;
    }
    uint64_t s = seed;
    if (strcmp(n, "regular") == 0) {
        for (int i = 0; i < p; i++)
            m[i] = c;
    } else if (strcmp(n, "broadcast") == 0) {
        m[0] = c;
    } else if (strcmp(n, "spike") == 0) {
        m[0] = c / 2;
        for (int i = 1; i < p; i++)
            m[i] = c / (2 * (int64_t)(p - 1));
    } else if (strcmp(n, "halffull") == 0) {
        for (int i = 0; i < p; i += 2)
            m[i] = 2 * c;
    } else if (strcmp(n, "decreasing") == 0) {
        for (int i = 0; i < p; i++)
            m[i] = 2 * c * (int64_t)(p - 1 - i) / (int64_t)(p - 1);
    } else if (strcmp(n, "geometric") == 0) {
        geometric(p, c, m);
    } else if (strcmp(n, "random") == 0) {
        for (int i = 0; i < p; i++) {
            uint64_t r = convoy__splitmix64(&s);
            m[i] = (r & 3) == 0 || c == 0 ? 0 : 1 + (int64_t)((r >> 2) % (uint64_t)(2 * c));
        }
    } else if (strcmp(n, "single") == 0) {
        m[convoy__splitmix64(&s) % (uint64_t)p] = c;
    } /* zeros: already all 0 */
    return 0;
}
