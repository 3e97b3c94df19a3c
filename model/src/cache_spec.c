/* Cache geometry override: "L1=32K:8,L2=256K:8,L3=20M:20:64:shared". */
#include <string.h>

#include "internal.h"

#define SPEC_MAX 512

static int fail(struct pes_error *err, const char *item, const char *fmt, const char *part)
{
    char what[160];
    snprintf(what, sizeof what, fmt, part);
    return pes_model_fail(err, PES_ERR_ARG, "--cache: '%s': %s", item, what);
}

/* Applies one "Ln=SIZE:WAYS[:LINE][:shared|private]" item to t. */
static int apply_item(struct pes_machine *t, unsigned *defined, char *item, struct pes_error *err)
{
    char orig[SPEC_MAX];
    snprintf(orig, sizeof orig, "%s", item);
    char *eq = strchr(item, '=');
    if (!eq)
        return fail(err, orig, "expected Ln=SIZE:WAYS%s", "");
    *eq = 0;
    if ((item[0] != 'L' && item[0] != 'l') || item[1] < '1' || item[1] > '0' + PES_MAX_LEVELS ||
        item[2])
        return fail(err, orig, "bad level '%s' (L1..L4)", item);
    unsigned lv = (unsigned)(item[1] - '1');
    if (*defined & (1u << lv))
        return fail(err, orig, "level %s given twice", item);
    *defined |= 1u << lv;

    char *fields[5];
    int nf = 0;
    for (char *p = eq + 1;;) {
        if (nf == 5)
            return fail(err, orig, "too many fields%s", "");
        fields[nf++] = p;
        char *c = strchr(p, ':');
        if (!c)
            break;
        *c = 0;
        p = c + 1;
    }
    if (nf < 2)
        return fail(err, orig, "missing ways (want SIZE:WAYS)%s", "");

    struct pes_cache_config c = t->level[lv];
    if (lv >= t->n_levels) { /* a new level: generic costs */
        memset(&c, 0, sizeof c);
        c.line = 64;
        c.shared = lv >= 2;
        pes_model_generic_level(&c, lv + 1);
    }
    if (pes_model_parse_size(fields[0], &c.size) || c.size == 0)
        return fail(err, orig, "bad size '%s'", fields[0]);
    uint64_t u;
    if (!strcmp(fields[1], "full"))
        c.ways = 0;
    else if (pes_model_parse_u64(fields[1], &u) || u > UINT32_MAX)
        return fail(err, orig, "bad ways '%s'", fields[1]);
    else
        c.ways = (uint32_t)u;
    int have_line = 0, have_share = 0;
    for (int i = 2; i < nf; i++) {
        const char *f = fields[i];
        if (!strcmp(f, "shared") || !strcmp(f, "private")) {
            if (have_share)
                return fail(err, orig, "sharing given twice ('%s')", f);
            have_share = 1;
            c.shared = f[0] == 's';
        } else if (!have_line && !have_share && i == 2) {
            if (pes_model_parse_u64(f, &u) || u == 0 || u > UINT32_MAX)
                return fail(err, orig, "bad line '%s'", f);
            have_line = 1;
            c.line = (uint32_t)u;
        } else {
            return fail(err, orig, "unknown field '%s' (want LINE, shared or private)", f);
        }
    }
    char num[64];
    if (c.line & (c.line - 1)) {
        snprintf(num, sizeof num, "%u", c.line);
        return fail(err, orig, "line %s is not a power of two", num);
    }
    if (c.size % c.line) {
        snprintf(num, sizeof num, "%u", c.line);
        return fail(err, orig, "size is not a multiple of the line (%s)", num);
    }
    uint64_t blocks = c.size / c.line;
    if (c.ways > blocks || (c.ways && blocks % c.ways)) {
        snprintf(num, sizeof num, "%u ways do not divide %llu blocks", c.ways,
                 (unsigned long long)blocks);
        return fail(err, orig, "%s", num);
    }
    t->level[lv] = c;
    return 0;
}

int pes_machine_apply_cache_spec(struct pes_machine *m, const char *spec, struct pes_error *err)
{
    if (!m || !spec)
        return pes_model_fail(err, PES_ERR_ARG, "--cache: no spec");
    if (!*spec)
        return pes_model_fail(err, PES_ERR_ARG, "--cache: empty spec (want L1=32K:8,...)");
    if (strlen(spec) >= SPEC_MAX)
        return pes_model_fail(err, PES_ERR_ARG, "--cache: spec longer than %d characters",
                              SPEC_MAX - 1);
    char buf[SPEC_MAX];
    strcpy(buf, spec);
    struct pes_machine t = *m; /* all or nothing */
    unsigned defined = 0;
    for (char *p = buf;;) {
        char *comma = strchr(p, ',');
        if (comma)
            *comma = 0;
        if (!*p)
            return pes_model_fail(err, PES_ERR_ARG, "--cache: '%s': empty item", spec);
        if (apply_item(&t, &defined, p, err))
            return -1;
        if (!comma)
            break;
        p = comma + 1;
    }
    unsigned n = m->n_levels;
    for (unsigned i = 0; i < PES_MAX_LEVELS; i++)
        if (defined & (1u << i) && i + 1 > n)
            n = i + 1;
    for (unsigned i = m->n_levels; i < n; i++)
        if (!(defined & (1u << i)))
            return pes_model_fail(err, PES_ERR_ARG, "--cache: '%s': L%u added without L%u", spec, n,
                                  i + 1);
    if (n > t.n_levels) /* an added level has generic costs */
        t.validation = PES_MACHINE_UNVALIDATED;
    t.n_levels = n;
    memset(&t.error, 0,
           sizeof t.error); /* measured with the caches the file describes, not these */
    if (pes_machine_validate(&t, err))
        return -1;
    *m = t;
    return 0;
}
