/* Operator mapping of the NNVM family: the reader and writer contexts the
 * per-operator functions work in (read_ops.c, write_ops.c). */
#ifndef GIR_NNVM_OPS_H
#define GIR_NNVM_OPS_H

#include "nnvm.h"
#include "formats/format.h"

/* ---- reading ------------------------------------------------------------- */

typedef struct nn_reader {
    gir_graph *g;
    nn_flavour fl;
    const char *pfx;         /* "nnvm", "mxnet", "tvm" */
    const nn_raw *raw;
    gir_arena scratch;       /* the arrays below, for the reading alone */
    int32_t **outs;          /* per raw node: value of each output (-1: none), in out_slots */
    int32_t *out_slots;
    const gir_op_map **defs; /* per raw node: its operator's row, or NULL */
    uint32_t *n_outs;
    bool *label_only;        /* per raw node: a variable only SoftmaxOutput reads as its label */
    bool *var_made;          /* per raw node: variable value created */
    /* params */
    const gir_params *params;
    int32_t *claimed;        /* per param: value it was matched to, -1 */
    size_t *by_key;          /* param indices sorted by key */
    /* input-shape option */
    gir_input_shape *ishapes;
    size_t n_ishapes;
    int64_t batch;           /* batch-size option, 0 if none */
    int64_t mx_version;      /* mxnet_version, 0 when absent (0.8 layout) */
    bool *bn_synth;          /* per raw node: BatchNorm given synthesised aux inputs */
    /* The last blocks of meta pairs made, per operator definition and for
     * variables (read_ops.c: pairs_attr). */
#define NN_PAIRS_MEMO 17
    struct nn_pairs_memo {
        const char **v;
        size_t n;
    } pairs_memo[NN_PAIRS_MEMO];
    size_t n_synth, n_labels; /* for the notes */
    size_t n_label_ops;      /* operators that only computed labels, dropped */
    size_t inferred;         /* nodes made so far whose shapes were inferred */
    char *why;               /* why the last read function kept its node verbatim */
    const char *path;        /* the graph file */
    bool weights_as_inputs;  /* option: no weights file is fine, weights become inputs */
} nn_reader;

/* MXNet's Reshape codes (0, -1, -2, -3, -4) applied to a known shape. */
bool nn_mx_reshape_dims(const int64_t *code, size_t n, const gir_shape *in, int64_t *out, int *rank);
/* Node meta: why a reader kept the node verbatim ("act_type=rrelu ..."). */
#define NN_META_WHY GIR_META_OPAQUE_WHY
/* True for an input of an MXNet output layer (SoftmaxOutput, ...) that is
 * its label: inference never reads it. */
bool nn_is_label_edge(const nn_node *n, size_t j);

/* Result of a read function: mapped, or keep the node verbatim. */
typedef enum nn_rres { NN_MAPPED = 0, NN_OPAQUE } nn_rres;

/* The signature of every read function: raw node idx with its inputs' values
 * in, its outputs' values to out (-1: none); res says whether it mapped. */
#define NN_READ_FN(name) \
    gir_status name(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, nn_rres *res, gir_error *err)
typedef NN_READ_FN((*nn_read_fn));

/* How the reader maps the operator of a composite row of nn_mxnet_ops or
 * nn_nnvm_ops (the row's impl).  Plain rows are read by nn_rd_plain. */
typedef struct nn_rdef {
    nn_read_fn read;
    unsigned outputs;     /* outputs incl. hidden ones (0: depends on attributes) */
    unsigned min_in, max_in;
    const char *const *keys; /* attributes it understands (NULL: none) */
} nn_rdef;

/* The row of a flavour's operator table that reads op, or NULL. */
const gir_op_map *nn_row_find(nn_flavour fl, const char *op);
/* How the reader maps a row's operator (plain rows included). */
const nn_rdef *nn_row_rdef(const gir_op_map *row);
/* Whether a flavour's table is in the order the lookup needs (bytewise by
 * name; several rows may share a name, only their canonical op differs). */
