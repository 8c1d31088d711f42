#ifndef GRAPHIR_GRAPHIR_H
#define GRAPHIR_GRAPHIR_H

/* libgraphir: one graph IR for neural-network models, with a reader and a
 * writer per format and a reference CPU runtime.  See libgraphir(3). */

#include "export.h"
#include "status.h"
#include "types.h"
#include "graph.h"
#include "model.h"
#include "runtime.h"
#include "edit.h"
#include "memio.h"
#include "check.h"

#define GIR_VERSION_MAJOR 0
#define GIR_VERSION_MINOR 1
#define GIR_VERSION_MICRO 0

#ifdef __cplusplus
extern "C" {
#endif

/* The library's version string ("0.1.0"). */
GIR_API const char *gir_version(void);

#ifdef __cplusplus
}
#endif
#endif
