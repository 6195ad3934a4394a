#ifndef CNODEKERNELS_SHIM_H
#define CNODEKERNELS_SHIM_H
// The keys of a whole R-tree node at once, for the nearest-neighbour walk (`RTree.nearest`; docs/ARCHITECTURE.md,
// "Spatial index"). A node is `POI_NODE_SLOTS` slots stored lane by lane (`NodeLanes`): a leaf is x[32] y[32] z[32],
// a branch minX[32] minY[32] minZ[32] maxX[32] maxY[32] maxZ[32], so that four slots' lanes are one AVX2 load.
//
// A point's key is the squared chord (dx·dx + dy·dy) + dz·dz, rounded exactly as Swift's `Vec3.distanceSquared`
// rounds it (each product and sum on its own; never fused), so that keys found here and keys found one at a time
// (`ChordDistance.key`) are the same bits and rank the same. A box's key is the squared distance to its nearest
// point, a lower bound for every point inside (see `Box3.distanceSquared`).
#include <stdint.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

#pragma STDC FP_CONTRACT OFF

enum { POI_NODE_SLOTS = 32 };

/// The keys of every slot of a leaf into `keys`, and the slots below `count` whose key is at most `bound` as a bit mask.
static inline uint32_t poi_leaf_keys_portable(const double *node, int count, double qx, double qy, double qz, double bound, double *keys) {
    uint32_t mask = 0;
    for (int i = 0; i < POI_NODE_SLOTS; i++) {
        double dx = qx - node[i], dy = qy - node[POI_NODE_SLOTS + i], dz = qz - node[2 * POI_NODE_SLOTS + i];
        double xy = dx * dx + dy * dy;
        double key = xy + dz * dz;
        keys[i] = key;
        mask |= (uint32_t)(key <= bound) << i;
    }
    return count >= POI_NODE_SLOTS ? mask : mask & ((1u << count) - 1u);
}

/// The lower bound of every slot of a branch into `keys`, and the slots below `count` within `bound` as a bit mask.
static inline uint32_t poi_branch_keys_portable(const double *node, int count, double qx, double qy, double qz, double bound, double *keys) {
    const int m = POI_NODE_SLOTS;
    uint32_t mask = 0;
    for (int i = 0; i < m; i++) {
        double ax = node[i] - qx, bx = qx - node[3 * m + i];
        double ay = node[m + i] - qy, by = qy - node[4 * m + i];
        double az = node[2 * m + i] - qz, bz = qz - node[5 * m + i];
        double dx = ax > bx ? ax : bx, dy = ay > by ? ay : by, dz = az > bz ? az : bz;
        dx = dx > 0 ? dx : 0;
        dy = dy > 0 ? dy : 0;
        dz = dz > 0 ? dz : 0;
        double xy = dx * dx + dy * dy;
        double key = i < count ? xy + dz * dz : __builtin_inf();
        keys[i] = key;
        mask |= (uint32_t)(key <= bound) << i;
    }
    return count >= m ? mask : mask & ((1u << count) - 1u);
}

/// The slot of the smallest key of a branch's row (the first such slot) if it is at most `bound` and finite, with
/// its key then set to infinity so that it is not picked again; -1 when there is none.
static inline int poi_pick_portable(double *keys, double bound) {
    int pick = -1;
    double low = __builtin_inf();
    for (int i = 0; i < POI_NODE_SLOTS; i++) {
        if (keys[i] < low) {
            low = keys[i];
            pick = i;
        }
    }
    if (pick < 0 || !(low <= bound)) return -1;
    keys[pick] = __builtin_inf();
    return pick;
}

#if defined(__x86_64__)
/// `poi_leaf_keys_portable` four slots at a time (AVX2; no FMA, so nothing is fused).
__attribute__((target("avx2"))) static inline uint32_t poi_leaf_keys_avx2(
    const double *node, int count, double qx, double qy, double qz, double bound, double *keys) {
    const __m256d x = _mm256_set1_pd(qx), y = _mm256_set1_pd(qy), z = _mm256_set1_pd(qz), b = _mm256_set1_pd(bound);
    uint32_t mask = 0;
    for (int i = 0; i < POI_NODE_SLOTS; i += 4) {
        __m256d dx = _mm256_sub_pd(x, _mm256_loadu_pd(node + i));
        __m256d dy = _mm256_sub_pd(y, _mm256_loadu_pd(node + POI_NODE_SLOTS + i));
        __m256d dz = _mm256_sub_pd(z, _mm256_loadu_pd(node + 2 * POI_NODE_SLOTS + i));
        __m256d xy = _mm256_add_pd(_mm256_mul_pd(dx, dx), _mm256_mul_pd(dy, dy));
        __m256d key = _mm256_add_pd(xy, _mm256_mul_pd(dz, dz));
        _mm256_storeu_pd(keys + i, key);
        mask |= (uint32_t)_mm256_movemask_pd(_mm256_cmp_pd(key, b, _CMP_LE_OQ)) << i;
    }
    return count >= POI_NODE_SLOTS ? mask : mask & ((1u << count) - 1u);
}

