/* ONNX format plugin: shared internal declarations.
 *
 * The reader maps a ModelProto of opset 1..18 onto the canonical operators
 * (ONNX opset 13 semantics, constant operands as attributes); the writer
 * maps them back at opset 6..18.  Everything a same-format round trip needs
 * and the IR cannot carry rides in "onnx.*" metadata. */
#ifndef GIR_ONNX_H
#define GIR_ONNX_H

#include "formats/format.h"
#include "proto/onnx.pb-c.h"

/* Opsets of the default domain the reader accepts and the writer emits. */
#define ONNX_READ_OPSET_MAX 18
#define ONNX_WRITE_OPSET_MIN 6
#define ONNX_WRITE_OPSET_MAX 18
#define ONNX_DEFAULT_OPSET 13

/* Metadata keys (graph, value and node "meta" lists). */
#define ONNX_META_IR_VERSION "onnx.ir_version"
#define ONNX_META_OPSET_DOMAINS "onnx.opset_domains"
#define ONNX_META_OPSET_VERSIONS "onnx.opset_versions"
#define ONNX_META_PRODUCER_NAME "onnx.producer_name"
#define ONNX_META_PRODUCER_VERSION "onnx.producer_version"
#define ONNX_META_DOMAIN "onnx.domain"
#define ONNX_META_MODEL_VERSION "onnx.model_version"
#define ONNX_META_DOC "onnx.doc_string"
#define ONNX_META_GRAPH_DOC "onnx.graph_doc_string"
#define ONNX_META_PROPS_KEYS "onnx.metadata_keys"
#define ONNX_META_PROPS_VALUES "onnx.metadata_values"
#define ONNX_META_EXTRA "onnx.extra" /* base64 of a message with the fields the IR cannot hold */
#define ONNX_META_TYPE "onnx.type"   /* value: base64 TypeProto kept verbatim */
#define ONNX_META_INPUT_INDEX "onnx.input_index" /* weight also listed as graph input, at this index */
#define ONNX_META_CONSTANT "onnx.constant"       /* value came from a Constant node of this name */
#define ONNX_META_CONSTANT_ATTR "onnx.constant_attr" /* ...through this attribute (value, value_ints, ...) */
#define ONNX_META_UNNAMED "onnx.unnamed"             /* node had no name in the file */
#define ONNX_META_OPERAND "onnx.operand."            /* + attribute: name of the constant input it came from */
#define ONNX_META_OPSET "onnx.opset"                 /* opaque node: opset version of its domain */

/* ---- a string -> int map (names.c) ---------------------------------- */

typedef struct onnx_map {
    const char **keys; /* borrowed */
    int32_t *vals;
    size_t n, cap;
} onnx_map;

int32_t onnx_map_get(const onnx_map *m, const char *key); /* -1 when absent */
bool onnx_map_has(const onnx_map *m, const char *key);
bool onnx_map_put(onnx_map *m, const char *key, int32_t v); /* false: out of memory */
void onnx_map_free(onnx_map *m);

/* ---- data types and tensors (tensor.c) ------------------------------ */

/* ONNX TensorProto.DataType <-> IR dtype; GIR_DT_UNKNOWN / 0 when none. */
gir_dtype onnx_dtype_to_gir(int32_t t);
int32_t onnx_dtype_from_gir(gir_dtype t);
const char *onnx_dtype_name(int32_t t);

/* Where the tensors of a model come from. */
typedef struct onnx_source {
    char *dir;      /* directory of the model (malloc) */
    char *dir_real; /* its realpath (malloc) */
} onnx_source;

/* Makes a tensor from a TensorProto.  raw_data and typed arrays that
 * already have the IR layout are taken over from the message (its pointers
 * are cleared); external data becomes a lazy loader reading from the side
 * file, after checking that the file lies inside the model's directory and
 * is long enough. */
gir_status onnx_tensor_read(Onnx__TensorProto *tp, const onnx_source *src, gir_tensor **out, gir_error *err);

/* Reads a file holding one serialized TensorProto (the input_N.pb and
 * output_N.pb files of ONNX's node tests).  External data resolves relative
 * to the file's directory.  *name (malloc'd) receives the tensor's name
 * ("" when it has none) when name is not NULL. */
gir_status onnx_read_tensor_file(const char *path, gir_tensor **out, char **name, gir_error *err);

/* Base64 for metadata blobs; encode returns NULL when out of memory, decode
 * false when s is not base64 (or out of memory). */
char *onnx_base64_encode(const uint8_t *p, size_t n);
bool onnx_base64_decode(const char *s, uint8_t **out, size_t *n);

/* ---- operator mapping (read_ops.c) --------------------------------------- */

/* Kinds of constant operands (ONNX inputs that are canonical attributes). */
enum {
    ONNX_OPD_INTS = 1, /* int64/int32 list -> INTS */
    ONNX_OPD_SCALAR,   /* scalar of the data input's type -> FLOAT */
    ONNX_OPD_FLOATS,   /* float list -> FLOATS (written as float32) */
    ONNX_OPD_BOOL,     /* bool scalar */
};

