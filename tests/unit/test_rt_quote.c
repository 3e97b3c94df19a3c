/* Command-line quoting (cmdline_quote.c): hand-written cases, and a POSIX
 * shell as the oracle that the quoted line splits back into the arguments. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "core/core.h"

static void check(int argc, char *const argv[], const char *want)
{
    char *q = pes_cmdline_quote(argc, argv);
    assert_non_null(q);
    assert_string_equal(q, want);
    free(q);
}

static void known_cases(void **state)
{
    (void)state;
    char *plain[] = {"./app", "-n", "10", "a=b", "x,y:z@1%"};
    check(5, plain, "./app -n 10 a=b x,y:z@1%");
    char *space[] = {"./app", "a b"};
    check(2, space, "./app 'a b'");
    char *quote[] = {"it's"};
    check(1, quote, "'it'\\''s'");
    char *empty[] = {"a", ""};
    check(2, empty, "a ''");
    char *dollar[] = {"$HOME", "*", "\"q\""};
    check(3, dollar, "'$HOME' '*' '\"q\"'");
    check(0, plain, "");
}

/* The shell splits the quoted line back into exactly the original arguments. */
static void shell_round_trip(void **state)
{
    (void)state;
    char *args[] = {"prog", "a b",         "it's",      "\"dq\"",    "",  "$HOME",
                    "`x`",  "back\\slash", "tab\there", "new\nline", "'", "''",
                    "*?[",  "~user",       "--",        "#c",        "é"};
    int n = (int)(sizeof args / sizeof args[0]);
    char *q = pes_cmdline_quote(n, args);
    assert_non_null(q);
    char *script;
    assert_true(asprintf(&script, "for a in %s; do printf '%%s\\0' \"$a\"; done", q) > 0);
    /* "for a in WORDS" would glob; the quoting must prevent it, set -f would hide a bug */
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fds[1], 1);
        close(fds[0]);
        execl("/bin/sh", "sh", "-c", script, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    char out[4096];
    size_t len = 0;
    ssize_t r;
    while ((r = read(fds[0], out + len, sizeof out - len)) > 0)
        len += (size_t)r;
    close(fds[0]);
    int st;
    waitpid(pid, &st, 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    size_t off = 0;
    for (int i = 0; i < n; i++) {
        size_t l = strlen(args[i]);
        assert_true(off + l < len + 1);
        assert_memory_equal(out + off, args[i], l);
        assert_int_equal(out[off + l], '\0');
        off += l + 1;
    }
    assert_int_equal(off, len);
    free(script);
    free(q);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(known_cases),
        cmocka_unit_test(shell_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
