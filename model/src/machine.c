/* struct pes_machine helpers: validation, printing, generic defaults, value parsing. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const op_keys[PES_OP_COUNT] = {
    [PES_OP_INT_ADD] = "int_add", [PES_OP_INT_MUL] = "int_mul", [PES_OP_INT_DIV] = "int_div",
    [PES_OP_FP_ADD] = "fp_add",   [PES_OP_FP_MUL] = "fp_mul",   [PES_OP_FP_DIV] = "fp_div",
    [PES_OP_LOAD] = "load",       [PES_OP_STORE] = "store",     [PES_OP_BRANCH] = "branch",
    [PES_OP_CALL] = "call",       [PES_OP_OTHER] = "other",
};

const char *pes_machine_op_key(int op)
{
    return op >= 0 && op < PES_OP_COUNT ? op_keys[op] : "?";
}

const char *pes_machine_validation_name(enum pes_machine_validation v)
{
    switch (v) {
    case PES_MACHINE_PRESET:
        return "preset";
    case PES_MACHINE_CALIBRATED:
        return "calibrated";
    case PES_MACHINE_UNVALIDATED:
        return "unvalidated";
    }
    return "?";
}

int pes_model_parse_u64(const char *s, uint64_t *out)
{
    return pes_parse_u64(s, 10, out);
}

int pes_model_parse_double(const char *s, double *out)
{
    if (!*s || isspace((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int pes_model_parse_size(const char *s, uint64_t *out)
{
    if (!isdigit((unsigned char)*s))
        return -1;
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno)
        return -1;
    unsigned shift = 0;
    switch (toupper((unsigned char)*end)) {
    case 'K':
        shift = 10;
        end++;
        break;
    case 'M':
        shift = 20;
        end++;
        break;
    case 'G':
        shift = 30;
        end++;
        break;
    default:
        break;
    }
    if (toupper((unsigned char)*end) == 'B')
        end++;
    if (*end || (shift && v > (UINT64_MAX >> shift)))
        return -1;
    *out = (uint64_t)v << shift;
    return 0;
}

/* Generic level costs (not of any measured CPU; docs/model.md "host"): typical of
 * recent x86 cores, load-to-use latencies from 7-cpu.com ranges. */
void pes_model_generic_level(struct pes_cache_config *c, unsigned level)
{
    static const double lat[] = {4, 12, 40, 100}, rthr[] = {0.5, 2, 4, 8};
    unsigned i = level >= 1 && level <= 4 ? level - 1 : 3;
    c->latency = lat[i];
    c->recip_throughput = rthr[i];
}

void pes_model_generic_costs(struct pes_machine *m)
{
    m->issue_width = PES_DEFAULT_ISSUE_WIDTH;
    m->mlp = PES_DEFAULT_MLP;
    m->mem_latency = 200;
    m->mem_recip_throughput = 16;
    /* Agner Fog's tables, typical of Haswell..Zen 2 (scalar forms). */
    static const double lat[PES_OP_COUNT] = {
        [PES_OP_INT_ADD] = 1, [PES_OP_INT_MUL] = 3, [PES_OP_INT_DIV] = 26, [PES_OP_FP_ADD] = 3,
        [PES_OP_FP_MUL] = 4,  [PES_OP_FP_DIV] = 14, [PES_OP_LOAD] = 1,     [PES_OP_STORE] = 1,
        [PES_OP_BRANCH] = 1,  [PES_OP_CALL] = 2,    [PES_OP_OTHER] = 1,
    };
    static const double rthr[PES_OP_COUNT] = {
        [PES_OP_INT_ADD] = 0.25, [PES_OP_INT_MUL] = 1, [PES_OP_INT_DIV] = 10, [PES_OP_FP_ADD] = 0.5,
        [PES_OP_FP_MUL] = 0.5,   [PES_OP_FP_DIV] = 5,  [PES_OP_LOAD] = 0.5,   [PES_OP_STORE] = 1,
        [PES_OP_BRANCH] = 0.5,   [PES_OP_CALL] = 2,    [PES_OP_OTHER] = 0.25,
    };
    memcpy(m->op_latency, lat, sizeof lat);
    memcpy(m->op_recip_throughput, rthr, sizeof rthr);
}

static int bad_cost(double v)
{
    return !(v >= 0.0) || !isfinite(v);
}

/* A curve as struct pes_thread_curve says: at most PES_CURVE_POINTS points,
 * thread counts ascending and >= 1, values finite and > 0. */
static int bad_curve(const struct pes_thread_curve *c)
{
    if (c->n > PES_CURVE_POINTS)
        return 1;
    for (uint32_t i = 0; i < c->n; i++)
        if (c->threads[i] < 1 || (i && c->threads[i] <= c->threads[i - 1]) || !(c->value[i] > 0) ||
            !isfinite(c->value[i]))
            return 1;
    return 0;
}

