"""The per-process counts of convoy-bench's distributions (a copy of src/check/dist.c, the
bound needs them; random and single are left out: their bound is not computed)."""
import math


def counts(name, p, c):
    m = [0] * p
    if p == 1:
        return [c]
    if name == "regular":
        m = [c] * p
    elif name == "broadcast":
        m[0] = c
    elif name == "spike":
        m = [c // (2 * (p - 1))] * p
        m[0] = c // 2
    elif name == "halffull":
        for i in range(0, p, 2):
            m[i] = 2 * c
    elif name == "decreasing":
        m = [2 * c * (p - 1 - i) // (p - 1) for i in range(p)]
    elif name == "geometric":
        k = 0
        while (1 << k) < p and k < 30:
            k += 1
        pow2 = (1 << k) == p
        i = 1
        while i - 1 < p:
            v = (c * p) // (i * k) if pow2 else math.floor(c * p / (i * math.log2(p)))
            for j in range(i - 1, min(2 * i - 1, p)):
                m[j] = v
            i *= 2
    else:
        return None
    return m
