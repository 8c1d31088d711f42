/* Private pieces of the library API in lib/api/ that gir_load and the
 * format readers share. */
#ifndef GIR_API_INTERNAL_H
#define GIR_API_INTERNAL_H

#include "core/ir.h"
#include "formats/format.h"
#include "graphir/check.h"
#include "graphir/edit.h"
#include "graphir/memio.h"
#include "graphir/model.h"

/* What gir_load does after a reader: the input-shape option (unless the
 * reader took it itself: reader_took_shapes) and batch-size, applied to
 * the graph and its shapes inferred again. */
gir_status gir_apply_shape_options(gir_graph *g, const gir_options *opts, bool reader_took_shapes, gir_error *err);

#endif
