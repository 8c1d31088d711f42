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

/* check_shapes.c: when inputs of a (the source) have no known dimension
 * and nothing is fed for them, finds the first shape (batch 1, channels
 * from a convolution reading the input, every other dimension one size
 * searched from 1 to 128, then common image sizes up to 512) for which
 * shape inference of both a and b succeeds with every output shape known:
 * *a2 and *b2 are copies with those shapes and *chosen says them ("data
 * [1,1,28,28]").  All NULL when no input needs a shape or none fits. */
gir_status gir_check_choose_shapes(const gir_graph *a, const gir_graph *b, const gir_check_options *o,
                                   gir_graph **a2, gir_graph **b2, char **chosen, gir_error *err);
#endif
