/* LightNet JSON IR (zhaozhixu/LightNet) and its ".wts" weight files:
 * declarations shared by the files of this plugin.  Internal. */
#ifndef GIR_LIGHTNET_H
#define GIR_LIGHTNET_H

#include "formats/format.h"

/* ---- operator schemas (what LightNet's pre_run checks) ------------------ */

/* How a param's JSON value is typed (LightNet's LN_PARAM_*). */
typedef enum ln_ptype {
    LN_PT_NUMBER = 0,
    LN_PT_STRING,
    LN_PT_BOOL,
    LN_PT_NUMBERS, /* array of numbers */
    LN_PT_NULL,    /* only ever found in files, never required */
    LN_PT_STRINGS,
    LN_PT_BOOLS
} ln_ptype;

/* Which slot of a number param an operator reads (LightNet's realtype):
 * int truncates toward zero and saturates; float saturates with the
 * FLT_MIN lower bound quirk (zero and negatives become FLT_MIN). */
typedef enum ln_realtype { LN_RT_INT = 0, LN_RT_FLOAT, LN_RT_DOUBLE, LN_RT_OTHER } ln_realtype;

typedef struct ln_param_schema {
    const char *name;
    ln_ptype type;
    ln_realtype real;
} ln_param_schema;

enum {
    LN_OP_VARIADIC_IN = 1,  /* gather: inputs src1..srcN */
    LN_OP_VARIADIC_OUT = 2, /* scatter: outputs dst1..dstN */
    LN_OP_ANY_PARAMS = 4,   /* gather/scatter: the param count is not checked */
};

typedef struct ln_op_schema {
    const char *optype;
    const char *const *ins;  /* NULL-terminated argument names */
    const char *const *outs;
    const ln_param_schema *params; /* terminated by a NULL name */
    unsigned flags;
    const char *doc; /* one line for the ops listing */
} ln_op_schema;

/* The operator mapping (ops.c): the rows `graphconv ops --format lightnet`
 * prints; its plain rows are read and written by the mapping engine. */
extern const gir_op_map ln_ops[];

/* The 36 generic operators of arch "none". */
const ln_op_schema *ln_schema_find(const char *optype);
size_t ln_schema_count(void);
const ln_op_schema *ln_schema_at(size_t i);
size_t ln_schema_n_ins(const ln_op_schema *s);
size_t ln_schema_n_outs(const ln_op_schema *s);
size_t ln_schema_n_params(const ln_op_schema *s);
const ln_param_schema *ln_schema_param(const ln_op_schema *s, const char *name);

/* Backend variant suffixes: "_cpu", "_cuda", "_cudnn", "_dpu".  Splits
 * "conv2d_cuda" into the generic schema and the suffix ("cuda"); NULL when
 * optype is neither generic nor a variant of one. */
const ln_op_schema *ln_schema_resolve(const char *optype, const char **variant);

/* TensorLight dtype names ("TL_FLOAT") <-> graphconv dtypes. */
gir_dtype ln_dtype_from_name(const char *name);
const char *ln_dtype_name(gir_dtype dt); /* NULL when LightNet has no such type */

/* LightNet's number slots. */
int32_t ln_int_slot(double v);
float ln_float_slot(double v);

/* Converts a double to dt the way TensorLight's tl_convert does (truncation
 * toward zero and saturation for integers, any non-zero to true for bool)
 * and stores it little-endian at dst (gir_dtype_size(dt) bytes). */
void ln_convert_from_double(void *dst, gir_dtype dt, double v);

/* ONNX-style SAME_UPPER / SAME_LOWER / VALID padding of one spatial axis
 * of a convolution or pooling window (LightNet's autopad). */
void ln_autopad_conv(const char *mode, int64_t in, int64_t k, int64_t s, int64_t d, int64_t *begin, int64_t *end);

/* For a tensor the reader fills with LightNet's `ran` (uniform random from
 * a fixed seed): its range.  False for any other tensor. */
bool ln_ran_info(const gir_tensor *t, double *lo, double *hi);


/* ---- .wts weight files --------------------------------------------------- */

enum { LN_WTS_FLOAT32 = 0, LN_WTS_HALF = 1, LN_WTS_INT8 = 2 };

typedef struct ln_wts_record {
    const char *name;  /* owned by the table */
    int type;          /* LN_WTS_FLOAT32 or LN_WTS_INT8 */
    int64_t len;       /* element count */
    uint64_t offset;   /* byte offset of the first value token */
    unsigned line;     /* line of the record's name */
    unsigned value_line; /* line at offset */
    bool used;         /* matched a tensor of the model */
} ln_wts_record;

typedef struct ln_wts {
    char *path;
    gir_file_id id;      /* the file as the scan saw it */
    ln_wts_record *recs;
    size_t n, cap;
    int64_t count;       /* the count token */
    size_t n_skipped;    /* records naming no tensor (skipped like LightNet) */
    char **skipped;      /* their names, for the report (first 8) */
    gir_arena arena;
} ln_wts;

/* Tensor lookup the scanner needs: element count and dtype of a tensor of
 * the model and the op that writes it (for messages), false when the model
 * has no such tensor. */
typedef bool (*ln_wts_lookup)(void *ctx, const char *name, int64_t *numel, gir_dtype *dtype, const char **op);

/* Scans and validates a whole .wts file the way LightNet's loader reads it:
 * count, then count records "NAME TYPE LEN value...".  A record naming no
 * tensor is skipped to the end of its line (LightNet does the same).  Every
 * value token is checked; the values themselves are not kept. */
gir_status ln_wts_scan(const char *path, ln_wts_lookup lookup, void *ctx, size_t max_bytes, ln_wts **out,
                       gir_error *err);
void ln_wts_free(ln_wts *w);
/* The last record for a tensor (LightNet loads records in order, so the
 * last one wins), or NULL. */
const ln_wts_record *ln_wts_find(const ln_wts *w, const char *name);
/* A lazily loaded tensor reading rec's values from w's file. */
gir_status ln_wts_tensor(const ln_wts *w, const ln_wts_record *rec, const gir_shape *shape, gir_tensor **out,
                         gir_error *err);

/* Writes "count\n" then one line "NAME TYPE LEN hex..." per tensor
 * (float32: 8 lower-case hex digits of the bit pattern; int8: 2). */
typedef struct ln_wts_item {
    const char *name;
    gir_tensor *t; /* float32 or int8 */
} ln_wts_item;
gir_status ln_wts_write(gir_outfile *f, const ln_wts_item *items, size_t n, gir_error *err);

/* ---- reader / writer entry points --------------------------------------- */

gir_status ln_read(const char *path, const gir_options *opts, gir_graph **out, gir_error *err);
gir_status ln_write(const gir_graph *g, const char *path, const gir_options *opts, gir_error *err);
/* ln_write's checks alone, every refusal into u (see gir_format.plan). */
gir_status ln_plan(const gir_graph *g, const gir_options *opts, gir_unsupported *u, gir_error *err);

/* Replaces // and block comments with spaces the way LightNet's pre-pass
 * does (strings are skipped without regard to backslash escapes; newlines
 * are kept so line numbers stay right).  Returns false and sets *bad to the
 * offset of an unterminated block comment. */
bool ln_strip_comments(char *text, size_t len, size_t *bad);

#endif
