#ifndef CPREFETCH_SHIM_H
#define CPREFETCH_SHIM_H
/// A hint that `address` will be read soon: the cache line is fetched while other work goes on, so that several
/// independent cache misses (the records of one answer, scattered over the store) overlap instead of following one
/// another. It never faults, whatever the address.
static inline void poi_prefetch(const void *address) { __builtin_prefetch(address, 0, 3); }
#endif
