/* Helpers shared by the cmocka tests. */
#ifndef GIR_TESTUTIL_H
#define GIR_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "core/ir.h"
#include "graphir/model.h"

/* Path of a file under the shared fixtures (GIR_SHARED_DIR); malloc'd. */
char *tu_shared(const char *rel);
/* Path of a file under testdata/ (GIR_TESTDATA_DIR); malloc'd. */
char *tu_testdata(const char *rel);
/* A fresh temporary directory (malloc'd path) and its recursive removal. */
char *tu_tempdir(void);
void tu_rmtree(const char *dir);
/* Joins dir and name (malloc'd). */
char *tu_join(const char *dir, const char *name);
/* Reads a whole file (NULL if it does not exist); *len set. */
char *tu_slurp(const char *path, size_t *len);
bool tu_write(const char *path, const void *data, size_t len);
bool tu_files_equal(const char *a, const char *b);
/* Number of entries in a directory (excluding . and ..). */
int tu_count_entries(const char *dir);
/* The entries of dir (no dot files) whose names start with prefix and end
 * with suffix (NULL: any), sorted by name: a malloc'd array of *n malloc'd
 * strings (free with tu_free_list); NULL when dir cannot be opened. */
char **tu_list_files(const char *dir, const char *prefix, const char *suffix, size_t *n);
void tu_free_list(char **names, size_t n);
/* The entries of dir (no dot files) sorted by name into names (malloc'd
 * strings, at most max: more fails the test); 0 when dir cannot be opened. */
size_t tu_list_dir(const char *dir, char **names, size_t max);

/* Reads path as format (NULL: by probing) with options o (NULL: none),
 * asserting that it succeeds. */
gir_graph *tu_load(const char *path, const char *format, const gir_options *o);
/* Writes g to path as format with options o (NULL: none), asserting that
 * it succeeds. */
void tu_save(const gir_graph *g, const char *path, const char *format, const gir_options *o);
/* Options from key, value pairs ending at a NULL key:
 * tu_options("force", "1", "params", "h5", NULL); asserts each is taken.
 * Free with gir_options_free. */
gir_options *tu_options(const char *key, ...);
/* The same from an array key, value, key, value, ... ending at a NULL key
 * (kv NULL: no options). */
gir_options *tu_options_kv(const char *const *kv);

/* How many nodes of g have operator op (public name, "Conv"); how many
 * are opaque. */
size_t tu_count_op(const gir_graph *g, const char *op);
size_t tu_count_opaque(const gir_graph *g);
/* The index of the last node of g with operator op, -1 when none. */
int32_t tu_find_op(const gir_graph *g, const char *op);

/* Asserts a and b are the same graph (gir_graph_diff): structure,
 * attributes and weights, and value names and format metadata when asked;
 * a failure names them by what and lists up to 20 differences. */
void tu_assert_same(const gir_graph *a, const gir_graph *b, bool names, bool meta, const char *what);

/* Asserts st == GIR_OK, printing the error otherwise. */
#define TU_OK(st, err) tu_assert_ok((st), (err), __FILE__, __LINE__)
void tu_assert_ok(gir_status st, gir_error *err, const char *file, int line);
/* Asserts the failure code and that the formatted error contains each of
 * the given substrings (NULL-terminated list). */
#define TU_FAILS(st, err, code, ...) tu_assert_fails((st), (err), (code), __FILE__, __LINE__, __VA_ARGS__, NULL)
void tu_assert_fails(gir_status st, gir_error *err, gir_status code, const char *file, int line, ...);

/* cmocka group setup/teardown: one temporary directory, tu_dir, shared by
 * the tests of a program and removed at the end. */
extern char *tu_dir;
int tu_setup_tempdir(void **state);
int tu_teardown_tempdir(void **state);
/* A path in tu_dir (malloc'd). */
char *tu_tmp(const char *name);
/* Whether a program is on PATH (for tests that skip without it). */
bool tu_have_program(const char *name);

#endif
