/* NNabla (.nnp / .nntxt) format plugin: declarations shared by its files. */
#ifndef GIR_FORMATS_NNABLA_H
#define GIR_FORMATS_NNABLA_H

#include "formats/format.h"
#include "io/pbtext.h"
#include "io/zip.h"
#include "proto/nnabla.pb-c.h"

/* Metadata keys (graph, value and node meta) carrying what the canonical
 * graph does not, so that .nnp -> .nnp is exact. */
#define NNB_META_NETWORK "nnabla.network"             /* graph: Network header (name, batch_size, repeat_info) as text */
#define NNB_META_NETWORK_INDEX "nnabla.network_index" /* graph: position of the network among the networks */
#define NNB_META_EXECUTOR "nnabla.executor"           /* graph: the chosen Executor as text */
#define NNB_META_EXECUTOR_INDEX "nnabla.executor_index"
#define NNB_META_REST "nnabla.rest"                   /* graph: every other message of the file as text */
#define NNB_META_PARAM_ORDER "nnabla.param_order"     /* graph: parameter names in file order */
#define NNB_META_EXTRA_PARAMS "nnabla.extra_params"   /* graph: parameters no variable of the graph uses */
#define NNB_META_EXTRA_NEED_GRAD "nnabla.extra_need_grad"
#define NNB_META_EXTRA_PREFIX "nnabla.extra_param:"   /* graph: one TENSOR per extra parameter */
#define NNB_META_SHAPE "nnabla.shape"                 /* value: declared shape when the canonical one differs */
#define NNB_META_NO_SHAPE "nnabla.no_shape"           /* value: the variable had no shape */
#define NNB_META_INITIALIZER "nnabla.initializer"     /* value: Initializer as text */
#define NNB_META_TRANSPOSED "nnabla.transposed"     /* value: an Affine weight seen as out x in */
#define NNB_META_NEED_GRAD "nnabla.need_grad"         /* value: parameter's need_grad */
#define NNB_META_REPEAT_ID "nnabla.repeat_id"         /* value/node: repeat_id list */
#define NNB_META_NAME "nnabla.name"                   /* node: function name when it differs from the node's */
#define NNB_META_NO_NAME "nnabla.no_name"             /* node: the function had no name */
#define NNB_META_TYPE "nnabla.type"                   /* node: function type when several map to one op */
#define NNB_META_NO_PARAM "nnabla.no_param"           /* node: the function had no parameter message */
#define NNB_META_INPLACE "nnabla.inplace"             /* node: inplace argument */
#define NNB_META_VAL "nnabla.val"                     /* node: the double argument of a *Scalar function */
#define NNB_META_IGNORE_BORDER "nnabla.ignore_border" /* node: pooling's ignore_border when either would do */
#define NNB_META_FUSED "nnabla.fused"               /* node: the Flatten an Affine implies */
#define NNB_META_CONTEXT "nnabla.context"             /* node: Context as text */
#define NNB_META_BROADCAST_X "nnabla.broadcast_x"     /* node: BroadcastTo's x (the shape giver) */
#define NNB_META_AXIS "nnabla.axis"                   /* node: BroadcastTo's axis as the file had it */
#define NNB_ATTR_UNKNOWN "nnabla.unknown_fields"      /* opaque node attr: Function fields of a newer schema, as text */

/* ---- parameters -------------------------------------------------------- */

/* One parameter found in a parameter file. */
typedef struct nnb_param {
    char *name;
    gir_dtype dtype;
    gir_shape shape;
    bool need_grad;
    gir_tensor *tensor; /* lazily loaded */
} nnb_param;

typedef struct nnb_params {
    nnb_param *items;
    size_t n, cap;
} nnb_params;

void nnb_params_free(nnb_params *p);
/* Index of the parameter named name, or -1. */
ptrdiff_t nnb_params_find(const nnb_params *p, const char *name);
/* Adds (or replaces, keeping the first position) the parameters of a
 * parameter.protobuf image, or (h5) a parameter.h5 image.  The image is
 * adopted (freed when the last tensor referring to it dies, also on
 * failure). */
gir_status nnb_params_add(nnb_params *p, void *image, size_t len, bool h5, gir_error *err);
/* The same for a member stored uncompressed at offset in the archive file:
 * read in place (mapped for the structure, pread for the data). */
gir_status nnb_params_add_stored(nnb_params *p, const char *archive, uint64_t offset, uint64_t size, bool h5,
                                gir_error *err);

/* Views a 2-D parameter tensor made by nnb_params_* as its transpose
 * (shape swapped; loading transposes, a block of rows at a time). */