/// `poi_branch_keys_portable` four slots at a time (AVX2): slots from `count` on get an infinite key.
__attribute__((target("avx2"))) static inline uint32_t poi_branch_keys_avx2(
    const double *node, int count, double qx, double qy, double qz, double bound, double *keys) {
    const int m = POI_NODE_SLOTS;
    const __m256d x = _mm256_set1_pd(qx), y = _mm256_set1_pd(qy), z = _mm256_set1_pd(qz), b = _mm256_set1_pd(bound);
    const __m256d zero = _mm256_setzero_pd(), infinity = _mm256_set1_pd(__builtin_inf());
    const __m256i limit = _mm256_set1_epi64x(count), lane = _mm256_setr_epi64x(0, 1, 2, 3);
    uint32_t mask = 0;
    for (int i = 0; i < m; i += 4) {
        __m256d dx = _mm256_max_pd(_mm256_sub_pd(_mm256_loadu_pd(node + i), x), _mm256_sub_pd(x, _mm256_loadu_pd(node + 3 * m + i)));
        __m256d dy = _mm256_max_pd(_mm256_sub_pd(_mm256_loadu_pd(node + m + i), y), _mm256_sub_pd(y, _mm256_loadu_pd(node + 4 * m + i)));
        __m256d dz = _mm256_max_pd(_mm256_sub_pd(_mm256_loadu_pd(node + 2 * m + i), z), _mm256_sub_pd(z, _mm256_loadu_pd(node + 5 * m + i)));
        dx = _mm256_max_pd(dx, zero);
        dy = _mm256_max_pd(dy, zero);
        dz = _mm256_max_pd(dz, zero);
        __m256d xy = _mm256_add_pd(_mm256_mul_pd(dx, dx), _mm256_mul_pd(dy, dy));
        __m256d key = _mm256_add_pd(xy, _mm256_mul_pd(dz, dz));
        __m256d present = _mm256_castsi256_pd(_mm256_cmpgt_epi64(limit, _mm256_add_epi64(_mm256_set1_epi64x(i), lane)));
        key = _mm256_blendv_pd(infinity, key, present);
        _mm256_storeu_pd(keys + i, key);
        mask |= (uint32_t)_mm256_movemask_pd(_mm256_cmp_pd(key, b, _CMP_LE_OQ)) << i;
    }
    return count >= m ? mask : mask & ((1u << count) - 1u);
}

/// `poi_pick_portable` with AVX2: the minimum of the 32 keys by a tree of `vminpd`, then its first slot.
__attribute__((target("avx2"))) static inline int poi_pick_avx2(double *keys, double bound) {
    __m256d k[8];
    for (int i = 0; i < 8; i++) k[i] = _mm256_loadu_pd(keys + 4 * i);
    __m256d low = _mm256_min_pd(_mm256_min_pd(_mm256_min_pd(k[0], k[1]), _mm256_min_pd(k[2], k[3])),
                                _mm256_min_pd(_mm256_min_pd(k[4], k[5]), _mm256_min_pd(k[6], k[7])));
    low = _mm256_min_pd(low, _mm256_permute2f128_pd(low, low, 1));
    low = _mm256_min_pd(low, _mm256_permute_pd(low, 5));
    double least = _mm256_cvtsd_f64(low);
    if (!(least <= bound) || least == __builtin_inf()) return -1;
    for (int i = 0; i < 8; i++) {
        int equal = _mm256_movemask_pd(_mm256_cmp_pd(k[i], low, _CMP_EQ_OQ));
        if (equal) {
            int pick = 4 * i + __builtin_ctz((unsigned)equal);
            keys[pick] = __builtin_inf();
            return pick;
        }
    }
    return -1;
}

/// Whether this processor and the operating system give AVX2: CPUID leaf 7 EBX bit 5, and the YMM state enabled
/// (CPUID leaf 1 ECX OSXSAVE and AVX, XCR0 bits 1 and 2).
static inline int poi_node_kernels_have_avx2(void) {
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_OSXSAVE) || !(c & bit_AVX)) return 0;
    unsigned lo, hi;
    __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    if ((lo & 6u) != 6u) return 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
    return (b & bit_AVX2) != 0;
}
#else
static inline uint32_t poi_leaf_keys_avx2(const double *node, int count, double qx, double qy, double qz, double bound, double *keys) {
    return poi_leaf_keys_portable(node, count, qx, qy, qz, bound, keys);
}
static inline uint32_t poi_branch_keys_avx2(const double *node, int count, double qx, double qy, double qz, double bound, double *keys) {
    return poi_branch_keys_portable(node, count, qx, qy, qz, bound, keys);
}
static inline int poi_pick_avx2(double *keys, double bound) { return poi_pick_portable(keys, bound); }
static inline int poi_node_kernels_have_avx2(void) { return 0; }
#endif

/// The keys of a leaf (see `poi_leaf_keys_portable`), with AVX2 when the processor has it (asked once).
static inline uint32_t poi_leaf_keys(const double *node, int count, double qx, double qy, double qz, double bound, double *keys, int avx2) {
    return avx2 ? poi_leaf_keys_avx2(node, count, qx, qy, qz, bound, keys) : poi_leaf_keys_portable(node, count, qx, qy, qz, bound, keys);
}

/// The nearest child of a branch not yet opened (see `poi_pick_portable`), with AVX2 when the processor has it.
static inline int poi_pick(double *keys, double bound, int avx2) {
    return avx2 ? poi_pick_avx2(keys, bound) : poi_pick_portable(keys, bound);
}

/// The lower bounds of a branch's boxes (see `poi_branch_keys_portable`), with AVX2 when the processor has it.
static inline uint32_t poi_branch_keys(const double *node, int count, double qx, double qy, double qz, double bound, double *keys, int avx2) {
    return avx2 ? poi_branch_keys_avx2(node, count, qx, qy, qz, bound, keys)
                : poi_branch_keys_portable(node, count, qx, qy, qz, bound, keys);
}
#endif
