/*
 * vec.h - growing an array one element at a time: the array v holds n
 * elements in cap slots; when it is full, VEC_RESERVE gives it first
 * slots (the first time) or twice as many, so that one more fits.
 *
 *     VEC_RESERVE(l->v, l->n, l->cap, 16);
 *     l->v[l->n++] = x;
 *
 * v, n and cap are lvalues (n and cap of any integer type, both starting
 * at 0 with v NULL), each evaluated more than once; the caller owns v and
 * frees it with free().
 */
#ifndef BR_VEC_H
#define BR_VEC_H

#include "common.h"

#define VEC_RESERVE(v, n, cap, first)                                                              \
    do {                                                                                           \
        if ((n) == (cap)) {                                                                        \
            (cap) = (cap) ? 2 * (cap) : (first);                                                   \
            (v) = xrealloc((v), (size_t)(cap) * sizeof *(v));                                      \
        }                                                                                          \
    } while (0)

#endif
