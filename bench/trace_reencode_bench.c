/*
 * trace_reencode_bench.c — the CPU a real trace's ACCESS blocks cost to
 * encode, split into the access codec and zstd, with the bytes each makes.
 * The synthetic streams of trace_codec_bench miss what matters for the
 * NPB-like kernels (cg's x[col[k]], is's count[key[i]]: irregular records
 * inside loop groups), so this one replays a trace that pes-collect wrote:
 * its ACCESS blocks are read as stored (groups unexpanded, as the runtime
 * hands them to the writer) and encoded again, block by block.
 *
 * Usage: trace_reencode_bench TRACE [max stored records (default 8M)]
 *                             [repeats (default 3)] [zstd param=value ...]
 * zstd params: level, hashLog, chainLog, searchLog, minMatch, targetLength,
 * strategy, checksum, literals (0 auto, 1 Huffman, 2 raw) (default level=1
 * checksum=1, as the writer). Prints, per
 * part, CPU ns per stored record (the codec's part includes pes_loop_walk,
 * which the encoder runs first) (best of the repeats, process CPU time) and
 * bytes: payload (codec output) and frames (zstd output). Every block is also
 * decoded back and compared record for record, so a codec change that loses
 * information fails here before it reaches a test (environment NOCHECK=1
 * skips that, for instruction counts of the encoding alone under cachegrind).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_c_literalCompressionMode */
#include <zstd.h>

#include "trace_internal.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

struct zparam {
    const char *name;
    ZSTD_cParameter p;
};

static const struct zparam zparams[] = {
    {"level", ZSTD_c_compressionLevel}, {"hashLog", ZSTD_c_hashLog},
    {"chainLog", ZSTD_c_chainLog},      {"searchLog", ZSTD_c_searchLog},
    {"minMatch", ZSTD_c_minMatch},      {"targetLength", ZSTD_c_targetLength},
    {"strategy", ZSTD_c_strategy},      {"checksum", ZSTD_c_checksumFlag},
    {"literals", ZSTD_c_literalCompressionMode},
};

