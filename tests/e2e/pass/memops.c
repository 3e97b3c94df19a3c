/*
 * memops.c — memcpy/memmove (COPY_SRC + COPY_DST records) and memset
 * (SET_DST) with a run-time length (size 0, length in extra) and a
 * struct copy of constant length (size = length).
 */
#include <string.h>
#include "pass_check.h"

enum { L_CPY = 18, L_MOVE = 19, L_SET = 20, L_STRUCT = 25 };

char src[4096], dst[4096];
struct big {
    char bytes[256];
} bs, bd;

__attribute__((noinline)) void ops(size_t n, size_t m, int reps) {
    for (int r = 0; r < reps; r++) {
        memcpy(dst, src, n); _Static_assert(__LINE__ == L_CPY, "");
        memmove(dst + 1, dst, m); _Static_assert(__LINE__ == L_MOVE, "");
        memset(src + 8, r, n - 8); _Static_assert(__LINE__ == L_SET, "");
    }
}

__attribute__((noinline)) void copy_struct(void) {
    bd = bs; _Static_assert(__LINE__ == L_STRUCT, "");
}

NOINSTR static int run_checks(size_t n, size_t m, int reps) {
    struct agg s = query(.function = "ops", .line = L_CPY, .kind = PES_KIND_COPY_SRC);
    struct agg d = query(.function = "ops", .line = L_CPY, .kind = PES_KIND_COPY_DST);
    CHECK_EQ("memcpy src records", s.n, reps);
    CHECK_EQ("memcpy dst records", d.n, reps);
    CHECK_EQ("memcpy src bytes", s.bytes, reps * n);
    CHECK_EQ("memcpy src range", s.addr_max_end - s.addr_min, n);
    CHECK_EQ("memcpy src addr", s.addr_min, (uintptr_t)src);
    CHECK_EQ("memcpy dst addr", d.addr_min, (uintptr_t)dst);
    struct agg ms = query(.function = "ops", .line = L_MOVE, .kind = PES_KIND_COPY_SRC);
    struct agg md = query(.function = "ops", .line = L_MOVE, .kind = PES_KIND_COPY_DST);
    CHECK_EQ("memmove src", ms.addr_min, (uintptr_t)dst);
    CHECK_EQ("memmove dst", md.addr_min, (uintptr_t)dst + 1);
    CHECK_EQ("memmove bytes", md.bytes, reps * m);
    struct agg st = query(.function = "ops", .line = L_SET, .kind = PES_KIND_SET_DST);
    CHECK_EQ("memset records", st.n, reps);
    CHECK_EQ("memset range", st.addr_max_end - st.addr_min, n - 8);
    CHECK_EQ("memset addr", st.addr_min, (uintptr_t)src + 8);
    CHECK_EQ("memset bytes", st.bytes, reps * (n - 8));
    struct agg cs = query(.function = "copy_struct", .line = L_STRUCT, .kind = PES_KIND_COPY_SRC);
    struct agg cd = query(.function = "copy_struct", .line = L_STRUCT, .kind = PES_KIND_COPY_DST);
    CHECK_EQ("struct copy src", cs.n, 1);
    CHECK_EQ("struct copy bytes", cs.bytes, sizeof bs);
    CHECK_EQ("struct copy src addr", cs.addr_min, (uintptr_t)&bs);
    CHECK_EQ("struct copy dst addr", cd.addr_min, (uintptr_t)&bd);
    CHECK_EQ("dst[1] after memmove", dst[1], 'a');
    return check_done();
}

/* Site sizes as the pass wrote them: 0 for run-time lengths, 256 for the struct. */
struct size_ctx { unsigned line; unsigned size; int seen; };
NOINSTR static void size_visit(const struct mock_rec *r, void *p) {
    struct size_ctx *c = p;
    if (r->site && r->site->line == c->line) {
        c->size = r->site->size;
        c->seen = 1;
    }
}
NOINSTR static int site_size(unsigned line) {
    struct size_ctx c = {line, 0, 0};
    mock_foreach(size_visit, &c);
    return c.seen ? (int)c.size : -1;
}

int main(int argc, char **argv) {
    (void)argv;
    memset(src, 'a', sizeof src);
    size_t n = 1000 + argc, m = 100 + argc;
    ops(n, m, 3);
    copy_struct();
    CHECK_EQ("memcpy site size (run-time length)", site_size(L_CPY), 0);
    CHECK_EQ("struct copy site size", site_size(L_STRUCT), sizeof bs);
    return run_checks(n, m, 3);
}
