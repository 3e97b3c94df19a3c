/* zstd_bundled — a program that contains zstd itself (Debian's libzstd.a,
 * linked in), as the zstd tool and many others do: it compresses and
 * decompresses a buffer and prints checksums.
 *
 * Its ZSTD_compressBound is its own, built by pes-clang (run.sh links with
 * --allow-multiple-definition, so this definition wins over the archive's): it
 * stands in for a program that compiles zstd with pes-clang, whose ZSTD_*
 * functions are instrumented. Were the collector's trace writer to call the
 * program's ZSTD_* (as it did when libpes-rt linked libzstd.so: the dynamic
 * linker binds its calls to the executable's definitions), its writer threads
 * would run this code: more calls are counted than the program made, and in a
 * full trace the writers record their own accesses and wait for buffers only
 * they could return (issue 31: `zstd --version` under --full never ended). */
#include <stdint.h>
#include <stdlib.h>
#include <zstd.h>

#include "bh.h"

static unsigned long bound_calls;
static unsigned char table[16384];

size_t ZSTD_compressBound(size_t size)
{
    /* accesses worth recording: a full trace's buffer fills after a few calls */
    unsigned long sum = 0;
    for (size_t i = 0; i < sizeof table; i++)
        sum += table[i] ^= (unsigned char)(i + size);
    __atomic_fetch_add(&bound_calls, 1, __ATOMIC_RELAXED);
    return ZSTD_COMPRESSBOUND(size) + (sum & 0);
}

static uint64_t fnv(const unsigned char *p, size_t n)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h;
}

int main(void)
{
    size_t n = 1 << 20;
    unsigned char *src = malloc(n), *back = malloc(n);
    if (!src || !back)
        return 2;
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < n; i++) {   /* compressible: small values, some structure */
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        src[i] = (unsigned char)((x % 16) + (i / 4096 % 8) * 16);
    }
    unsigned long total = 0;
    for (int round = 0; round < 8; round++) {
        size_t cap = ZSTD_compressBound(n);
        unsigned char *dst = malloc(cap);
        if (!dst)
            return 2;
        size_t c = ZSTD_compress(dst, cap, src, n, 1 + round % 3);
        if (ZSTD_isError(c)) {
            printf("compress: %s\n", ZSTD_getErrorName(c));
            return 1;
        }
        size_t d = ZSTD_decompress(back, n, dst, c);
        if (ZSTD_isError(d) || d != n || memcmp(src, back, n) != 0) {
            printf("round %d: decompressed data differ\n", round);
            return 1;
        }
        printf("round %d: level %d, %zu -> %zu bytes, fnv %016llx\n", round, 1 + round % 3, n, c,
               (unsigned long long)fnv(dst, c));
        total += c;
        free(dst);
        src[round * 1000] ^= 0x55;   /* the next round's input differs */
    }
    printf("zstd_bundled: %lu compressed bytes, ZSTD_compressBound called %lu times\n", total,
           __atomic_load_n(&bound_calls, __ATOMIC_RELAXED));
    free(src);
    free(back);
    return 0;
}
