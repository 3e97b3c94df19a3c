/*
 * dwarf.c — the traced program's globals and statics, and its code addresses'
 * functions and lines, from the executable and libraries the trace's MAPS
 * block names (elfutils libdwfl for modules and symbols, libdw for DWARF
 * variables and types).
 */
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "objects_int.h"

struct objects_dwarf {
    Dwfl *dwfl;
    Dwarf **dw; /* [n_mods] each module's DWARF (NULL: none) */
    size_t n_mods;
};

static const char *base_name(const char *p)
{
    const char *s = p ? strrchr(p, '/') : NULL;
    return s ? s + 1 : p ? p : "";
}

static void warn_once(char *warn, size_t n, const char *fmt, const char *path, const char *why)
{
    if (warn && n && !warn[0])
        snprintf(warn, n, fmt, path, why);
}

/* The load bias of path mapped at start from file_offset: the PT_LOAD that
 * holds file_offset gives the link-time address of the mapping's start. */
static int load_bias(const char *path, uint64_t start, uint64_t file_offset, uint64_t *bias,
                     int *is_dyn, const char **why)
{
    /* a damaged trace may name a fifo or a device: never block on one */
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) {
        *why = "cannot be opened";
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        *why = "is not a regular file";
        return -1;
    }
    int rc = -1;
    *why = "is not an ELF file";
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    GElf_Ehdr eh;
    size_t phnum;
    if (elf && gelf_getehdr(elf, &eh) && elf_getphdrnum(elf, &phnum) == 0) {
        *is_dyn = eh.e_type == ET_DYN;
        *why = "has no loadable segment at the mapped offset";
        for (size_t i = 0; i < phnum; i++) {
            GElf_Phdr ph;
            if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
                continue;
            uint64_t align = ph.p_align > 1 ? ph.p_align : 1;
            uint64_t off0 = ph.p_offset & ~(align - 1); /* the mapping starts page-aligned */
            if (file_offset < off0 || file_offset >= ph.p_offset + ph.p_filesz)
                continue;
            uint64_t vaddr = ph.p_vaddr - (ph.p_offset - file_offset);
            *bias = start - vaddr;
            rc = 0;
            break;
        }
    }
    if (elf)
        elf_end(elf);
    close(fd);
    return rc;
}

/* The variable's run-time address, if its location is one address. */
static int var_address(Dwarf_Die *die, Dwarf_Addr bias, uint64_t *addr)
{
    Dwarf_Attribute la;
    Dwarf_Op *ops;
    size_t nops;
    if (!dwarf_attr(die, DW_AT_location, &la) || dwarf_getlocation(&la, &ops, &nops) != 0 ||
        nops != 1)
        return -1;
    Dwarf_Addr a;
    if (ops[0].atom == DW_OP_addr) {
        a = ops[0].number;
    } else if (ops[0].atom == DW_OP_addrx || ops[0].atom == DW_OP_GNU_addr_index) {
        Dwarf_Attribute r;
        if (dwarf_getlocation_attr(&la, &ops[0], &r) != 0 || dwarf_formaddr(&r, &a) != 0)
            return -1;
    } else {
        return -1; /* TLS, registers, expressions */
    }
    *addr = a + bias;
    return 0;
}

/* The declaring file; DWARF 5's file 0 (the unit's primary file, which
 * clang uses) is refused by dwarf_decl_file of elfutils 0.188. */
static const char *decl_file(Dwarf_Die *die)
{
    const char *f = dwarf_decl_file(die);
    Dwarf_Attribute a;
    Dwarf_Word idx;
    Dwarf_Die cu;
    Dwarf_Files *files;
    size_t n;
    if (f || !dwarf_attr_integrate(die, DW_AT_decl_file, &a) || dwarf_formudata(&a, &idx) != 0 ||
        !dwarf_diecu(die, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, &n) != 0 || idx >= n)
        return f;
    return dwarf_filesrc(files, idx, NULL, NULL);
}

static void add_variable(struct pes_objects *o, size_t mod, Dwarf_Die *die, Dwarf_Addr bias,
                         const char *func)
{
    uint64_t addr;
    if (var_address(die, bias, &addr) < 0)
        return;
    Dwarf_Attribute a;
    const char *name = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
    if (!name)
        return;
    Dwarf_Die type;
    uint64_t type_off = 0;
    Dwarf_Word size = 0;
    if (dwarf_attr_integrate(die, DW_AT_type, &a) && dwarf_formref_die(&a, &type)) {
        type_off = dwarf_dieoffset(&type);
        if (dwarf_aggregate_size(&type, &size) != 0)
            size = 0;
    }
    char full[512], where[320] = "";
    if (func)
        snprintf(full, sizeof full, "%s::%s", func, name);
    else
        snprintf(full, sizeof full, "%s", name);
    int line = 0;
    const char *file = decl_file(die);
    if (file && dwarf_decl_line(die, &line) == 0)
        snprintf(where, sizeof where, "%s:%d", base_name(file), line);
    uint32_t obj = objects_add(o, PES_OBJ_GLOBAL, full, where, "", size);
    if (!obj)
        return;
    struct objects_global g = {
        .start = addr, .size = size, .obj = obj, .module = (uint32_t)mod, .type_die = type_off};
    objects_add_global(o, &g);
}