gir_status nnb_transpose_view(gir_tensor *t, gir_error *err);
/* For a tensor viewed transposed: the loader of its untransposed bytes. */
typedef gir_status (*gir_tensor_loader_fn)(void *ctx, void *dst, uint64_t nbytes, gir_error *err);
bool nnb_transposed_source(gir_tensor *t, gir_tensor_loader_fn *load, void **ctx);

/* One parameter to write. */
typedef struct nnb_wparam {
    const char *name;
    gir_tensor *tensor; /* its data (a borrowed reference) */
    gir_shape shape;    /* shape to record (same element count as tensor) */
    bool need_grad;
    bool transpose;     /* write the 2-D tensor transposed */
} nnb_wparam;

/* Writes parameter.protobuf / parameter.h5 to path, streaming one tensor at
 * a time. */
gir_status nnb_write_protobuf(const char *path, const nnb_wparam *w, size_t n, gir_error *err);
gir_status nnb_write_h5(const char *path, const nnb_wparam *w, size_t n, gir_error *err);
/* parameter.protobuf streamed into the archive as member name (its size is
 * added up first, so it is written once, straight from the tensors). */
gir_status nnb_write_protobuf_member(gir_zipw *z, const char *name, const nnb_wparam *w, size_t n,
                                     gir_error *err);
/* parameter.h5 written from byte userblock of path on (see
 * gir_h5_write_inplace), with where each dataset's bytes lie and their
 * CRC, so the file can become a zip member in place. */
gir_status nnb_write_h5_inplace(const char *path, uint64_t userblock, const nnb_wparam *w, size_t n,
                                gir_zip_extent **extents, size_t *n_extents, gir_error *err);

/* ---- functions <-> canonical operators --------------------------------- */

/* State of one read: the graph being built from one network. */
typedef struct nnb_reader {
    gir_graph *g;
    const Nnabla__Network *net;
    gir_error *err;
    const uint8_t *bn_only; /* value index -> used only as a BatchNormalization parameter */
    const uint8_t *affine_only; /* value index -> used only as an Affine weight */
    const uint32_t *uses;       /* value index -> how many function inputs read it */
} nnb_reader;

/* Maps function f (index fi of the network) onto canonical nodes, or an
 * opaque node; in[] / out[] are the value indices of its inputs/outputs. */
gir_status nnb_map_function(nnb_reader *r, const Nnabla__Function *f, const char *node_name, const int32_t *in,
                           size_t n_in, const int32_t *out, size_t n_out, gir_node **first, gir_error *err);

/* ONNX's pooled length of one axis (floor or ceil mode). */
int64_t nnb_onnx_pool_len(int64_t L, int64_t k, int64_t s, int64_t pb, int64_t pe, bool ceil_mode);

/* The function -> op table: what the reader and writer run and
 * `graphconv ops --format nnabla` prints. */
extern const gir_op_map nnb_ops[];

/* ---- parameter messages as text (opaque nodes) -------------------------- */

/* The oneof field of Function holding parameter message f, or NULL. */
const ProtobufCFieldDescriptor *nnb_param_field(const Nnabla__Function *f);
/* The field of Function named name ("relu_param"), if it is a parameter. */
const ProtobufCFieldDescriptor *nnb_param_field_by_name(const char *name);
/* Sets Function f's parameter oneof to msg (adopted). */
void nnb_set_param(Nnabla__Function *f, const ProtobufCFieldDescriptor *fd, ProtobufCMessage *msg);

/* The parameter field of Function for function type `type`: the one whose
 * message is named "<type>Parameter" (ELU: elu_param), or NULL. */
const ProtobufCFieldDescriptor *nnb_param_field_of_type(const char *type);
/* A numeric field `key` of a parameter message (bool, integer, float or
 * double) as an integer *i and a number *f; false when msg has no such
 * field. */
bool nnb_field_get(const ProtobufCMessage *msg, const char *key, int64_t *i, double *f);
/* Sets numeric field `key` of msg from i (bool and integer fields) or f
 * (float and double fields); false when msg has no such field. */
bool nnb_field_set(ProtobufCMessage *msg, const char *key, int64_t i, double f);

/* Loop pseudo-functions that graphconv refuses. */
bool nnb_is_loop_function(const char *type);

/* Formats an int64 list "[1, 2]" into a static-size buffer. */
void nnb_fmt_ints(char *out, size_t n, const int64_t *v, size_t k);

gir_status nnb_read(const char *path, const gir_options *opts, gir_graph **out, gir_error *err);
gir_status nnb_write(const gir_graph *g, const char *path, const gir_options *opts, gir_error *err);
/* nnb_write's checks alone, every refusal into u (see gir_format.plan). */
gir_status nnb_plan(const gir_graph *g, const gir_options *opts, gir_unsupported *u, gir_error *err);

#endif
