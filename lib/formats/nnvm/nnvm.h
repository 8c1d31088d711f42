/* The NNVM family: NNVM graph JSON, MXNet symbol JSON (every generation) and
 * the TVM graph-executor JSON share one reader and one writer; their
 * .params companions (TVM list, MXNet NDArray list) are read and written
 * by lib/io/params.c.
 * Internal to lib/formats/nnvm. */
#ifndef GIR_NNVM_H
#define GIR_NNVM_H

#include "formats/format.h"
#include "io/json.h"
#include "io/params.h"

typedef enum nn_flavour { NN_NNVM = 0, NN_MXNET, NN_TVM, NN_FLAVOURS } nn_flavour;

/* n zeroed elements of size bytes (at least one) from arena a: the reader's
 * and the writer's per-node and per-value tables, freed with the arena.
 * NULL when memory is short or the size overflows. */
static inline void *nn_arena_array(gir_arena *a, size_t n, size_t size)
{
    uint64_t bytes;
    if (!gir_mul_u64(n ? n : 1, size, &bytes) || bytes > SIZE_MAX)
        return NULL;
    return gir_arena_alloc(a, (size_t)bytes);
}

/* "nnvm", "mxnet", "tvm": the format names, also the meta-key prefixes and
 * the opaque_format of nodes kept verbatim. */
const char *nn_flavour_name(nn_flavour f);

/* The meta keys "<flavour>.<what>" the reader sets and the writers read
 * back (a table: they are looked up for every node). */
typedef enum nn_mkey {
    NN_MK_OP = 0,        /* the file's operator name */
    NN_MK_NAME,          /* the file's node name, when ours had to differ */
    NN_MK_NUM_OUTPUTS,   /* outputs node_row_ptr gave beyond the op's own */
    NN_MK_VERSIONS,      /* entry versions of the inputs */
    NN_MK_ATTRS,         /* the attributes as written: key, value, ... */
    NN_MK_GRAPH_ATTRS,   /* graph meta: the graph attributes' keys, in file order */
    NN_MK_HEAD_VERSIONS, /* graph meta: entry versions of the heads */
    NN_MK_COUNT
} nn_mkey;
const char *nn_meta_key(nn_flavour f, nn_mkey k);

/* ---- the file's graph, as parsed and checked (read_raw.c) -------------------- */

typedef struct nn_entry {
    uint32_t node, index, version;
} nn_entry;

typedef struct nn_kv {
    const char *key, *value;
    const char *obj;       /* "attrs", "attr" or "param": where it was */
    const gir_json *where; /* the value in the DOM (errors) */
} nn_kv;

typedef struct nn_node {
    const char *op;   /* "null" for a variable */
    bool var;         /* op is "null" */
    const char *name;
    nn_kv *attrs;     /* param, attr and attrs merged, file order */
    size_t n_attrs;
    nn_entry *in;
    size_t n_in;
    uint32_t max_index;   /* highest output index any entry takes (+1), 0 if none */
    int64_t row_outputs;  /* output count from node_row_ptr, -1 if unknown */
    const gir_json *json; /* the node object */
} nn_node;

typedef struct nn_gattr {
    const char *key;
    const char *type;        /* "int", "list_int", "list_shape", ... */
    const gir_json *payload;
    const gir_json *where;   /* the [type, payload] array */
} nn_gattr;

/* Limits both readers (read_raw.c, read_raw_fast.c) hold files to. */
#define NN_MAX_NODES ((size_t)INT32_MAX / 4) /* nodes in a graph */
#define NN_MAX_PORTS 65535u                  /* inputs of a node; an entry's output index is below it */