typedef struct onnx_operand {
    const char *attr; /* canonical attribute */
    uint8_t pos;      /* ONNX input position */
    uint8_t since;    /* opset from which it is an input */
    uint8_t kind;
    const char *old;  /* attribute name before `since` (NULL: none) */
} onnx_operand;

typedef struct onnx_attr_since {
    const char *attr;
    uint8_t since;
} onnx_attr_since;

/* One canonical operator's ONNX history. */
typedef struct onnx_rule {
    gir_op op;
    uint8_t since;              /* first opset of the default domain with it */
    onnx_operand operands[4];   /* terminated by attr NULL */
    onnx_attr_since newer[6];   /* attributes added after `since` */
} onnx_rule;

const onnx_rule *onnx_rule_for(gir_op op);

/* What the converters need from the reader. */
typedef struct onnx_read_ctx onnx_read_ctx;
struct onnx_read_ctx {
    gir_graph *g;
    void *self;
    /* A constant tensor for an ONNX value name (initializer, Constant output
     * or a foldable chain), borrowed; NULL when the value is not constant.
     * Fails only when out of memory. */
    gir_status (*constant)(onnx_read_ctx *c, const char *name, gir_tensor **t, gir_error *err);
    /* Known dtype and shape of an ONNX value name (rank -1: unknown). */
    void (*shape_of)(onnx_read_ctx *c, const char *name, gir_dtype *dt, gir_shape *shape);
    /* Replaces the data of a constant used by this one node only (and not a
     * graph output) with t, which must hold the same bytes; returns false
     * when the constant is shared (the caller then makes a new one). */
    bool (*replace_constant)(onnx_read_ctx *c, const char *name, gir_tensor *t);
    /* A fresh value name that clashes with nothing in the file or graph. */
    const char *(*fresh_name)(onnx_read_ctx *c, const char *base);
};

#define ONNX_MAX_IO 4096
#define ONNX_MAX_NEW_CONSTS 2

/* A node converted to its canonical form. */
typedef struct onnx_conv {
    gir_op op;          /* GIR_OP_OPAQUE: keep the node verbatim */
    const char *why;    /* why a known operator stays opaque (static text) */
    gir_attrs attrs;    /* canonical attributes (strings in the graph's arena) */
    gir_attrs meta;     /* node metadata (operand names) */
    size_t n_in, n_out;
    /* IR input i comes from ONNX input in[i] (>= 0), is omitted (-1), or is
     * new constant -2 - in[i]. */
    int32_t in[ONNX_MAX_IO];
    gir_tensor *new_const[ONNX_MAX_NEW_CONSTS]; /* owned */
    const char *new_const_name[ONNX_MAX_NEW_CONSTS];
    size_t n_new;
} onnx_conv;

/* Converts a node of the default domain at opset version.  Fails only on
 * malformed input (wrong attribute types, operator missing from that
 * opset); a node graphconv cannot make canonical comes back as
 * GIR_OP_OPAQUE with a reason. */
gir_status onnx_convert_node(onnx_read_ctx *c, const Onnx__NodeProto *np, int64_t version, onnx_conv *cv,
                             gir_error *err);
void onnx_conv_clear(onnx_conv *cv);
/* Whether ONNX input i of op_type at version is a constant operand that
 * becomes an attribute. */
bool onnx_is_operand_input(const char *op_type, int64_t version, size_t i);
/* The canonical operator an ONNX op_type of the default domain maps to
 * (GIR_OP_OPAQUE: none), and whether a canonical operator has an ONNX
 * form; both from onnx_ops. */
gir_op onnx_canonical_op(const char *op_type);
bool onnx_op_has_form(gir_op op);

/* ONNX attribute -> IR attribute, typed verbatim.  GIR_E_UNSUPPORTED for
 * types the IR has no form for (graphs, sparse tensors, type protos,
 * lists of tensors, tensors of strings); GIR_E_SCHEMA for a malformed one. */
gir_status onnx_attr_to_ir(gir_graph *g, gir_attrs *dst, const char *name, Onnx__AttributeProto *a,
                           gir_error *err);
/* The attribute's type, inferred from the filled field for old files that
 * leave `type` unset; 0 when it has no value at all. */
int onnx_attr_type(const Onnx__AttributeProto *a);

extern const gir_op_map onnx_ops[];

/* ---- write (write.c) / read (read.c) ---------------------------- */

gir_status onnx_read(const char *path, const gir_options *opts, gir_graph **out, gir_error *err);
gir_status onnx_write(const gir_graph *g, const char *path, const gir_options *opts, gir_error *err);
gir_status onnx_plan(const gir_graph *g, const gir_options *opts, gir_unsupported *u, gir_error *err);

/* The ModelProto at data with every graph initializer whose raw_data has at
 * least min_bytes turned into external data at its own offset of the model
 * file named location (read_strip.c): *out (malloc'd) is the smaller
 * message, or NULL when nothing was changed (also when the bytes are not a
 * well-formed message: the unpacker reports that). */
gir_status onnx_strip_raw_data(const uint8_t *data, size_t len, const char *location, size_t min_bytes,
                               char **out, size_t *out_len, gir_error *err);

#endif
