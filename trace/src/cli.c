/* cli.c — a command's option table (pes/cli.h): getopt_long from the rows,
 * --help from the rows, one wording of usage errors. */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pes/cli.h"
#include "pes/settings.h"
#include "pes/trace.h"

#define MAX_OPTS 64

/* A SETTING row's setting (NULL for other rows, or an unknown name). */
static const struct pes_setting *setting_of(const struct pes_cli_opt *o)
{
    return o->kind == PES_CLI_SETTING ? pes_settings_find(o->setting) : NULL;
}

static const char *name_of(const struct pes_cli_opt *o)
{
    const struct pes_setting *s = setting_of(o);
    return s ? s->flag : o->name;
}

static char short_of(const struct pes_cli_opt *o)
{
    const struct pes_setting *s = setting_of(o);
    return s ? s->short_flag : o->short_name;
}

static const char *arg_of(const struct pes_cli_opt *o)
{
    const struct pes_setting *s = setting_of(o);
    return s ? s->arg : o->arg;
}

static void say(const struct pes_cli *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(const struct pes_cli *c, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    c->message(line);
}

/* ------------------------------------------------------------ --help */

static void print_help_lines(FILE *out, const char *help, int column)
{
    for (const char *h = help ? help : ""; *h;) {
        const char *nl = strchr(h, '\n');
        size_t n = nl ? (size_t)(nl - h) : strlen(h);
        fprintf(out, "%.*s\n", (int)n, h);
        h += n + (nl != NULL);
        if (nl)
            fprintf(out, "%*s", column, "");
    }
}

void pes_cli_usage(const struct pes_cli *c, FILE *out)
{
    int any_short = 0;
    for (size_t i = 0; i < c->n_opts; i++)
        any_short |= short_of(&c->opts[i]) != 0;
    fputs(c->usage_head, out);
    for (size_t i = 0; i < c->n_opts; i++) {
        const struct pes_cli_opt *o = &c->opts[i];
        const struct pes_setting *s = setting_of(o);
        const char *arg = arg_of(o);
        char label[96], help[512];
        if (short_of(o))
            snprintf(label, sizeof label, "-%c, --%s%s%s", short_of(o), name_of(o), arg ? " " : "",
                     arg ? arg : "");
        else /* long-only names line up with those after "-x, " */
            snprintf(label, sizeof label, "%s--%s%s%s", any_short ? "    " : "", name_of(o),
                     arg ? " " : "", arg ? arg : "");
        int width = c->help_column - 2;
        if ((int)strlen(label) >= width) /* too long: the help starts below */
            fprintf(out, "  %s\n%*s", label, c->help_column, "");
        else
            fprintf(out, "  %-*s", width, label);
        /* a setting's help, or the row's own with a setting's numbers in it */
        const struct pes_setting *numbers = pes_settings_find(o->setting);
        if (numbers)
            pes_setting_help(numbers, s ? NULL : o->help, help, sizeof help);
        if (o->help_fn)
            o->help_fn(help, sizeof help);
        print_help_lines(out, numbers || o->help_fn ? help : o->help, c->help_column);
    }
    if (c->usage_tail)
        fputs(c->usage_tail, out);
}

/* ------------------------------------------------------------ parsing */

/* Stores value into the row's field; -1 after saying what was expected. */
static int apply(const struct pes_cli *c, const struct pes_cli_opt *o, const char *value,
                 void *opts)
{
    void *f = (char *)opts + o->field;
    const char *flag = name_of(o);
    uint64_t v;
    switch (o->kind) {
    case PES_CLI_SWITCH:
        *(int *)f = 1;
        return 0;
    case PES_CLI_PATH:
        if (!*value) {
            say(c, "--%s: expected a file name, got ''", flag);
            return -1;
        }
        /* fall through */
    case PES_CLI_STRING:
        *(const char **)f = value;
        return 0;
    case PES_CLI_U64:
        if (pes_parse_u64(value, 10, &v) < 0 || v < o->min || v > o->max)
            break;
        *(uint64_t *)f = v;
        return 0;
    case PES_CLI_CHOICE:
        for (int i = 0; o->names[i]; i++)
            if (strcmp(value, o->names[i]) == 0) {
                *(int *)f = o->values ? o->values[i] : i;
                return 0;
            }
        break;
    case PES_CLI_FN: {
        int rc = o->parse(value, opts);
        if (rc == -1)
            break;
        return rc < 0 ? -1 : 0;
    }
    case PES_CLI_SETTING: {
        const struct pes_setting *s = setting_of(o);
        struct pes_error err;
        if (o->parse && o->parse(value, opts) < 0)
            return -1;
        if (s->type == PES_SETTING_BOOL && !s->arg) { /* a switch: away from the default */
            *(int *)((char *)f + s->field) = !s->def;
            return 0;
        }
        if (pes_setting_parse(s, PES_SETTING_FROM_FLAG, value, f, &err) < 0) {
            c->message(err.message);
            return -1;
        }
        return 0;
    }
    default:
        return 0;
    }
    say(c, "--%s: expected %s, got '%s'", flag, o->expected, value);
    return -1;
}

int pes_cli_parse(const struct pes_cli *c, int argc, char **argv, void *opts, unsigned *seen)
{
    struct option longopts[MAX_OPTS + 1];
    char shorts[2 * MAX_OPTS + 3];
    size_t ns = 0;
    if (c->n_opts > MAX_OPTS) {
        say(c, "too many options in the table");
        return -1;
    }
    if (c->stop_at_operand)
        shorts[ns++] = '+'; /* options end at the program name: its own flags are not ours */
    shorts[ns++] = ':';     /* a missing value is reported as such */
    for (size_t i = 0; i < c->n_opts; i++) {
        const struct pes_cli_opt *o = &c->opts[i];
        if (o->kind == PES_CLI_SETTING && !setting_of(o)) {
            say(c, "no setting '%s' (pes/settings.h)", o->setting);
            return -1;
        }
        longopts[i] = (struct option){name_of(o), arg_of(o) ? required_argument : no_argument, NULL,
                                      256 + (int)i};
        if (short_of(o)) {
            shorts[ns++] = short_of(o);
            if (arg_of(o))
                shorts[ns++] = ':';
        }
    }
    shorts[ns] = '\0';
    longopts[c->n_opts] = (struct option){NULL, 0, NULL, 0};
    opterr = 0;
    optind = 0; /* glibc: a full restart, whatever an earlier parse left */
    int ch;
    while ((ch = getopt_long(argc, argv, shorts, longopts, NULL)) != -1) {
        size_t i = c->n_opts;
        if (ch >= 256 && ch < 256 + (int)c->n_opts)
            i = (size_t)(ch - 256);
        for (size_t k = 0;
             i == c->n_opts && ch > 0 && ch < 256 && ch != ':' && ch != '?' && k < c->n_opts; k++)
            if (short_of(&c->opts[k]) == ch)
                i = k;
        if (i == c->n_opts) {
            if (ch == ':')
                say(c, "%s: expected a value (see --help)", argv[optind - 1]);
            else if (optopt)
                say(c, "-%c: unknown option (see --help)", optopt);
            else
                say(c, "%s: unknown option (see --help)", argv[optind - 1]);
            return -1;
        }
        const struct pes_cli_opt *o = &c->opts[i];
        if (seen)
            seen[i]++;
        if (o->kind == PES_CLI_HELP) {
            pes_cli_usage(c, stdout);
            return 0;
        }
        if (o->kind == PES_CLI_VERSION) {
            printf("%s %s\n", c->prog, c->version);
            return 0;
        }
        if (apply(c, o, optarg, opts) < 0)
            return -1;
    }
    return optind;
}
