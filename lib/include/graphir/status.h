#ifndef GRAPHIR_STATUS_H
#define GRAPHIR_STATUS_H

/* Status codes and error objects.
 *
 * Every fallible function of libgraphir returns a gir_status and takes a
 * gir_error * as its last argument (which may be NULL). On failure the error
 * says what went wrong (code, message), where (file, location such as a JSON
 * pointer or line:column, node name).  The innermost caller that knows a
 * detail sets it; outer callers only fill what is still empty.
 */

#include <stddef.h>
#include "export.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum gir_status {
#define GIR_CODE(e, name, exitc, desc) GIR_##e,
#include "codes.def"
#undef GIR_CODE
    GIR_STATUS_COUNT_
} gir_status;

typedef struct gir_error {
    gir_status code;  /* GIR_OK when no error has been recorded */
    char *message;    /* why: a sentence without trailing period, or NULL */
    char *file;       /* which file, or NULL */
    char *location;   /* JSON pointer, line:column, byte offset..., or NULL */
    char *node;       /* node (or value) name, or NULL */
} gir_error;

/* Static initialiser. */
#define GIR_ERROR_INIT { GIR_OK, NULL, NULL, NULL, NULL }
/* Sets err to GIR_OK with no strings (what GIR_ERROR_INIT does statically). */
GIR_API void gir_error_init(gir_error *err);
/* Frees the strings and resets to GIR_OK. */
GIR_API void gir_error_clear(gir_error *err);

/* Stable lower-case name of a code ("syntax", "unsupported-op", ...). */
GIR_API const char *gir_status_name(gir_status code);
/* One-sentence description from the registry. */
GIR_API const char *gir_status_describe(gir_status code);
/* The graphconv exit status for a code (0..5). */
GIR_API int gir_status_exit_code(gir_status code);
/* Looks a code up by its stable name; returns GIR_STATUS_COUNT_ if none. */
GIR_API gir_status gir_status_from_name(const char *name);

/* "FILE: LOCATION: node 'NODE': MESSAGE [name]" into a malloc'd string the
 * caller frees; NULL only when memory is exhausted. */
GIR_API char *gir_error_format(const gir_error *err);

#ifdef __cplusplus
}
#endif
#endif
