/* peer_trace_gen — the address traces of bench/peer_traces.py, in the formats
 * other tools read (docs/trace-format.md §9), written fast enough for 67 M
 * accesses:
 *
 *   peer_trace_gen KIND FORMAT OUT
 *     KIND    uniform  20 M accesses, uniformly random over 1 M 64-byte lines (seed 1)
 *             cyclic   20 M accesses, 100 K lines visited in turn
 *             matmul   C += A*B, 256 x 256 doubles, ijk order: A[i][k], B[k][j],
 *                      C[i][j] loaded and C[i][j] stored per iteration (67 M)
 *     FORMAT  addr (one hex address per line), lackey or binary64
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ADDR, LACKEY, BINARY64 };

static FILE *out;
static int format;

static void emit(uint64_t a, int store)
{
    if (format == BINARY64) {
        unsigned char b[8];
        for (int k = 0; k < 8; k++)
            b[k] = (unsigned char)(a >> (8 * k));
        fwrite(b, 1, 8, out);
    } else if (format == LACKEY) {
        fprintf(out, " %c %llx,8\n", store ? 'S' : 'L', (unsigned long long)a);
    } else {
        fprintf(out, store ? "%llx W\n" : "%llx\n", (unsigned long long)a);
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: peer_trace_gen uniform|cyclic|matmul addr|lackey|binary64 OUT\n");
        return 2;
    }
    format = strcmp(argv[2], "lackey") == 0 ? LACKEY : strcmp(argv[2], "binary64") == 0 ? BINARY64 : ADDR;
    if (format == ADDR && strcmp(argv[2], "addr") != 0) {
        fprintf(stderr, "peer_trace_gen: unknown format '%s'\n", argv[2]);
        return 2;
    }
    out = fopen(argv[3], "wb");
    if (!out) {
        perror(argv[3]);
        return 1;
    }
    static char buf[1 << 20];
    setvbuf(out, buf, _IOFBF, sizeof buf);
    const uint64_t base = 0x10000000;
    if (strcmp(argv[1], "uniform") == 0) {
        uint64_t x = 1;
        for (long i = 0; i < 20000000; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;   /* xorshift64 */
            emit(base + (x % 1000000) * 64, 0);
        }
    } else if (strcmp(argv[1], "cyclic") == 0) {
        for (long i = 0; i < 20000000; i++)
            emit(base + (uint64_t)(i % 100000) * 64, 0);
    } else if (strcmp(argv[1], "matmul") == 0) {
        const uint64_t n = 256, A = base, B = A + n * n * 8, C = B + n * n * 8;
        for (uint64_t i = 0; i < n; i++)
            for (uint64_t j = 0; j < n; j++)
                for (uint64_t k = 0; k < n; k++) {
                    emit(A + (i * n + k) * 8, 0);
                    emit(B + (k * n + j) * 8, 0);
                    emit(C + (i * n + j) * 8, 0);
                    emit(C + (i * n + j) * 8, 1);
                }
    } else {
        fprintf(stderr, "peer_trace_gen: unknown kind '%s'\n", argv[1]);
        return 2;
    }
    return fclose(out) == 0 ? 0 : 1;
}
