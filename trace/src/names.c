/* names.c — human-readable names for the format's enums (static strings). */
#include "trace_internal.h"

const char *pes_access_kind_name(uint8_t kind)
{
    static const char *const names[] = {
        [PES_KIND_LOAD] = "load",         [PES_KIND_STORE] = "store",
        [PES_KIND_RMW] = "rmw",           [PES_KIND_CMPXCHG] = "cmpxchg",
        [PES_KIND_COPY_SRC] = "copy_src", [PES_KIND_COPY_DST] = "copy_dst",
        [PES_KIND_SET_DST] = "set_dst",   [PES_KIND_GATHER] = "gather",
        [PES_KIND_SCATTER] = "scatter",   [PES_KIND_CALL] = "call",
    };
    if (kind < sizeof names / sizeof names[0] && names[kind])
        return names[kind];
    return "unknown";
}

const char *pes_event_kind_name(uint8_t kind)
{
    static const char *const names[] = {
        [PES_EV_SAMPLE] = "sample",
        [PES_EV_REUSE] = "reuse",
        [PES_EV_INVALIDATION] = "inval",
        [PES_EV_COMM] = "comm",
        [PES_EV_LOST] = "lost",
        [PES_EV_THROTTLE] = "throttle",
        [PES_EV_DROPPED] = "dropped",
        [PES_EV_TOTALS] = "totals",
        [PES_EV_WATCH_EXPIRED] = "watch_expired",
        [PES_EV_ALLOC] = "alloc",
        [PES_EV_FREE] = "free",
        [PES_EV_PERIOD] = "period",
    };
    if (kind < sizeof names / sizeof names[0] && names[kind])
        return names[kind];
    return "unknown";
}

const char *pes_block_type_name(uint32_t type)
{
    static const char *const names[] = {
        [PES_BLOCK_HEADER] = "HEADER", [PES_BLOCK_MODULE] = "MODULE",
        [PES_BLOCK_THREAD] = "THREAD", [PES_BLOCK_ACCESS] = "ACCESS",
        [PES_BLOCK_EVENTS] = "EVENTS", [PES_BLOCK_MAPS] = "MAPS",
        [PES_BLOCK_FOOTER] = "FOOTER", [PES_BLOCK_ALLOC_SITES] = "ALLOC_SITES",
    };
    if (type < sizeof names / sizeof names[0] && names[type])
        return names[type];
    return "UNKNOWN";
}

const char *pes_alloc_kind_name(uint32_t kind)
{
    static const char *const names[] = {
        [PES_ALLOC_MALLOC] = "malloc",   [PES_ALLOC_CALLOC] = "calloc",
        [PES_ALLOC_REALLOC] = "realloc", [PES_ALLOC_ALIGNED] = "aligned",
        [PES_ALLOC_NEW] = "new",         [PES_ALLOC_CALLSTACK] = "callstack",
    };
    if (kind < sizeof names / sizeof names[0] && names[kind])
        return names[kind];
    return "unknown";
}

const char *pes_op_class_name(int op)
{
    static const char *const names[PES_OP_COUNT] = {
        [PES_OP_INT_ADD] = "int_add", [PES_OP_INT_MUL] = "int_mul", [PES_OP_INT_DIV] = "int_div",
        [PES_OP_FP_ADD] = "fp_add",   [PES_OP_FP_MUL] = "fp_mul",   [PES_OP_FP_DIV] = "fp_div",
        [PES_OP_LOAD] = "load",       [PES_OP_STORE] = "store",     [PES_OP_BRANCH] = "branch",
        [PES_OP_CALL] = "call",       [PES_OP_OTHER] = "other",
    };
    if (op >= 0 && op < PES_OP_COUNT)
        return names[op];
    return "unknown";
}
