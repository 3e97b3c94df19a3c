/* error.c — filling struct pes_error (libraries never print; callers do). */
#include <stdarg.h>
#include <stdio.h>

#include "trace_internal.h"

int pes_error_set(struct pes_error *err, int code, uint64_t offset, const char *fmt, ...)
{
    if (err) {
        err->code = code;
        err->offset = offset;
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
    }
    return -1;
}

void pes_err_clear(struct pes_error *err)
{
    if (err) {
        err->code = PES_OK;
        err->offset = 0;
        err->message[0] = '\0';
    }
}
