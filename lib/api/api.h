/* Private pieces of the library API in lib/api/ that gir_load and the
 * format readers share. */
#ifndef GIR_API_INTERNAL_H
#define GIR_API_INTERNAL_H

#include "core/ir.h"
#include "graphir/check.h"
#include "graphir/edit.h"
#include "graphir/memio.h"
#include "graphir/model.h"

/* One NAME:D0,D1,... of an input-shape option. */
typedef struct gir_input_shape {
    char *name;
    gir_shape shape;
} gir_input_shape;

/* Parses "NAME:D0,..[;NAME:..]" into a malloc'd array (free it with
 * gir_input_shapes_free). */
gir_status gir_input_shapes_parse(const char *spec, gir_input_shape **out, size_t *n, gir_error *err);
void gir_input_shapes_free(gir_input_shape *v, size_t n);

/* What gir_load does after a reader: the input-shape option (unless the
 * reader took it itself: reader_took_shapes) and batch-size, applied to
 * the graph and its shapes inferred again. */
gir_status gir_apply_shape_options(gir_graph *g, const gir_options *opts, bool reader_took_shapes, gir_error *err);

#endif
