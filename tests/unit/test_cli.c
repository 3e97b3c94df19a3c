/* Option tables (trace/src/cli.c): every kind of row parsed and refused with
 * the wording the commands use, and --help laid out from the rows, checked
 * against text written out by hand. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "pes/cli.h"
#include "pes/settings.h"

struct opts {
    int flag;
    const char *name, *file;
    uint64_t count;
    int color, parsed;
    struct pes_collect_settings set;
};

static char said[512];
static int n_said;

static void message(const char *line)
{
    snprintf(said, sizeof said, "%s", line);
    n_said++;
}

static int parse_even(const char *v, void *opts)
{
    if (strcmp(v, "odd") == 0)
        return -1; /* the table's `expected` is said */
    if (strcmp(v, "loud") == 0) {
        message("said by the parser");
        return -2;
    }
    ((struct opts *)opts)->parsed = 1;
    return 0;
}

static void dynamic_help(char *buf, size_t size)
{
    snprintf(buf, size, "made at print time");
}

static const char *const colors[] = {"red", "green", NULL};
static const int color_values[] = {10, 20};

#define FIELD(f) offsetof(struct opts, f)
static const struct pes_cli_opt rows[] = {
    {.name = "flag",
     .short_name = 'f',
     .kind = PES_CLI_SWITCH,
     .field = FIELD(flag),
     .help = "a switch"},
    {.name = "name",
     .arg = "S",
     .kind = PES_CLI_STRING,
     .field = FIELD(name),
     .help = "any string"},
    {.name = "file",
     .arg = "FILE",
     .kind = PES_CLI_PATH,
     .field = FIELD(file),
     .help = "a file\nover two lines"},
    {.name = "count",
     .arg = "N",
     .kind = PES_CLI_U64,
     .field = FIELD(count),
     .min = 2,
     .max = 9,
     .expected = "an integer 2..9",
     .help = "bounded"},
    {.name = "color",
     .arg = "C",
     .kind = PES_CLI_CHOICE,
     .field = FIELD(color),
     .names = colors,
     .values = color_values,
     .expected = "red or green",
     .help_fn = dynamic_help},
    {.name = "even",
     .arg = "V",
     .kind = PES_CLI_FN,
     .parse = parse_even,
     .expected = "not odd",
     .setting = "debug_registers",
     .help = "numbers of a setting: {min}..{max}"},
    {.kind = PES_CLI_SETTING, .setting = "zstd_level", .field = FIELD(set)},
    {.kind = PES_CLI_SETTING, .setting = "heap", .field = FIELD(set)},
    {.name = "a-rather-long-option",
     .arg = "VALUE",
     .kind = PES_CLI_STRING,
     .field = FIELD(name),
     .help = "its help starts below"},
    {.name = "help", .short_name = 'h', .kind = PES_CLI_HELP, .help = "this text"},
};
#undef FIELD
enum { N = sizeof rows / sizeof rows[0] };

static const struct pes_cli cli = {
    .prog = "prog",
    .version = "1.0",
    .usage_head = "Usage: prog [options] ARG\n\n",
    .usage_tail = "\nThe end.\n",
    .opts = rows,
    .n_opts = N,
    .help_column = 24,
    .message = message,
};

/* argv from a list (getopt permutes it, so it must be writable). */
static int run(struct opts *o, unsigned *seen, const struct pes_cli *c, int argc, const char **args)
{
    static char store[16][64];
    static char *argv[17];
    for (int i = 0; i < argc; i++) {
        snprintf(store[i], sizeof store[i], "%s", args[i]);
        argv[i] = store[i];
    }
    argv[argc] = NULL;
    memset(o, 0, sizeof *o);
    pes_settings_defaults(&o->set);
    said[0] = '\0';
    n_said = 0;
    return pes_cli_parse(c, argc, argv, o, seen);
}

#define RUN(o, seen, ...)                                                                          \
    run(o, seen, &cli, (int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *)),        \
        (const char *[]){__VA_ARGS__})

