#ifndef CPROJ_SHIM_H
#define CPROJ_SHIM_H
#include <proj.h>

/// sin and cos of one angle in a single libm call (glibc's sincos is hidden behind _GNU_SOURCE).
static inline void geocore_sincos(double angle, double *s, double *c) {
    __builtin_sincos(angle, s, c);
}
#endif
