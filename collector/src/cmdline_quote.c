/* cmdline_quote.c — a command line as one string a POSIX shell splits back into
 * the same arguments (header "command" field, PES_COMMAND). */
#include <stdlib.h>
#include <string.h>

#include "config.h"

static int needs_quotes(const char *s)
{
    if (!*s)
        return 1;
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              strchr("_-./=:,+@%^", c)))
            return 1;
    }
    return 0;
}

char *pes_cmdline_quote(int argc, char *const argv[])
{
    size_t len = 1;
    for (int i = 0; i < argc; i++)
        len += strlen(argv[i]) * 4 + 3; /* worst case: every char is ' → '\'' */
    char *out = malloc(len), *p = out;
    if (!out)
        return NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (i)
            *p++ = ' ';
        if (!needs_quotes(a)) {
            size_t n = strlen(a);
            memcpy(p, a, n);
            p += n;
            continue;
        }
        *p++ = '\'';
        for (; *a; a++) {
            if (*a == '\'') {
                memcpy(p, "'\\''", 4);
                p += 4;
            } else {
                *p++ = *a;
            }
        }
        *p++ = '\'';
    }
    *p = '\0';
    return out;
}