/* Variables with a static address: at CU level, in namespaces, and inside
 * functions (their statics, named "function::name"). */
static void walk(struct pes_objects *o, size_t mod, Dwarf_Die *parent, Dwarf_Addr bias,
                 const char *func, int depth)
{
    Dwarf_Die child;
    if (depth > 64 || dwarf_child(parent, &child) != 0)
        return;
    do {
        int tag = dwarf_tag(&child);
        if (tag == DW_TAG_variable) {
            add_variable(o, mod, &child, bias, func);
        } else if (tag == DW_TAG_subprogram) {
            Dwarf_Attribute a;
            const char *name = dwarf_formstring(dwarf_attr_integrate(&child, DW_AT_name, &a));
            walk(o, mod, &child, bias, name ? name : func, depth + 1);
        } else if (tag == DW_TAG_lexical_block || tag == DW_TAG_namespace) {
            walk(o, mod, &child, bias, func, depth + 1);
        }
    } while (dwarf_siblingof(&child, &child) == 0);
}

/* ELF data symbols (STT_OBJECT) of a module: where there is no DWARF, and
 * for what DWARF does not describe (sort_globals drops the overlaps). */
static size_t add_symbols(struct pes_objects *o, Dwfl_Module *m, size_t mod)
{
    int n = dwfl_module_getsymtab(m);
    size_t added = 0;
    for (int i = 1; i < n; i++) {
        GElf_Sym sym;
        GElf_Addr addr;
        const char *name = dwfl_module_getsym_info(m, i, &sym, &addr, NULL, NULL, NULL);
        if (!name || !name[0] || GELF_ST_TYPE(sym.st_info) != STT_OBJECT ||
            sym.st_shndx == SHN_UNDEF || sym.st_size == 0)
            continue;
        uint32_t obj = objects_add(o, PES_OBJ_GLOBAL, name, "", "", sym.st_size);
        if (!obj)
            break;
        struct objects_global g = {
            .start = addr, .size = sym.st_size, .obj = obj, .module = (uint32_t)mod};
        if (objects_add_global(o, &g) == 0)
            added++;
    }
    return added;
}

/* Only what the files themselves hold: the standard search would also ask
 * a debuginfod server (network, and libcurl loaded: 0.3 s and 30 MB for
 * nothing on a machine without one); separate debug files are not searched
 * (docs/replay.md, "Data objects"). */
static int no_debuginfo(Dwfl_Module *m, void **user, const char *name, Dwarf_Addr base,
                        const char *file, const char *debuglink, GElf_Word crc,
                        char **debuginfo_file_name)
{
    (void)m, (void)user, (void)name, (void)base, (void)file, (void)debuglink, (void)crc,
        (void)debuginfo_file_name;
    return -1;
}

static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = no_debuginfo,
};

