#ifndef CCHECKSUM_SHIM_H
#define CCHECKSUM_SHIM_H
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

/// CRC-32C (Castagnoli: the reflected polynomial 0x82F63B78, as iSCSI, ext4 and RocksDB use it) of `n` bytes after
/// `crc` (0 to start; each call continues the last). Bit by bit: the fallback for processors without the instruction.
static inline uint32_t poi_crc32c_software(uint32_t crc, const void *data, size_t n) {
    const unsigned char *p = (const unsigned char *)data;
    crc = ~crc;
    while (n--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0x82F63B78u & (0u - (crc & 1u)));
    }
    return ~crc;
}

#if defined(__x86_64__)
/// `poi_crc32c_software` with SSE 4.2's `crc32` instruction, eight bytes at a time.
__attribute__((target("sse4.2"))) static inline uint32_t poi_crc32c_hardware(uint32_t crc, const void *data, size_t n) {
    const unsigned char *p = (const unsigned char *)data;
    uint64_t c = ~crc;
    while (n && ((uintptr_t)p & 7)) {
        c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
        n--;
    }
    while (n >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        c = __builtin_ia32_crc32di(c, word);
        p += 8;
        n -= 8;
    }
    while (n--) c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
    return ~(uint32_t)c;
}

/// Whether this processor has the instruction (CPUID leaf 1, ECX bit 20).
static inline int poi_crc32c_has_hardware(void) {
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && (c & bit_SSE4_2) != 0;
}
#else
static inline uint32_t poi_crc32c_hardware(uint32_t crc, const void *data, size_t n) { return poi_crc32c_software(crc, data, n); }
static inline int poi_crc32c_has_hardware(void) { return 0; }
#endif
#endif
