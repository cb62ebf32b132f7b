/*
 * The count distributions of papers/002 §3 with values derived by hand for small p, and
 * the properties the paper states (total m = c or m = pc), plus the testing ones.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check/dist.h"
#include "unit.h"

static void expect_counts(const char *name, int p, int64_t c, const int64_t *want)
{
    int64_t got[64];
    int rc = convoy__dist_counts(name, p, c, 1, got);
    EXPECT(rc == 0, "%s p=%d: returned %d", name, p, rc);
    for (int i = 0; i < p; i++)
        EXPECT(got[i] == want[i], "%s p=%d c=%lld: m_%d = %lld, expected %lld", name, p,
               (long long)c, i, (long long)got[i], (long long)want[i]);
}

static int64_t sum(const int64_t *m, int p)
{
    int64_t s = 0;
    for (int i = 0; i < p; i++)
        s += m[i];
    return s;
}

static void hand_derived(void)
{
    expect_counts("regular", 4, 10, (const int64_t[]){10, 10, 10, 10});
    expect_counts("broadcast", 4, 10, (const int64_t[]){10, 0, 0, 0});
    /* m_0 = c/2 = 50, m_i = c / (2 (p-1)) = 100 / 8 = 12. */
    expect_counts("spike", 5, 100, (const int64_t[]){50, 12, 12, 12, 12});
    /* m_{2 floor(i/2)} = 2c, the odd ones 0. */
    expect_counts("halffull", 5, 10, (const int64_t[]){20, 0, 20, 0, 20});
    /* 2c (p-1-i) / (p-1) = 20 (4-i) / 4. */
    expect_counts("decreasing", 5, 10, (const int64_t[]){20, 15, 10, 5, 0});
    /* p = 4, log2 p = 2: i = 1: 40/2 = 20; i = 2: 40/4 = 10 (ranks 1, 2); i = 4: 40/8 = 5
     * (rank 3, the group cut at p - 1). */
    expect_counts("geometric", 4, 10, (const int64_t[]){20, 10, 10, 5});
    /* p = 8, log2 p = 3: 96/3 = 32; 96/6 = 16; 96/12 = 8 (ranks 3..6); 96/24 = 4. */
    expect_counts("geometric", 8, 12, (const int64_t[]){32, 16, 16, 8, 8, 8, 8, 4});
    /* p = 3, log2 3 = 1.585: 30/1.585 = 18.9 -> 18; 30/3.17 = 9.46 -> 9. */
    expect_counts("geometric", 3, 10, (const int64_t[]){18, 9, 9});
    /* p = 6, log2 6 = 2.585: 60/2.585 = 23.2; 60/5.17 = 11.6; 60/10.34 = 5.8. */
    expect_counts("geometric", 6, 10, (const int64_t[]){23, 11, 11, 5, 5, 5});
    expect_counts("zeros", 3, 10, (const int64_t[]){0, 0, 0});
    /* p = 1: the single process contributes c, whatever the distribution. */
    const char *one[] = {"regular",    "broadcast", "spike", "halffull",
                         "decreasing", "geometric", "single"};
    for (size_t k = 0; k < sizeof one / sizeof *one; k++)
        expect_counts(one[k], 1, 7, (const int64_t[]){7});
}