static void every_kind_parses(void **state)
{
    (void)state;
    struct opts o;
    unsigned seen[N] = {0};
    int first =
        RUN(&o, seen, "prog", "-f", "--name=x y", "--file", "f.txt", "--count", "9", "--color",
            "green", "--even", "2", "--zstd-level", "22", "--no-heap", "ARG", "--flag");
    assert_int_equal(n_said, 0);
    assert_int_equal(first, 15); /* getopt moved the operand last */
    assert_int_equal(o.flag, 1);
    assert_string_equal(o.name, "x y");
    assert_string_equal(o.file, "f.txt");
    assert_int_equal(o.count, 9);
    assert_int_equal(o.color, 20);
    assert_int_equal(o.parsed, 1);
    assert_int_equal(o.set.zstd_level, 22);
    assert_int_equal(o.set.heap, 0); /* a bool setting's switch: away from its default */
    assert_int_equal(seen[0], 2);    /* -f and --flag */
    assert_int_equal(seen[1], 1);
    assert_int_equal(seen[9], 0);
}

static void expect_refused(const char *message_text, int argc, const char **args)
{
    struct opts o;
    assert_int_equal(run(&o, NULL, &cli, argc, args), -1);
    assert_int_equal(n_said, 1);
    assert_string_equal(said, message_text);
}
#define REFUSED(text, ...)                                                                         \
    expect_refused(text, (int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(const char *)),      \
                   (const char *[]){__VA_ARGS__})

static void bad_values_are_named(void **state)
{
    (void)state;
    REFUSED("--count: expected an integer 2..9, got '1'", "prog", "--count", "1");
    REFUSED("--count: expected an integer 2..9, got '10'", "prog", "--count=10");
    REFUSED("--count: expected an integer 2..9, got '3x'", "prog", "--count", "3x");
    REFUSED("--color: expected red or green, got 'blue'", "prog", "--color", "blue");
    REFUSED("--file: expected a file name, got ''", "prog", "--file", "");
    REFUSED("--even: expected not odd, got 'odd'", "prog", "--even", "odd");
    REFUSED("said by the parser", "prog", "--even", "loud");
    REFUSED("--zstd-level: expected an integer from 1 to 22, got '0'", "prog", "--zstd-level", "0");
    REFUSED("--count: expected a value (see --help)", "prog", "--count");
    REFUSED("--bogus: unknown option (see --help)", "prog", "--bogus");
    REFUSED("-x: unknown option (see --help)", "prog", "-x");
    /* a row naming a setting that does not exist is the table's own error */
    const struct pes_cli_opt broken[] = {{.kind = PES_CLI_SETTING, .setting = "no_such"}};
    struct pes_cli c = cli;
    c.opts = broken;
    c.n_opts = 1;
    struct opts o;
    assert_int_equal(run(&o, NULL, &c, 1, (const char *[]){"prog"}), -1);
    assert_string_equal(said, "no setting 'no_such' (pes/settings.h)");
}

static void operands_end_the_options(void **state)
{
    (void)state;
    struct pes_cli c = cli;
    c.stop_at_operand = 1;
    struct opts o;
    /* a program's own flags are its own */
    assert_int_equal(run(&o, NULL, &c, 4, (const char *[]){"prog", "-f", "./app", "--flag"}), 2);
    assert_int_equal(o.flag, 1);
    assert_int_equal(run(&o, NULL, &c, 4, (const char *[]){"prog", "--", "-f", "x"}), 2);
    assert_int_equal(o.flag, 0);
}

static void help_from_the_rows(void **state)
{
    (void)state;
    char buf[2048] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    assert_non_null(f);
    pes_cli_usage(&cli, f);
    fclose(f);
    assert_string_equal(
        buf, "Usage: prog [options] ARG\n"
             "\n"
             "  -f, --flag            a switch\n"
             "      --name S          any string\n"
             "      --file FILE       a file\n"
             "                        over two lines\n"
             "      --count N         bounded\n"
             "      --color C         made at print time\n"
             "      --even V          numbers of a setting: 1..4\n"
             "      --zstd-level N    compression level (default 1, 1..22)\n"
             "      --no-heap         do not record heap allocations (their accesses: object\n"
             "                        unknown; saves ~0.25 us per malloc/free in sampled traces)\n"
             "      --a-rather-long-option VALUE\n"
             "                        its help starts below\n"
             "  -h, --help            this text\n"
             "\n"
             "The end.\n");
    /* --help stops the parse without an error (and prints this to stdout) */
    struct opts o;
    assert_int_equal(run(&o, NULL, &cli, 3, (const char *[]){"prog", "-h", "--bogus"}), 0);
    assert_int_equal(n_said, 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_kind_parses),
        cmocka_unit_test(bad_values_are_named),
        cmocka_unit_test(operands_end_the_options),
        cmocka_unit_test(help_from_the_rows),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