bool nn_rows_sorted(nn_flavour fl);
/* Creates the value for variable raw node idx (if not yet made). */
gir_status nn_make_var(nn_reader *r, size_t idx, gir_error *err);
/* Outputs raw node idx gets (hidden ones included). */
uint32_t nn_node_outputs(const nn_reader *r, size_t idx);
/* Maps raw op node idx (its inputs already made), canonically or verbatim. */
gir_status nn_map_node(nn_reader *r, size_t idx, gir_error *err);

/* The reading helpers of read_ops.c, for mappings kept in their own files:
 * the node standing for raw node idx (its attributes in meta), a helper
 * node "<name>_<suffix>", output k's value, attribute getters (errors name
 * the attribute and its JSON path). */
gir_status nn_rd_node(nn_reader *r, size_t idx, gir_op op, size_t n_in, size_t n_out, gir_node **out,
                      gir_error *err);
gir_status nn_rd_part(nn_reader *r, size_t idx, const char *suffix, gir_op op, size_t n_in, size_t n_out,
                      gir_node **out, gir_error *err);
gir_status nn_rd_out(nn_reader *r, gir_node *n, size_t k, int32_t *vidx, gir_error *err);
gir_status nn_rd_int(const nn_reader *r, size_t idx, const char *key, bool req, int64_t dflt, int64_t *out,
                     gir_error *err);
gir_status nn_rd_bool(const nn_reader *r, size_t idx, const char *key, bool dflt, bool *out, gir_error *err);
const char *nn_rd_str(const nn_reader *r, size_t idx, const char *key, const char *dflt);
gir_status nn_rd_bad_attr(const nn_reader *r, size_t idx, const char *key, const char *what, gir_error *err);

/* MXNet's fused RNN operator (read_ops_rnn.c): its attribute keys, its output
 * count (1, or with state_outputs 2, LSTM 3) and its reading into one
 * canonical LSTM/GRU/RNN per layer. */
extern const char *const nn_k_rnn_mx[];
size_t nn_mx_rnn_outputs(const nn_node *n);
NN_READ_FN(nn_rd_mx_rnn);

/* ---- writing --------------------------------------------------------------- */

typedef struct nn_fref {
    int32_t value; /* an IR value, or -1 */
    int32_t xvar;  /* a synthesised variable, or -1 */
} nn_fref;

typedef struct nn_fnode {
    const char *op, *name;
    const char **keys, **vals; /* attributes (arena) */
    size_t n_attrs;
    bool keep_order;           /* write attributes in the order given */
    nn_fref *in;
    size_t n_in;
    const int64_t *versions;   /* per input, or NULL */
    size_t n_out;              /* outputs the op has (node_row_ptr) */
    int32_t node;              /* IR node (errors), -1 */
} nn_fnode;

typedef struct nn_xvar {
    const char *name;
    const char **keys, **vals;
    size_t n_attrs;
    gir_tensor *t; /* its data for the params file (owned), or NULL */
} nn_xvar;

typedef struct nn_writer {
    const gir_graph *g;
    nn_flavour fl;
    const char *pfx;
    gir_arena arena;
    nn_fnode *fn;
    size_t n_fn, cap_fn;
    nn_xvar *xv;
    size_t n_xv, cap_xv;
    int32_t *vprod;       /* per IR value: fnode producing it, -1 */
    uint32_t *vidx;       /* per IR value: output index in that fnode */
    int32_t *uses;        /* per IR value: number of node inputs reading it */
    bool *absorbed;       /* per IR node: folded into another node's fnode */
    bool *uses_fn;        /* per IR value: read by some written node */
    int32_t *node_fn;     /* per IR node: its fnode, -1 */
    bool allow_opaque;
} nn_writer;

typedef gir_status (*nn_write_fn)(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err);

/* Lowers IR node i into fnodes (or marks it absorbed); an unsupported
 * construct fails with GIR_E_UNSUPPORTED_OP/_ATTR and a "what" message. */
gir_status nn_lower_node(nn_writer *w, size_t i, gir_error *err);
/* The Flatten node folded into a Gemm written as FullyConnected(flatten),
 * or -1. */
int32_t nn_fc_flatten_of(const nn_writer *w, const gir_node *gemm);
/* The Unsqueeze feeding a PRelu's slope that the PRelu's node absorbs, or
 * -1. */
