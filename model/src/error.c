/* Error reporting for the model library: fill struct pes_error, never print. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

int pes_model_fail(struct pes_error *err, int code, const char *fmt, ...)
{
    if (!err)
        return -1;
    memset(err, 0, sizeof *err);
    err->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return -1;
}
