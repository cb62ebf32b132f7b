/* SplitMix64 (Steele, Lea, Flood 2014): a small, good, reproducible generator for the
 * test layouts, the distributions and the checker's shuffles. */
#ifndef CONVOY_SPLITMIX_H
#define CONVOY_SPLITMIX_H

#include <stdint.h>

static inline uint64_t convoy__splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

#endif