int32_t nn_prelu_slope_of(const nn_writer *w, const gir_node *prelu);
/* The Cast to bool feeding a Where's condition that where absorbs, or -1. */
int32_t nn_where_cast_of(const nn_writer *w, const gir_node *n);
/* The ArgMax/ArgMin whose indices only Cast n reads, converting them to the
 * flavour's index type (MXNet float32, NNVM int32): written together as
 * argmax/argmin, the ArgMax absorbed; or -1. */
int32_t nn_argmax_of(const nn_writer *w, const gir_node *n);

/* LSTM, GRU and RNN written as MXNet's fused RNN (read_ops_rnn.c): the packed
 * parameters become a synthesised variable with data; the Squeeze (one
 * direction) or Transpose + Reshape (two) that turns Y into RNN's
 * [T, N, D*H] is folded into it (nn_rnn_absorb marks those nodes). */
gir_status nn_wr_rnn(nn_writer *w, const gir_node *n, nn_fnode *f, gir_error *err);
void nn_rnn_absorb(nn_writer *w);

/* Family-wide meta keys (understood by the nnvm and mxnet writers). */
#define NN_META_IGNORED_GAMMA "nnvm.ignored_gamma" /* BN: variable the ones stand for */
#define NN_META_IGNORED_BETA "nnvm.ignored_beta"   /* BN: variable the zeros stand for */
#define NN_META_FC_FLATTEN "nnvm.fc_flatten"       /* Flatten that is part of a FullyConnected */
#define NN_META_PENDING "nnvm.pending"             /* BN: constants wait for shape inference */

/* After inference: pending BatchNorm constants made, or the node kept
 * verbatim. */
gir_status nn_resolve_pending(nn_reader *r, gir_error *err);

/* ---- the reader's helpers shared by read_ops*.c (read_ops.c) --------- */

typedef struct convp {
    size_t rank;
    int64_t kernel[3], strides[3], dil[3], pads[6], adj[3];
    int64_t channels, group;
    bool bias;
} convp;

const nn_node *nn_rd_raw(const nn_reader *r, size_t idx);

const char *nn_rd_attr(const nn_reader *r, size_t idx, const char *key);

/* The text of a required attribute (absent: an error naming it). */
gir_status nnr_g_text(const nn_reader *r, size_t idx, const char *key, const char **out, gir_error *err);

/* Absent, "None" and "()" give n = 0. */
gir_status nnr_g_tuple(const nn_reader *r, size_t idx, const char *key, bool req, int64_t *v, size_t *n,
                       gir_error *err);

gir_status nnr_set_in(gir_node *n, size_t k, int32_t v);

gir_value *nn_rd_value(const nn_reader *r, int32_t v);

/* Keeps the raw node verbatim (its operator names it in the writers'
 * refusals). */
static inline gir_status nnr_opaque(nn_rres *res)
{
    *res = NN_OPAQUE;
    return GIR_OK;
}

/* Keeps raw node idx verbatim, saying why (node meta NN_META_WHY, which the
 * writers' refusals quote). */
gir_status nnr_keep(nn_reader *r, nn_rres *res, gir_error *err, const char *fmt, ...) GIR_PRINTF(4, 5);

/* Value v's shape when all its dimensions are known, else NULL. */
const gir_shape *nnr_full_shape(nn_reader *r, int32_t v);

int nnr_rank_of(nn_reader *r, int32_t v);

/* A node of raw node idx's mapping taking a (and b unless -1): a helper
 * "<name>_<sfx>", or with sfx NULL the node standing for idx itself. */
gir_status nnr_node2(nn_reader *r, size_t idx, const char *sfx, gir_op op, int32_t a, int32_t b, gir_node **pn,
                     int32_t *out, gir_error *err);

/* The node standing for raw node idx: op of x with the integer list
 * attribute key (none when v is NULL). */
gir_status nnr_ints_node(nn_reader *r, size_t idx, gir_op op, int32_t x, const char *key, const int64_t *v, size_t n,
                         int32_t *out, gir_error *err);

