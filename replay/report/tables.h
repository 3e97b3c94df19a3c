/*
 * tables.h — a JSON report (report.h's tree as jansson values) seen as
 * tables, for the writers that work on any report without knowing its
 * layout: --csv-dir (one CSV file per table) and --diff (rows of two
 * reports matched by key).
 *
 * A table is an array whose elements are objects (its rows). A row's
 * columns are its scalars, nested objects' scalars ("invalidations.false")
 * and arrays of scalars ("hits[0]"); an array of objects inside a row is a
 * table of its own, whose rows belong to that row. The key that identifies
 * a row across reports, the column that ranks them and the unit of a column
 * are declared in tables.c, one line each.
 */
#ifndef PES_REPLAY_TABLES_H
#define PES_REPLAY_TABLES_H

#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

/* Whether a is a table: an array with at least one object element. */
int pes_table_is(const json_t *a);

/* A table's name is its path of keys without row selectors,
 * "configs.simulation.sites". */
typedef void (*pes_table_column_fn)(void *ctx, const char *column, const json_t *value);
typedef void (*pes_table_nested_fn)(void *ctx, const char *name, const json_t *table);
/* Calls column for each scalar column of row in order (names relative to
 * the row) and nested for each table inside it (names relative too); either
 * may be NULL. */
void pes_table_columns(const json_t *row, pes_table_column_fn column, pes_table_nested_fn nested,
                       void *ctx);

/* The key columns of a row of table `name` (what identifies it across
 * reports): the declared columns that the row has, e.g. {"file","line",
 * "column","function","site"} for a site, {"cores","mimicked"} for a
 * configuration. Writes up to max names to cols; returns how many. */
size_t pes_table_key_columns(const char *name, const json_t *row, const char **cols, size_t max);
/* The row's key as a label, "false_sharing.c:32:53 main.omp_outlined site=31";
 * malloc'd ("" if the row has no key column; NULL without memory). */
char *pes_table_key_label(const char *name, const json_t *row);
/* The columns (joined by '+', summed) whose change ranks the rows of table
 * name in a diff, "invalidations.true+invalidations.false"; NULL: none declared. */
const char *pes_table_rank(const char *name);
/* The unit of a column of table name, "count", "bytes", "s", "ratio", or
 * NULL when it has none (labels, ids, line numbers) or is not declared. */
const char *pes_table_unit(const char *name, const char *column);

/* A CSV field (RFC 4180: quoted when it holds a comma, quote, CR or LF;
 * quotes doubled); a JSON value as the CSV cell (strings unquoted, null
 * empty, numbers as JSON prints them). */
void pes_csv_field(FILE *out, const char *s);
void pes_csv_value(FILE *out, const json_t *v);

/* --csv-dir DIR: every table of the report j, one file DIR/NAME.csv each
 * (rows of nested tables carry their parent rows' key columns first), and
 * DIR/summary.csv with the scalars outside tables (path, value, unit).
 * The header row names each column with its unit, "accesses [count]".
 * 0, or -1 with msg (size n) filled. */
int pes_report_write_csv_dir(const json_t *j, const char *dir, char *msg, size_t n);

#endif