size_t objects_dwarf_load(struct pes_objects *o, const struct pes_mapping *m, size_t n, char *warn,
                          size_t warn_size)
{
    elf_version(EV_CURRENT);
    struct objects_dwarf *d = calloc(1, sizeof *d);
    if (!d || !(d->dw = calloc(n ? n : 1, sizeof *d->dw)) || !(d->dwfl = dwfl_begin(&callbacks))) {
        if (d)
            free(d->dw);
        free(d);
        return 0;
    }
    objects_set_dwarf(o, d);
    Dwfl_Module **mods = calloc(n ? n : 1, sizeof *mods);
    if (!mods)
        return 0;
    dwfl_report_begin(d->dwfl);
    for (size_t i = 0; i < n; i++) {
        const char *path = m[i].path;
        if (!path || path[0] != '/')
            continue; /* [vdso], anonymous */
        int seen = 0;
        for (size_t j = 0; j < i && !seen; j++)
            seen = m[j].path && strcmp(m[j].path, path) == 0;
        if (seen)
            continue;
        uint64_t bias = 0;
        int is_dyn = 0;
        const char *why = NULL;
        if (load_bias(path, m[i].start, m[i].file_offset, &bias, &is_dyn, &why) < 0) {
            warn_once(warn, warn_size,
                      "%s %s: its globals are not known (their accesses: object unknown)", path,
                      why);
            continue;
        }
        Dwfl_Module *mod =
            dwfl_report_elf(d->dwfl, base_name(path), path, -1, is_dyn ? bias : 0, false);
        if (!mod) {
            warn_once(warn, warn_size,
                      "%s: %s: its globals are not known (their accesses: object unknown)", path,
                      dwfl_errmsg(-1));
            continue;
        }
        mods[d->n_mods++] = mod;
    }
    dwfl_report_end(d->dwfl, NULL, NULL);
    size_t loaded = 0;
    for (size_t k = 0; k < d->n_mods; k++) {
        const char *path = NULL;
        dwfl_module_info(mods[k], NULL, NULL, NULL, NULL, NULL, &path, NULL);
        Dwarf_Addr bias = 0;
        Dwarf *dw = dwfl_module_getdwarf(mods[k], &bias);
        size_t vars = 0;
        if (dw) {
            d->dw[k] = dw;
            Dwarf_Die *cu = NULL;
            Dwarf_Addr cb;
            while ((cu = dwfl_module_nextcu(mods[k], cu, &cb)))
                walk(o, k, cu, cb, NULL, 0), vars++;
        }
        size_t syms = add_symbols(o, mods[k], k);
        if (!vars && !syms) {
            /* the executable matters; a library without symbols only loses its own globals */
            if (k == 0)
                warn_once(warn, warn_size,
                          "%s: %s: its globals are not known (their accesses: object unknown)",
                          path ? path : "?", "no symbols and no DWARF (stripped?)");
            continue;
        }
        loaded++;
    }
    free(mods);
    return loaded;
}

void objects_dwarf_free(struct objects_dwarf *d)
{
    if (!d)
        return;
    if (d->dwfl)
        dwfl_end(d->dwfl);
    free(d->dw);
    free(d);
}

/* The CU holding pc (module-relative through *bias). dwfl_module_addrdie
 * needs .debug_aranges, which clang does not emit: the CUs' ranges then. */
static Dwarf_Die *cu_of(Dwfl_Module *m, Dwarf_Addr pc, Dwarf_Addr *bias)
{
    Dwarf_Die *cu = dwfl_module_addrdie(m, pc, bias);
    if (cu)
        return cu;
    while ((cu = dwfl_module_nextcu(m, cu, bias)))
        if (dwarf_haspc(cu, pc - *bias) > 0)
            return cu;
    return NULL;
}

static const char *die_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
}

size_t objects_dwarf_frames(struct objects_dwarf *d, uint64_t ip, struct objects_frame *f,
                            size_t max)
{
    if (!d || !d->dwfl || ip == 0 || max == 0)
        return 0;
    Dwarf_Addr pc = ip - 1; /* a return address: the call is before it */
    Dwfl_Module *m = dwfl_addrmodule(d->dwfl, pc);
    if (!m)
        return 0;
    memset(f, 0, sizeof *f);
    const char *sym = dwfl_module_addrname(m, pc);
    if (sym)
        snprintf(f[0].func, sizeof f[0].func, "%s", sym);
    Dwarf_Addr bias = 0;
    Dwarf_Die *cu = cu_of(m, pc, &bias);
    if (!cu)
        return 1;
    Dwarf_Line *dl = dwarf_getsrc_die(cu, pc - bias);
    const char *src = dl ? dwarf_linesrc(dl, NULL, NULL) : NULL;
    int ln = 0;
    if (src && dwarf_lineno(dl, &ln) == 0 && ln > 0) {
        snprintf(f[0].file, sizeof f[0].file, "%s", base_name(src));
        f[0].line = ln;
    }
    /* inlined calls, innermost first: each names its function, and its
     * call_file:call_line is where the next frame out is */
    Dwarf_Die *scopes = NULL;
    int ns = dwarf_getscopes(cu, pc - bias, &scopes);
    Dwarf_Files *files = NULL;
    size_t n_files = 0, k = 0;
    if (dwarf_getsrcfiles(cu, &files, &n_files) != 0)
        n_files = 0;
    for (int i = 0; i < ns && k < max; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
            continue;
        const char *name = die_name(&scopes[i]);
        if (name)
            snprintf(f[k].func, sizeof f[k].func, "%s", name);
        if (tag == DW_TAG_subprogram || k + 1 == max)
            break;
        Dwarf_Word cf = 0, cl = 0;
        Dwarf_Attribute a;
        memset(&f[k + 1], 0, sizeof f[k + 1]);
        if (dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &a), &cf) == 0 &&
            cf < n_files &&
            dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &a), &cl) == 0) {
            const char *cfile = dwarf_filesrc(files, cf, NULL, NULL);
            snprintf(f[k + 1].file, sizeof f[k + 1].file, "%s", base_name(cfile));
            f[k + 1].line = (int)cl;
        }
        if (sym)
            snprintf(f[k + 1].func, sizeof f[k + 1].func, "%s", sym); /* until a scope names it */
        k++;
    }
    free(scopes);
    return k + 1;
}

