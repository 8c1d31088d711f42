/* The .params companions of the NNVM family and of TVM RelayViz programs:
 * the TVM tensor list (NNVM, TVM graph executor, Relay) and the MXNet
 * NDArray list in every array layout (legacy, V1, V2, V3), with the dtype
 * codes both use.  One codec for every format that carries these files
 * (lib/formats/nnvm, lib/formats/relayviz). */
#ifndef GIR_IO_PARAMS_H
#define GIR_IO_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/internal.h"
#include "core/ir.h"

/* ---- dtypes ------------------------------------------------------------- */

gir_dtype gir_mxnet_dtype(int64_t flag);           /* mshadow type flag */
int gir_mxnet_flag(gir_dtype t);                    /* -1 if none */
gir_dtype gir_dltype(const char *s);                /* "float32" ...; UNKNOWN otherwise */
const char *gir_dltype_name(gir_dtype t);           /* NULL if none */
/* Whether s has the form of a TVM type name (class, bits <= 128, lanes
 * <= 1024) even if graphconv has no dtype for it. */
bool gir_dltype_plausible(const char *s);
int gir_nnvm_dtype_code(gir_dtype t);               /* NNVM TypeFlag, -1 if none */

/* ---- params files ------------------------------------------------------- */

typedef enum gir_params_kind { GIR_PARAMS_TVM = 1, GIR_PARAMS_MXNET } gir_params_kind;

typedef struct gir_param {
    const char *name;    /* as stored ("arg:conv0_weight") */
    const char *key;     /* name without an arg:/aux: prefix */
    const char *prefix;  /* "arg", "aux" or "" */
    gir_dtype dtype;
    gir_shape shape;
    uint64_t offset;     /* of the data in the file */
    uint64_t nbytes;
    uint64_t record;     /* offset of the record (errors) */
    bool empty;          /* MXNet empty array (no shape, no data) */
} gir_param;

typedef struct gir_params {
    gir_arena arena;
    char *path;
    struct gir_params_src *src; /* shared by the lazy tensors */
    gir_params_kind kind;
    gir_param *items;
    size_t n;
} gir_params;

/* What the first bytes say: GIR_PARAMS_TVM / GIR_PARAMS_MXNET, 0 for neither;
 * *npz set for MXNet 2.x zip/npy files. */
int gir_params_sniff(const unsigned char *head, size_t n, bool *npz);
/* Reads the directory of a params file (names, dtypes, shapes, offsets);
 * never the data. */
gir_status gir_params_open(const char *path, gir_params *p, gir_error *err);
void gir_params_free(gir_params *p);
/* A lazy tensor reading item i's data from the file when loaded. */
gir_status gir_params_tensor(const gir_params *p, size_t i, gir_tensor **out, gir_error *err);

/* One tensor to write: the name stored and its data. */
typedef struct gir_param_out {
    const char *name;
    gir_tensor *t;
} gir_param_out;
/* Streams the tensors into f, one loaded at a time; progress (may be
 * NULL) is told each tensor's bytes once they are written. */
gir_status gir_params_write(gir_outfile *f, gir_params_kind kind, const gir_param_out *items, size_t n,
                            void (*progress)(uint64_t bytes), gir_error *err);

#endif