typedef struct nn_raw {
    gir_arena arena;
    const gir_json_doc *doc; /* read_raw_fast.c: only "attrs" was parsed into it */
    nn_node *nodes_heap;     /* read_raw_fast.c: the nodes, on the heap (freed with raw) */
    nn_node *nodes;
    size_t n_nodes;
    nn_entry *heads;
    size_t n_heads;
    const gir_json *heads_json;
    int64_t *row_ptr; /* n_nodes + 1 values when has_row_ptr */
    bool has_row_ptr;
    bool row_ptr_ok;  /* well formed: starts at 0, non-decreasing */
    nn_gattr *gattrs;
    size_t n_gattrs;
    size_t *order;    /* a topological order of the nodes (file order if sorted) */
    bool legacy;      /* pre-NNVM MXNet layout: param keys, 2-element entries */
    bool relay_layout;/* node_row_ptr after heads (Relay's writer) */
    bool has_tvm_op;
} nn_raw;

/* The keys a node object may have, and those of the graph object: one
 * list for both readers (read_raw.c, read_raw_fast.c).  nn_*_key_of matches the
 * n bytes at k (no NUL needed); NN_*_UNKNOWN for any other key. */
typedef enum nn_node_key {
    NN_NK_OP,
    NN_NK_NAME,
    NN_NK_INPUTS,
    NN_NK_ATTRS,
    NN_NK_ATTR,
    NN_NK_PARAM,
    NN_NK_CONTROL_DEPS,
    NN_NK_SUBGRAPHS,
    NN_NK_BACKWARD_SOURCE_ID,
    NN_NK_UNKNOWN
} nn_node_key;
nn_node_key nn_node_key_of(const char *k, size_t n);
typedef enum nn_graph_key {
    NN_GK_NODES,
    NN_GK_ARG_NODES,
    NN_GK_HEADS,
    NN_GK_NODE_ROW_PTR,
    NN_GK_ATTRS,
    NN_GK_UNKNOWN
} nn_graph_key;
nn_graph_key nn_graph_key_of(const char *k, size_t n);

/* Parses and checks the structure (keys, types, entry ranges, cycles). */
gir_status nn_raw_parse(const gir_json_doc *doc, nn_raw *raw, gir_error *err);
/* The same, read straight from doc's text (opened, not parsed), for
 * ordinary files: true when it read the file; false when it gave up at
 * anything it is not sure of (any error nn_raw_parse or the JSON parser
 * would report, escapes that yield NUL bytes, unusual layouts); then raw
 * is freed and doc must be parsed, for nn_raw_parse.  Values that errors
 * point at (nn_kv.where, nn_node.json, heads_json) are NULL; the graph
 * attributes are a DOM in doc, with true offsets.  jo: the JSON options
 * the DOM would be parsed with. */
bool nn_raw_parse_fast(gir_json_doc *doc, const gir_json_options *jo, nn_raw *raw);
void nn_raw_free(nn_raw *raw);
/* Shared by both (read_raw.c): the graph attributes from the "attrs" object,
 * and the checks once every node, head and attribute is read (variables'
 * outputs, the topological order). */
gir_status nn_raw_gattrs(nn_raw *raw, const gir_json *attrs, gir_error *err);
gir_status nn_raw_finish(nn_raw *raw, gir_error *err);
/* With raw->row_ptr holding its n_nodes + 1 values: whether it is well
 * formed (row_ptr_ok: starts at 0, never decreases) and, if so, each
 * node's row_outputs. */
void nn_raw_row_ptr_check(nn_raw *raw);
const nn_gattr *nn_raw_gattr(const nn_raw *raw, const char *key);
const char *nn_node_attr(const nn_node *n, const char *key);

/* A node's or variable's attributes as its file wrote them ride in one
 * meta entry "<flavour>.attrs": STRINGS key, value, key, value, ... in
 * file order.  The value of key there, or NULL. */
const char *nn_meta_attr(const gir_attrs *meta, const char *list_key, const char *key);
/* The pairs list (n = number of strings, even), or NULL. */
const char *const *nn_meta_pairs(const gir_attrs *meta, const char *list_key, size_t *n);

/* ---- attribute text (text.c) ------------------------------------------ */