static int curve_fail(struct pes_error *err, const char *n, const char *key)
{
    return pes_model_fail(err, PES_ERR_ARG,
                          "%s: %s: a thread curve needs <= %d points, thread counts ascending "
                          "from 1 and values > 0",
                          n, key, PES_CURVE_POINTS);
}

int pes_machine_validate(const struct pes_machine *m, struct pes_error *err)
{
    const char *n = m->name[0] ? m->name : "machine";
    if (!(m->ghz > 0.0) || !isfinite(m->ghz))
        return pes_model_fail(err, PES_ERR_ARG, "%s: clock %g GHz must be > 0", n, m->ghz);
    if (m->validation != PES_MACHINE_UNVALIDATED && m->validation != PES_MACHINE_PRESET &&
        m->validation != PES_MACHINE_CALIBRATED)
        return pes_model_fail(err, PES_ERR_ARG, "%s: unknown validation status %d", n,
                              (int)m->validation);
    if (m->sockets < 1 || m->cores_per_socket < 1)
        return pes_model_fail(err, PES_ERR_ARG, "%s: needs >= 1 socket and core per socket", n);
    if (m->n_levels < 1 || m->n_levels > PES_MAX_LEVELS)
        return pes_model_fail(err, PES_ERR_ARG, "%s: %u cache levels (1..%d allowed)", n,
                              m->n_levels, PES_MAX_LEVELS);
    for (unsigned i = 0; i < m->n_levels; i++) {
        const struct pes_cache_config *c = &m->level[i];
        if (c->line == 0 || (c->line & (c->line - 1)))
            return pes_model_fail(err, PES_ERR_ARG, "%s: L%u line %u is not a power of two", n,
                                  i + 1, c->line);
        if (c->size == 0 || c->size % c->line)
            return pes_model_fail(err, PES_ERR_ARG,
                                  "%s: L%u size %llu is not a non-zero multiple of line %u", n,
                                  i + 1, (unsigned long long)c->size, c->line);
        uint64_t blocks = c->size / c->line;
        if (c->ways > blocks || (c->ways && blocks % c->ways))
            return pes_model_fail(err, PES_ERR_ARG, "%s: L%u %u ways do not divide %llu blocks", n,
                                  i + 1, c->ways, (unsigned long long)blocks);
        if (c->shared > 1)
            return pes_model_fail(err, PES_ERR_ARG, "%s: L%u shared must be 0 or 1", n, i + 1);
        if (bad_cost(c->latency) || bad_cost(c->recip_throughput))
            return pes_model_fail(err, PES_ERR_ARG, "%s: L%u latency/throughput must be >= 0", n,
                                  i + 1);
        if (bad_curve(&c->bandwidth)) {
            char key[32];
            snprintf(key, sizeof key, "L%u.bandwidth", i + 1);
            return curve_fail(err, n, key);
        }
    }
    if (bad_curve(&m->fork_join))
        return curve_fail(err, n, "omp.fork_join");
    if (bad_curve(&m->barrier))
        return curve_fail(err, n, "omp.barrier");
    if (bad_curve(&m->mem_bandwidth))
        return curve_fail(err, n, "mem.bandwidth");
    if (bad_curve(&m->compute_throughput))
        return curve_fail(err, n, "compute.throughput");
    for (uint32_t i = 0; i < m->compute_throughput.n; i++)
        if (m->compute_throughput.value[i] > m->compute_throughput.threads[i])
            return pes_model_fail(err, PES_ERR_ARG,
                                  "%s: compute.throughput.%u = %g: more than %u threads' worth", n,
                                  m->compute_throughput.threads[i], m->compute_throughput.value[i],
                                  m->compute_throughput.threads[i]);
    if ((m->tlb_entries == 0) != (m->tlb_page == 0) || (m->tlb_page & (m->tlb_page - 1)) ||
        (m->tlb_miss_latency > 0 && !m->tlb_entries))
        return pes_model_fail(err, PES_ERR_ARG,
                              "%s: tlb.entries %u and tlb.page %u go together (a power of two), "
                              "tlb.miss_latency needs them",
                              n, m->tlb_entries, m->tlb_page);
    if (bad_cost(m->tlb_miss_latency) || bad_cost(m->prefetch_max_stride) ||
        m->prefetch_max_stride != floor(m->prefetch_max_stride) ||
        m->prefetch_max_stride > (double)(1u << 30))
        return pes_model_fail(err, PES_ERR_ARG,
                              "%s: tlb.miss_latency must be >= 0, prefetch.max_stride whole bytes "
                              "0 .. 1G",
                              n);
    if (bad_cost(m->mem_latency) || bad_cost(m->mem_recip_throughput))
        return pes_model_fail(err, PES_ERR_ARG, "%s: memory latency/throughput must be >= 0", n);
    if (!(m->issue_width == 0 || m->issue_width >= 1.0) || !isfinite(m->issue_width) ||
        !(m->mlp == 0 || m->mlp >= 1.0) || !isfinite(m->mlp))
        return pes_model_fail(err, PES_ERR_ARG,
                              "%s: issue_width %g and mlp %g must be >= 1 (0: default)", n,
                              m->issue_width, m->mlp);
    for (int o = 0; o < PES_OP_COUNT; o++)
        if (bad_cost(m->op_latency[o]) || bad_cost(m->op_recip_throughput[o]))
            return pes_model_fail(err, PES_ERR_ARG, "%s: op %s costs must be >= 0", n, op_keys[o]);
    return 0;
}