static int set_param(ZSTD_CCtx *z, const char *arg)
{
    const char *eq = strchr(arg, '=');
    if (!eq)
        return -1;
    for (size_t i = 0; i < sizeof zparams / sizeof *zparams; i++)
        if (strlen(zparams[i].name) == (size_t)(eq - arg) &&
            !strncmp(arg, zparams[i].name, (size_t)(eq - arg)))
            return ZSTD_isError(ZSTD_CCtx_setParameter(z, zparams[i].p, atoi(eq + 1))) ? -1 : 0;
    return -1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: trace_reencode_bench TRACE [max records] [repeats] "
                        "[zstd param=value ...]\n");
        return 2;
    }
    size_t max = argc > 2 ? strtoull(argv[2], NULL, 10) : 8u << 20;
    int reps = argc > 3 ? atoi(argv[3]) : 3;
    ZSTD_CCtx *z = ZSTD_createCCtx();
    ZSTD_CCtx_setParameter(z, ZSTD_c_compressionLevel, 1);
    ZSTD_CCtx_setParameter(z, ZSTD_c_checksumFlag, 1);
    ZSTD_CCtx_setParameter(z, ZSTD_c_contentSizeFlag, 1);
    for (int i = 4; i < argc; i++)
        if (set_param(z, argv[i])) {
            fprintf(stderr, "trace_reencode_bench: bad zstd parameter '%s'\n", argv[i]);
            return 2;
        }

    struct pes_error err;
    struct pes_trace_reader *rd = pes_trace_reader_open(argv[1], &err);
    if (!rd) {
        fprintf(stderr, "trace_reencode_bench: %s\n", err.message);
        return 1;
    }
    pes_trace_reader_set_raw(rd, 1);
    struct pes_record *recs = malloc(max * sizeof *recs);
    size_t *bn = malloc((max + 1) * sizeof *bn), nblocks = 0, total = 0;
    if (!recs || !bn)
        return 1;
    struct pes_block b;
    int rc;
    while ((rc = pes_trace_reader_next(rd, &b, &err)) == 1) {
        if (b.type != PES_BLOCK_ACCESS || b.n == 0)
            continue;
        if (total + b.n > max)
            break;
        memcpy(recs + total, b.records, b.n * sizeof *recs);
        bn[nblocks++] = b.n;
        total += b.n;
    }
    if (rc < 0) {
        fprintf(stderr, "trace_reencode_bench: %s\n", err.message);
        return 1;
    }
    pes_trace_reader_close(rd);
    if (!total) {
        fprintf(stderr, "trace_reencode_bench: no ACCESS records in %s\n", argv[1]);
        return 1;
    }

    /* the shape of the stream: how often a record repeats its predecessor's
     * id (a run of one site: a mixed group's irregular records) */
    size_t same = 0, loops = 0;
    for (size_t i = 0; i < total; i++) {
        same += i && recs[i].id == recs[i - 1].id;
        loops += recs[i].id == PES_ID_LOOP;
    }
    printf("%s: %zu stored records, %.1f %% repeat the previous id, %zu loop groups\n\n", argv[1],
           total, 100.0 * (double)same / (double)total, loops);

    struct pes_access_codec *c = pes_access_codec_new();
    struct pes_buf pay = {0};
    size_t bound = ZSTD_compressBound(pes_access_payload_max(PES_MAX_READ_RECORDS));
    uint8_t *frame = malloc(bound);
    struct pes_record *back = malloc(PES_MAX_READ_RECORDS * sizeof *back);
    double best_enc = 1e30, best_z = 1e30;
    /* payload bytes by part (first repeat): bitmaps, id, address and extra planes */
    double part[4] = {0};
    size_t pay_bytes = 0, frame_bytes = 0;
    for (int rep = 0; rep < reps; rep++) {
        double t_enc = 0, t_z = 0;
        pay_bytes = frame_bytes = 0;
        size_t at = 0;
        for (size_t k = 0; k < nblocks; at += bn[k++]) {
            pay.len = 0;
            double t0 = cpu_now();
            /* as pes_trace_encoder_records: the walk, then the codec */
            struct pes_loop_walk w;
            if (pes_loop_walk(recs + at, bn[k], 0, PES_MAX_BLOCK_RECORDS, PES_MAX_BLOCK_RECORDS, 1,
                              &w) ||
                w.stored != bn[k] ||
                pes_access_encode_groups(c, recs + at, bn[k], w.groups != 0, &pay))
                return 1;
            double t1 = cpu_now();
            size_t cs = ZSTD_compress2(z, frame, bound, pay.data, pay.len);
            double t2 = cpu_now();
            if (ZSTD_isError(cs)) {
                fprintf(stderr, "zstd: %s\n", ZSTD_getErrorName(cs));
                return 1;
            }
            t_enc += t1 - t0;
            t_z += t2 - t1;
            pay_bytes += pay.len;
            frame_bytes += cs;
            if (rep == 0 && !getenv("NOCHECK")) {
                uint32_t mask = pes_load_u32(pay.data);
                size_t kid = pes_load_u32(pay.data + 4), ka = pes_load_u32(pay.data + 8),
                       ke = pes_load_u32(pay.data + 12);
                part[0] += 16 + 3 * (double)((bn[k] + 7) / 8);
                part[1] += (double)(kid * (size_t)__builtin_popcount(mask & 0xf));
                part[2] += (double)(ka * (size_t)__builtin_popcount(mask & 0xff0));
                part[3] += (double)(ke * (size_t)__builtin_popcount(mask & 0xf000));
                const char *why = "";
                if (pes_access_decode(c, pay.data, pay.len, bn[k], back, &why) ||
                    memcmp(back, recs + at, bn[k] * sizeof *back)) {
                    fprintf(stderr, "trace_reencode_bench: block %zu does not decode back (%s)\n",
                            k, why);
                    return 1;
                }
            }
        }
        best_enc = t_enc < best_enc ? t_enc : best_enc;
        best_z = t_z < best_z ? t_z : best_z;
    }
    printf("payload B/rec: header+bitmaps %.3f, id planes %.3f, address planes %.3f, extra "
           "planes %.3f\n\n",
           part[0] / (double)total, part[1] / (double)total, part[2] / (double)total,
           part[3] / (double)total);
    printf("| records | blocks | codec ns/rec | zstd ns/rec | total ns/rec | payload B/rec | "
           "frame B/rec | frame bytes |\n|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    printf("| %zu | %zu | %.2f | %.2f | %.2f | %.3f | %.4f | %zu |\n", total, nblocks,
           best_enc / (double)total * 1e9, best_z / (double)total * 1e9,
           (best_enc + best_z) / (double)total * 1e9, (double)pay_bytes / (double)total,
           (double)frame_bytes / (double)total, frame_bytes);
    free(back);
    free(frame);
    pes_buf_free(&pay);
    pes_access_codec_free(c);
    free(bn);
    free(recs);
    ZSTD_freeCCtx(z);
    return 0;
}