#define NN_MAX_TUPLE 16
/* Integer: "3", "-1", "3L". */
bool nn_parse_int(const char *s, int64_t *v);
/* Float: C/Python notation, "inf", "-inf", "nan" refused. */
bool nn_parse_float(const char *s, double *v);
/* Bool: True/False/true/false/1/0 (case-insensitive). */
bool nn_parse_bool(const char *s, bool *v);
/* Int tuple: "(3, 3)", "(3,3)", "[3, 3]", "(3,)", "3", "()", "[1L, 1L]". */
bool nn_parse_tuple(const char *s, int64_t *v, size_t *n);
/* "None" (MXNet's unset optional). */
bool nn_is_none(const char *s);
/* Python-style text: "(1, 1)", "(3,)", "()"; "True"/"False"; "0.001". */
void nn_fmt_tuple(gir_buf *b, const int64_t *v, size_t n);
const char *nn_fmt_bool(bool v);
void nn_fmt_float(char out[48], double v);
/* Shape text in MXNet's __shape__ style "(5, 0, 5, 5)" -> dims (0 -> -1). */
bool nn_parse_shape_hint(const char *s, gir_shape *shape);
/* A parsed JSON value by dmlc's rule for values it writes through its
 * generic handlers: arrays of numbers with at most 10 elements inline,
 * others one element per line (a compact writer puts all on one line). */
void nn_emit_json(gir_json_writer *w, const gir_json *v);

/* ---- reading and writing (read.c, write.c) ------------------------------------ */

gir_status nn_read(const char *path, const gir_options *opts, nn_flavour hint, gir_graph **out, gir_error *err);
/* How nn_read_ex reads the structure: the fast path when it can (AUTO,
 * what nn_read does), or the DOM path alone (REFERENCE, for tests). */
typedef enum nn_read_mode { NN_READ_AUTO = 0, NN_READ_REFERENCE } nn_read_mode;
/* nn_read; *fast_used (may be NULL) tells whether the fast path read the
 * structure (the result is the DOM path's when anything failed later). */
gir_status nn_read_ex(const char *path, const gir_options *opts, nn_flavour hint, nn_read_mode mode, bool *fast_used,
                      gir_graph **out, gir_error *err);
gir_status nn_write(const gir_graph *g, const char *path, const gir_options *opts, nn_flavour fl,
                    gir_error *err);
/* nn_write's checks alone, every refusal into u (see gir_format.plan). */
gir_status nn_plan(const gir_graph *g, const gir_options *opts, nn_flavour fl, struct gir_unsupported *u, gir_error *err);
/* The companion params file of a graph JSON by the usual naming, or NULL
 * (malloc'd).  GIR_E_ARGUMENT when several match. */
gir_status nn_find_params(const char *json_path, char **out, gir_error *err);
/* The params path a writer uses beside json_path (malloc'd). */
char *nn_params_path_for(const char *json_path, nn_flavour fl);

/* Content probe shared by the three formats: the flavour the first bytes
 * suggest, with a score (0: not a graph JSON of this family). */
int nn_probe(const unsigned char *head, size_t n, nn_flavour *fl);

/* ---- operator mapping (ops.c, read_ops.c, write_ops.c) ------------------------------------------------ */

/* Output count a flavour's operator has (hidden outputs included), from its
 * attributes; 0 when the op is not known. */
size_t nn_op_num_outputs(nn_flavour fl, const char *op, const nn_node *n);
/* Whether op is one of the flavour's operators (for classification). */
bool nn_op_known(nn_flavour fl, const char *op);

extern const gir_op_map nn_mxnet_ops[];
extern const gir_op_map nn_nnvm_ops[];
extern const gir_op_map nn_tvm_ops[];
/* The operator rows of nn_mxnet_ops / nn_nnvm_ops: all but the closing
 * "(any other)" row and the terminator. */
extern const size_t nn_mxnet_op_rows, nn_nnvm_op_rows;

#endif