/* ------------------------------------------------------------ describe */

static void append(char *buf, size_t n, size_t *len, const char *fmt, const char *s, uint64_t v)
{
    if (*len + 1 >= n)
        return;
    int w = s ? snprintf(buf + *len, n - *len, fmt, s) : snprintf(buf + *len, n - *len, fmt, v);
    if (w < 0)
        return;
    *len = (size_t)w >= n - *len ? n - 1 : *len + (size_t)w;
}

static int udata(Dwarf_Die *die, int name, Dwarf_Word *v)
{
    Dwarf_Attribute a;
    return dwarf_attr_integrate(die, name, &a) && dwarf_formudata(&a, v) == 0 ? 0 : -1;
}

static int type_of(Dwarf_Die *die, Dwarf_Die *type)
{
    Dwarf_Attribute a;
    return dwarf_attr_integrate(die, DW_AT_type, &a) && dwarf_formref_die(&a, type) ? 0 : -1;
}

void objects_dwarf_describe(struct objects_dwarf *d, const struct objects_global *g,
                            uint64_t offset, char *buf, size_t n, size_t *len)
{
    Dwarf_Die type;
    if (!d || g->module >= d->n_mods || !d->dw[g->module] ||
        !dwarf_offdie(d->dw[g->module], g->type_die, &type)) {
        if (offset)
            append(buf, n, len, "+%" PRIu64, NULL, offset);
        return;
    }
    for (int depth = 0; depth < 32; depth++) {
        Dwarf_Die peeled;
        if (dwarf_peel_type(&type, &peeled) != 0)
            break;
        type = peeled;
        int tag = dwarf_tag(&type);
        if (tag == DW_TAG_structure_type || tag == DW_TAG_class_type || tag == DW_TAG_union_type) {
            Dwarf_Die mem;
            int found = 0;
            if (dwarf_child(&type, &mem) == 0)
                do {
                    if (dwarf_tag(&mem) != DW_TAG_member || dwarf_hasattr(&mem, DW_AT_external))
                        continue;
                    Dwarf_Word at = 0, size = 0;
                    Dwarf_Die mt;
                    udata(&mem, DW_AT_data_member_location, &at); /* absent: 0 (unions) */
                    if (type_of(&mem, &mt) != 0 || dwarf_aggregate_size(&mt, &size) != 0 ||
                        size == 0)
                        continue;
                    if (offset < at || offset - at >= size)
                        continue;
                    const char *name = dwarf_diename(&mem);
                    append(buf, n, len, name ? ".%s" : "%s", name ? name : ".?", 0);
                    offset -= at;
                    type = mt;
                    found = 1;
                    break;
                } while (dwarf_siblingof(&mem, &mem) == 0);
            if (!found)
                break; /* padding */
            continue;
        }
        if (tag == DW_TAG_array_type) {
            Dwarf_Die et;
            Dwarf_Word esize = 0;
            if (type_of(&type, &et) != 0 || dwarf_aggregate_size(&et, &esize) != 0 || esize == 0)
                break;
            Dwarf_Word counts[16];
            int dims = 0;
            Dwarf_Die sub;
            if (dwarf_child(&type, &sub) == 0)
                do {
                    if (dwarf_tag(&sub) != DW_TAG_subrange_type || dims == 16)
                        continue;
                    Dwarf_Word c = 0, ub;
                    if (udata(&sub, DW_AT_count, &c) != 0 &&
                        udata(&sub, DW_AT_upper_bound, &ub) == 0)
                        c = ub + 1;
                    counts[dims++] =
                        c; /* 0: unknown (a flexible array: only the first dimension) */
                } while (dwarf_siblingof(&sub, &sub) == 0);
            if (dims == 0)
                counts[dims++] = 0;
            for (int i = 0; i < dims; i++) {
                /* the binary is named by an untrusted trace: dimensions whose
                 * product overflows name no element */
                Dwarf_Word stride = esize;
                int bad = stride == 0;
                for (int j = i + 1; j < dims && !bad; j++)
                    bad = __builtin_mul_overflow(stride, counts[j] ? counts[j] : 1, &stride) ||
                          stride == 0;
                if (bad)
                    goto rest;
                uint64_t idx = offset / stride;
                append(buf, n, len, "[%" PRIu64 "]", NULL, idx);
                offset -= idx * stride;
            }
            type = et;
            continue;
        }
        break; /* a scalar: the offset is inside it */
    }
rest:
    /* padding, or a byte inside a scalar: the offset from what was named */
    if (offset)
        append(buf, n, len, "+%" PRIu64, NULL, offset);
}
