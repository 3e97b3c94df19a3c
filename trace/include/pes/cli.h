/*
 * pes/cli.h — a command's options as one table: one row per flag gives its
 * name, value, help and where the value goes; getopt_long parsing, --help
 * and the errors ("--limit: expected a non-negative integer, got 'x'") are
 * made from the rows. A row can also stand for a collector setting
 * (pes/settings.h): its flag, value, bounds and help then come from there.
 * pes-collect, pes-dump and pes-calibrate use it (pes-replay's own table in
 * replay/cmd/options.c is of the same shape). Part of libpes_trace so that
 * every command shares it; not installed.
 */
#ifndef PES_CLI_H
#define PES_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum pes_cli_kind {
    PES_CLI_SWITCH, /* int field = 1 */
    PES_CLI_STRING, /* const char * field = the value */
    PES_CLI_PATH,   /* the same, not empty: "a file name" */
    PES_CLI_U64,    /* uint64_t field, decimal in [min, max] */
    PES_CLI_CHOICE, /* int field = values[i] (values NULL: i) for the value names[i] */
    PES_CLI_FN,     /* parse(value, opts): 0; -1: bad, say `expected`; -2: bad, said already */
    PES_CLI_SETTING, /* the pes/settings.h row `setting`, into the struct pes_collect_settings at field */
    PES_CLI_HELP,    /* print --help, stop */
    PES_CLI_VERSION, /* print "PROG VERSION", stop */
};

struct pes_cli_opt {
    const char *name; /* --name (SETTING: the setting's flag) */
    char short_name;
    const char *arg;                         /* value name in --help; NULL: a switch */
    const char *help;                        /* lines after the first are indented under it */
    void (*help_fn)(char *buf, size_t size); /* instead of help: made when printed */
    enum pes_cli_kind kind;
    size_t field; /* offsetof(the command's options struct, ...) */
    uint64_t min, max;
    const char *const *names; /* CHOICE: NULL-terminated */
    const int *values;
    int (*parse)(const char *value, void *opts);
    const char *expected; /* what a bad value should have been */
    const char *setting;  /* SETTING: the row's name ("time_interval"); other
                                       kinds: whose {default}, {min}, {max} the help shows */
    unsigned flags;       /* the command's own */
};

struct pes_cli {
    const char *prog; /* "pes-dump" */
    const char *version;
    const char *usage_head; /* before the options in --help */
    const char *usage_tail; /* after them */
    const struct pes_cli_opt *opts;
    size_t n_opts;
    int help_column;     /* where help text starts; a longer label puts it below */
    int stop_at_operand; /* options end at the first operand (a program's own flags) */
    /* one error line, without the "PROG: " the callee adds */
    void (*message)(const char *line);
};

/* Parses argv into opts. Returns the index of the first operand; 0 when
 * --help or --version was printed (the command exits 0); -1 after a usage
 * error was said through c->message. seen (NULL, or n_opts zeroed counters)
 * counts each row's uses, in order of the rows. */
int pes_cli_parse(const struct pes_cli *c, int argc, char **argv, void *opts, unsigned *seen);

/* --help: usage_head, one line per row (label, then help in one column), usage_tail. */
void pes_cli_usage(const struct pes_cli *c, FILE *out);

#endif /* PES_CLI_H */
