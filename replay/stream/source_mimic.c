/*
 * source_mimic.c — N cores mimicked from a sequential run (PPT-Multicore
 * Alg. 1 + 2, mimic.h) as a batch source: the interleaved stream, one stream
 * per core, every core's own order kept.
 */
#include "callpath.h"
#include "input.h"
#include "objects.h"

struct mimic_feed {
    struct replay_input *in;
    struct pes_objects *objects; /* NULL: not resolved */
    uint32_t first_lane;         /* core c walks lane first_lane + c */
    struct pes_callpaths *cp;    /* NULL: no call paths; else thread c is core c */
    struct pes_batch_buf buf;
    struct pes_error err;
    int failed;
};

/* The data object of an access: the recorded address at its core's place
 * in the sequential run (asked in each core's order, mimic.h). */
static void locate(void *ctx, uint32_t core, uint64_t recorded, uint32_t site, uint32_t *object,
                   uint64_t *offset)
{
    struct mimic_feed *f = ctx;
    *object = pes_objects_lookup_lane(f->objects, f->first_lane + core, recorded, site, offset);
}

/* Alg. 2's observer: reads and writes from the site's kind (one mimicked
 * thread per core). A sink error stops feeding; the run reports it. */
static void feed(void *ctx, uint32_t core, uint64_t addr, uint32_t size, uint32_t site,
                 uint64_t recorded, uint32_t object, uint64_t offset)
{
    struct mimic_feed *f = ctx;
    (void)recorded;
    if (f->failed)
        return;
    if (f->objects) {
        size_t at = f->buf.view.n;
        f->buf.object[at] = object;
        f->buf.object_offset[at] = offset;
    }
    if (f->cp) /* the core's stack has seen the call edges before this access, none after */
        f->buf.callpath[f->buf.view.n] = pes_callpaths_current(f->cp, core);
    const struct pes_site *s = replay_input_site(f->in, site);
    uint8_t rw = !s ? PES_BATCH_READ
                    : (uint8_t)((pes_kind_reads(s->kind) ? PES_BATCH_READ : 0) |
                                (pes_kind_writes(s->kind) ? PES_BATCH_WRITE : 0));
    if (pes_batch_buf_access(&f->buf, addr, size, size, core, site, rw, &f->err) < 0)
        f->failed = 1;
}

/* Allocation records as each core's cursor passes them: every core keeps
 * its own live blocks (lane), so an access is named by the blocks live at
 * its place in the sequential run, whatever the interleaving. The mimic
 * source carries no thread numbers: pending ALLOCs are paired per core,
 * which is exact for a one-thread (sequential) trace. */
static void feed_control(void *ctx, uint32_t core, const struct pes_record *r)
{
    struct mimic_feed *f = ctx;
    if (f->objects)
        pes_objects_record_lane(f->objects, f->first_lane + core, 0, r);
    if (f->cp && pes_callpaths_record(f->cp, core, r) < 0 && !f->failed) {
        pes_error_set(&f->err, PES_ERR_NOMEM, 0, "out of memory for call paths");
        f->failed = 1;
    }
}

int replay_input_object_lanes(struct replay_input *in, uint32_t n)
{
    struct pes_objects *o = replay_input_objects(in);
    if (!o)
        return 0;
    if (pes_objects_set_lanes(o, n) < 0)
        return -1;
    pes_objects_freeze(o);
    return 0;
}

int replay_mimic_run(struct replay_input *in, const struct pes_mimic_counts *counts,
                     const struct pes_mimic_options *opt, uint32_t first_lane,
                     struct pes_callpaths *callpaths, const struct pes_batch_sink *sink,
                     struct pes_error *err)
{
    struct pes_mimic_source src;
    replay_input_mimic_source(in, &src);
    struct mimic_feed f = {
        .in = in, .objects = replay_input_objects(in), .first_lane = first_lane, .cp = callpaths};
    if (pes_batch_buf_init(&f.buf, sink, err) < 0)
        return -1;
    if (callpaths && pes_batch_buf_callpaths(&f.buf, err) < 0) {
        pes_batch_buf_free(&f.buf);
        return -1;
    }
    if (callpaths)
        pes_callpaths_reset(callpaths);
    if (f.objects && !first_lane && pes_objects_set_lanes(f.objects, opt->n_cores) < 0) {
        pes_batch_buf_free(&f.buf);
        return pes_error_set(err, PES_ERR_NOMEM, 0, "out of memory");
    }
    if (f.objects)
        pes_objects_freeze(f.objects); /* the cores' lanes may be walked on workers (opt->sched) */
    if (f.objects && pes_batch_buf_objects(&f.buf, err) < 0) {
        pes_batch_buf_free(&f.buf);
        return -1;
    }
    struct pes_mimic_options o = *opt;
    o.emit = NULL;
    o.emit_located = feed;
    o.locate = f.objects ? locate : NULL;
    o.emit_ctx = &f;
    o.control = feed_control;
    if (callpaths) /* control on this thread, each core's just before its next access */
        o.sched = NULL;
    int rc = pes_mimic_interleave(&src, counts, &o, err);
    if (rc == 0 && !f.failed && pes_batch_buf_flush(&f.buf, &f.err) < 0)
        f.failed = 1;
    if (rc == 0 && f.failed) {
        *err = f.err;
        rc = -1;
    }
    pes_batch_buf_free(&f.buf);
    if (f.objects && !first_lane)
        pes_objects_set_lanes(f.objects, 1); /* a later pass is a recorded one again */
    return rc;
}