/* Checks the input count against what a boolean attribute implies. */
gir_status nnr_want_inputs(const nn_reader *r, size_t idx, size_t want, const char *why, gir_error *err);

gir_status nnr_conv_common(nn_reader *r, size_t idx, const int32_t *in, int32_t *out, const convp *c,
                           bool transpose, gir_error *err);

gir_status nnr_slice_node(nn_reader *r, size_t idx, int32_t x, const int64_t *st, const int64_t *en,
                          const int64_t *ax, const int64_t *sp, size_t n, int32_t *out, gir_error *err);

gir_status nnr_g_float(const nn_reader *r, size_t idx, const char *key, bool req, double dflt, double *out,
                       gir_error *err);

const gir_op_map *nnr_cur_def(const nn_reader *r, size_t idx);

/* Sets the entries' versions as the integer list key of a, unless all are 0. */
gir_status nnr_versions_meta(gir_graph *g, gir_attrs *a, const char *key, const nn_entry *e, size_t n,
                             gir_error *err);

/* Sets the meta list of pairs (pairs_attr) on a, unless there are none. */
gir_status nnr_meta_pairs(gir_graph *g, gir_attrs *a, const char *key, const nn_kv *kv, size_t n,
                          struct nn_pairs_memo *memo, gir_error *err);

/* A rank-0 constant named after node idx holding v. */
gir_status nnr_const_scalar(nn_reader *r, gir_node *n, double v, gir_dtype dt, int32_t *vidx, gir_error *err);

/* A [c] constant of ones (or zeros) named "<node>_<what>". */
gir_status nnr_const_fill(nn_reader *r, const char *node, const char *what, int64_t c, float v, int32_t *vidx,
                          gir_error *err);

/* Gives value v (a variable with unknown shape) a shape with the known dims
 * (-1 elsewhere); checks them against a known shape. */
gir_status nnr_hint_shape(nn_reader *r, size_t idx, int32_t v, const int64_t *dims, int rank, gir_error *err);

/* Infers the shapes of the nodes made so far (in the order made, which is
 * topological), each once; a failure leaves shapes unknown for
 * gir_graph_finish to report.  Mappings that depend on shapes call it. */
void nnr_catch_up(nn_reader *r);

/* x op scalar (a rank-0 constant of x's float type). */
gir_status nnr_scalar_op(nn_reader *r, size_t idx, const char *sfx, gir_op op, int32_t x, double c, int32_t *out,
                         gir_error *err);

/* The channel count: from a 1-d operand's shape, or dimension 1 of the data. */
int64_t nnr_bn_channels(const nn_reader *r, const int32_t *in);

/* ---- read functions of read_ops_zoo.c (nn_read_fn, in read_ops.c's tables) ---- */

/* UpSampling: nearest is a Resize (several inputs: each to the first's
 * output size, then concatenated or summed); bilinear is a depthwise
 * Deconvolution with the given weight, as MXNet computes it. */
NN_READ_FN(nn_rd_upsampling);

/* Crop: a Slice of axes 2 and 3; the size comes from h_w or the second
 * input's shape, the offset from offset or (center_crop) the middle. */
NN_READ_FN(nn_rd_crop);

/* slice_like: data sliced from 0 to the other input's size on the axes
 * given (all when none). */
NN_READ_FN(nn_rd_slice_like);

/* MXNet slice(begin, end, step): None is the whole axis in the direction
 * of the step. */
NN_READ_FN(nn_rd_mx_slice);

/* Comparisons give 1 or 0 in the data's type in MXNet: compare, Cast. */
NN_READ_FN(nn_rd_compare);

/* A reduction's axis (tuple, empty when absent), keepdims and exclude. */
typedef struct nn_reduce_args {
    int64_t axes[NN_MAX_TUPLE];
    size_t n;
    bool keepdims, exclude;
} nn_reduce_args;
gir_status nnr_reduce_attrs(nn_reader *r, size_t idx, nn_reduce_args *a, gir_error *err);
/* argmax/argmin over one axis: ArgMax/ArgMin (first extremum, int64) and a
 * Cast to the flavour's index type (MXNet float32; NNVM dtype, int32). */