static void print_curve(FILE *out, const char *key, const struct pes_thread_curve *c)
{
    for (uint32_t i = 0; i < c->n && i < PES_CURVE_POINTS; i++)
        fprintf(out, "%s.%u = %.15g\n", key, c->threads[i], c->value[i]);
}

static void print_size(FILE *out, uint64_t v)
{
    if (v && v % (1ull << 30) == 0)
        fprintf(out, "%lluG", (unsigned long long)(v >> 30));
    else if (v && v % (1ull << 20) == 0)
        fprintf(out, "%lluM", (unsigned long long)(v >> 20));
    else if (v && v % (1ull << 10) == 0)
        fprintf(out, "%lluK", (unsigned long long)(v >> 10));
    else
        fprintf(out, "%llu", (unsigned long long)v);
}

void pes_machine_print(const struct pes_machine *m, FILE *out)
{
    fprintf(out, "name = %s\nvalidation = %s\nghz = %.15g\nsockets = %u\ncores_per_socket = %u\n",
            m->name, pes_machine_validation_name(m->validation), m->ghz, m->sockets,
            m->cores_per_socket);
    fprintf(out, "issue_width = %.15g\nmlp = %.15g\n", pes_machine_issue_width(m),
            pes_machine_mlp(m));
    if (m->error.runs)
        fprintf(out, "error.model = %s\nerror.mean = %.15g\nerror.max = %.15g\nerror.runs = %u\n",
                pes_runtime_model_name(m->error.model), m->error.mean, m->error.max, m->error.runs);
    for (unsigned i = 0; i < m->n_levels && i < PES_MAX_LEVELS; i++) {
        const struct pes_cache_config *c = &m->level[i];
        fprintf(out, "L%u.size = ", i + 1);
        print_size(out, c->size);
        fprintf(out, "\nL%u.ways = %u\nL%u.line = %u\nL%u.shared = %s\n", i + 1, c->ways, i + 1,
                c->line, i + 1, c->shared ? "shared" : "private");
        fprintf(out, "L%u.latency = %.15g\nL%u.recip_throughput = %.15g\n", i + 1, c->latency,
                i + 1, c->recip_throughput);
        char key[32];
        snprintf(key, sizeof key, "L%u.bandwidth", i + 1);
        print_curve(out, key, &c->bandwidth);
    }
    fprintf(out, "mem.latency = %.15g\nmem.recip_throughput = %.15g\n", m->mem_latency,
            m->mem_recip_throughput);
    print_curve(out, "mem.bandwidth", &m->mem_bandwidth);
    print_curve(out, "omp.fork_join", &m->fork_join);
    print_curve(out, "omp.barrier", &m->barrier);
    print_curve(out, "compute.throughput", &m->compute_throughput);
    if (m->tlb_entries) {
        fprintf(out, "tlb.entries = %u\ntlb.page = ", m->tlb_entries);
        print_size(out, m->tlb_page);
        fputc('\n', out);
    }
    if (m->tlb_miss_latency > 0)
        fprintf(out, "tlb.miss_latency = %.15g\n", m->tlb_miss_latency);
    if (m->prefetch_max_stride > 0) {
        fprintf(out, "prefetch.max_stride = ");
        print_size(out, (uint64_t)m->prefetch_max_stride);
        fputc('\n', out);
    }
    for (int o = 0; o < PES_OP_COUNT; o++)
        fprintf(out, "op.%s.latency = %.15g\nop.%s.recip_throughput = %.15g\n", op_keys[o],
                m->op_latency[o], op_keys[o], m->op_recip_throughput[o]);
}

double pes_thread_curve_at(const struct pes_thread_curve *c, double t)
{
    if (!c || c->n == 0 || !(t == t))
        return NAN;
    if (t <= c->threads[0])
        return c->value[0];
    for (uint32_t i = 1; i < c->n; i++)
        if (t <= c->threads[i]) {
            double t0 = c->threads[i - 1], t1 = c->threads[i];
            return c->value[i - 1] + (c->value[i] - c->value[i - 1]) * (t - t0) / (t1 - t0);
        }
    return c->value[c->n - 1];
}
