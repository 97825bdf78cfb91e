#ifndef HEARTH_CCRC32C_SHIM_H
#define HEARTH_CCRC32C_SHIM_H
/* CRC-32C (Castagnoli) with the CPU's own instruction: SSE4.2's `crc32` on x86-64 does eight bytes
   per instruction, where the table-driven loop in Swift (HearthCrypto's CRC32) costs several
   instructions per byte — on a large upload, which checksums every byte, that loop was a third of
   the CPU. Header-only, as CLinuxIO: there is no library, only an instruction Swift cannot emit.

   The caller asks `hearth_crc32c_hardware()` once and keeps the software loop for CPUs (and
   architectures) without the instruction. Both functions take and return the raw running register
   (initial 0xFFFFFFFF, final XOR left to the caller), as the software loop keeps it. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>

/* 1 when the CPU has SSE4.2 (CPUID leaf 1, ECX bit 20), which brings the crc32 instruction. */
static inline int hearth_crc32c_hardware(void)
{
    unsigned int a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
    return (c & bit_SSE4_2) != 0;
}

/* Only ever called after hearth_crc32c_hardware() said yes: the target attribute lets the compiler
   emit crc32 here without assuming SSE4.2 anywhere else. */
__attribute__((target("sse4.2")))
static inline uint32_t hearth_crc32c_update(uint32_t crc, const void *data, size_t n)
{
    const unsigned char *p = (const unsigned char *)data;
    uint64_t c = crc;
    /* memcpy: an unaligned 8-byte load, without the undefined behaviour of a cast. */
    while (n >= 32) {
        uint64_t w0, w1, w2, w3;
        memcpy(&w0, p, 8); memcpy(&w1, p + 8, 8); memcpy(&w2, p + 16, 8); memcpy(&w3, p + 24, 8);
        c = __builtin_ia32_crc32di(c, w0);
        c = __builtin_ia32_crc32di(c, w1);
        c = __builtin_ia32_crc32di(c, w2);
        c = __builtin_ia32_crc32di(c, w3);
        p += 32; n -= 32;
    }
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, p, 8);
        c = __builtin_ia32_crc32di(c, w);
        p += 8; n -= 8;
    }
    uint32_t c32 = (uint32_t)c;
    while (n > 0) {
        c32 = __builtin_ia32_crc32qi(c32, *p);
        p++; n--;
    }
    return c32;
}
#else
/* No crc32 instruction wired up for this architecture: the software loop serves. */
static inline int hearth_crc32c_hardware(void) { return 0; }
static inline uint32_t hearth_crc32c_update(uint32_t crc, const void *data, size_t n)
{
    (void)data; (void)n;
    return crc;
}
#endif
#endif