static void totals(void)
{
    int64_t m[64];
    for (int p = 2; p <= 64; p++) {
        const int64_t c = 1000;
        convoy__dist_counts("regular", p, c, 1, m);
        EXPECT(sum(m, p) == p * c, "regular p=%d", p);
        convoy__dist_counts("broadcast", p, c, 1, m);
        EXPECT(sum(m, p) == c && m[0] == c, "broadcast p=%d", p);
        /* Spike: m = c up to the rounding of c / (2(p-1)), every process > 0 for c >= 2p. */
        convoy__dist_counts("spike", p, c, 1, m);
        EXPECT(sum(m, p) <= c && sum(m, p) > c - p, "spike p=%d sum %lld", p, (long long)sum(m, p));
        for (int i = 1; i < p; i++)
            EXPECT(m[i] > 0 && m[i] == m[1], "spike p=%d m_%d", p, i);
        /* Half full: pc for even p, (p+1)c for odd p (one more full process). */
        convoy__dist_counts("halffull", p, c, 1, m);
        EXPECT(sum(m, p) == (p % 2 ? p + 1 : p) * c, "halffull p=%d", p);
        /* Decreasing: exactly pc when 2c(p-1-i) divides evenly, within p of it otherwise;
         * strictly decreasing from 2c to 0. */
        convoy__dist_counts("decreasing", p, c, 1, m);
        EXPECT(m[0] == 2 * c && m[p - 1] == 0, "decreasing p=%d ends", p);
        EXPECT(sum(m, p) <= p * c && sum(m, p) > p * c - p, "decreasing p=%d sum", p);
        for (int i = 1; i < p; i++)
            EXPECT(m[i] <= m[i - 1], "decreasing p=%d at %d", p, i);
        /* Geometric: groups 1, 2, 4, ... with c p / (i log2 p) each; m close to pc. */
        convoy__dist_counts("geometric", p, c, 1, m);
        int64_t s = sum(m, p);
        EXPECT(s > 0.5 * p * c && s < 2.0 * p * c, "geometric p=%d sum %lld", p, (long long)s);
        for (int i = 1, g = 1; i - 1 < p; i *= 2, g++)
            for (int j = i - 1; j <= 2 * i - 2 && j < p; j++)
                EXPECT(m[j] == (int64_t)floor((double)c * p / (i * log2((double)p))) ||
                           m[j] == (int64_t)floor((double)c * p / (i * log2((double)p))) - 1,
                       "geometric p=%d group %d rank %d", p, g, j);
    }
    /* Powers of two: the geometric sum is exactly what the formula gives, in integers. */
    convoy__dist_counts("geometric", 16, 8, 1, m);
    EXPECT(m[0] == 32 && m[1] == 16 && m[3] == 8 && m[7] == 4 && m[15] == 2, "geometric p=16");
}

static void testing_ones(void)
{
    int64_t a[100], b[100];
    EXPECT(convoy__dist_counts("random", 100, 5, 7, a) == 0, "random");
    convoy__dist_counts("random", 100, 5, 7, b);
    EXPECT(memcmp(a, b, sizeof a) == 0, "random is not reproducible");
    int zeros = 0, top = 0;
    for (int i = 0; i < 100; i++) {
        EXPECT(a[i] >= 0 && a[i] <= 10, "random value %lld", (long long)a[i]);
        zeros += a[i] == 0;
        top += a[i] == 10;
    }
    EXPECT(zeros > 5 && zeros < 60, "random: %d zeros of 100", zeros);
    convoy__dist_counts("random", 100, 5, 8, b);
    EXPECT(memcmp(a, b, sizeof a) != 0, "random ignores the seed");
    convoy__dist_counts("single", 100, 5, 3, a);
    int nz = 0;
    for (int i = 0; i < 100; i++)
        nz += a[i] != 0;
    EXPECT(nz == 1 && sum(a, 100) == 5, "single: %d non-zero", nz);
    convoy__dist_counts("random", 10, 0, 3, a);
    EXPECT(sum(a, 10) == 0, "random with c = 0");

    EXPECT(convoy__dist_counts("nope", 4, 1, 1, a) == -3, "unknown name accepted");
    EXPECT(convoy__dist_counts("regular", 0, 1, 1, a) == -3, "p = 0 accepted");
    EXPECT(convoy__dist_counts("regular", 4, -1, 1, a) == -3, "c < 0 accepted");
    EXPECT(convoy__dist_count() >= 9, "names");
    for (int i = 0; i < convoy__dist_count(); i++)
        EXPECT(convoy__dist_counts(convoy__dist_name(i), 3, 2, 1, a) == 0, "name %d", i);
    EXPECT(convoy__dist_name(convoy__dist_count()) == NULL, "name past the end");
}

int main(void)
{
    hand_derived();
    totals();
    testing_ones();
    return unit_done();
}