NN_READ_FN(nn_rd_argmax);

/* where(condition, x, y): a non-zero condition picks x; a 1-D condition
 * picks rows (axis 0), so it gets trailing unit axes. */
NN_READ_FN(nn_rd_where);

/* broadcast_to(shape; 0 keeps a dimension), broadcast_axis(axis, size),
 * broadcast_like(lhs, rhs): an Expand (a 1 keeps the input's dimension
 * there, as MXNet's 0 does). */
NN_READ_FN(nn_rd_bcast_to);

/* _zeros, _ones (shape attribute), zeros_like, ones_like (an input's). */
NN_READ_FN(nn_rd_fill);

/* _contrib_MultiBoxPrior: anchor boxes (xmin, ymin, xmax, ymax) for every
 * cell of the input's feature map, a constant once its size is known. */
NN_READ_FN(nn_rd_multibox_prior);

/* Operators with no inference form or no canonical counterpart, refused by
 * name when written elsewhere (kept verbatim for MXNet). */
NN_READ_FN(nn_rd_refused);

/* NNVM upsampling(scale, layout, method): nearest neighbour in NCHW. */
NN_READ_FN(nn_rd_upsampling_nnvm);

/* ---- read functions of read_ops_shape.c (nn_read_fn, in read_ops.c's tables) ---- */

NN_READ_FN(nn_rd_reshape);

/* transpose(axes) -> Transpose(perm), negative axes kept verbatim;
 * squeeze(axis) -> Squeeze(axes): an optional tuple. */
NN_READ_FN(nn_rd_axes_list);

/* MXNet Pad: pad_width is (before, after) per axis; constant (with
 * constant_value), edge or reflect. */
NN_READ_FN(nn_rd_mx_pad);

NN_READ_FN(nn_rd_clip);
NN_READ_FN(nn_rd_expand_dims);
NN_READ_FN(nn_rd_split);

/* NNVM strided_slice(begin, end, stride): axes 0..n-1; an axis taken
 * whole (0, INT32_MAX or more, step 1) is not listed. */
NN_READ_FN(nn_rd_strided_slice);

/* MXNet slice_axis(axis, begin, end): end None means to the end. */
NN_READ_FN(nn_rd_slice_axis);

NN_READ_FN(nn_rd_lrn);
NN_READ_FN(nn_rd_reduce);
NN_READ_FN(nn_rd_cast);

/* ---- read functions of read_ops_nn.c (nn_read_fn, in read_ops.c's tables) ---- */

NN_READ_FN(nn_rd_mx_conv);
NN_READ_FN(nn_rd_nnvm_conv);
NN_READ_FN(nn_rd_fc);
NN_READ_FN(nn_rd_dense);

/* MXNet's BatchNorm (eps, fix_gamma: the scale is ones, output_mean_var)
 * and NNVM's batch_norm (epsilon, center, scale). */
NN_READ_FN(nn_rd_bn);

NN_READ_FN(nn_rd_mx_pool);
NN_READ_FN(nn_rd_nnvm_pool);
NN_READ_FN(nn_rd_softmax);
NN_READ_FN(nn_rd_softmax_output);

/* LinearRegressionOutput, MAERegressionOutput and MakeLoss are the
 * identity at inference, LogisticRegressionOutput the sigmoid. */
NN_READ_FN(nn_rd_output_layer);

NN_READ_FN(nn_rd_softmax_act);

/* A plain row: the inputs in order, one output, no attributes. */
NN_READ_FN(nn_rd_plain);
/* Flatten / flatten: a Flatten of axis 1. */
NN_READ_FN(nn_rd_flatten);
/* MXNet's Activation by act_type. */
NN_READ_FN(nn_rd_activation);
/* MXNet's LeakyReLU by act_type. */
NN_READ_FN(nn_rd_leaky);
/* NNVM's prelu. */
NN_READ_FN(nn_rd_prelu_nnvm);

/* x op scalar, or scalar op x for the r-variants. */
NN_READ_FN(nn_rd_scalar);

NN_READ_FN(nn_rd_variadic);
NN_READ_FN(nn_rd_dropout);

#endif
