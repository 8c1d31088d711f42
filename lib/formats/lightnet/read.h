/* The LightNet reader's context, shared by read.c (the passes, values,
 * weights) and read_ops.c (each operator's pre_run checks and its
 * canonical node).  Internal to lib/formats/lightnet. */
#ifndef GIR_LIGHTNET_READ_H
#define GIR_LIGHTNET_READ_H

#include "lightnet.h"

#include "io/json.h"

/* Per-value bookkeeping (indexed by value index). */
typedef struct tinfo {
    int32_t op;        /* op (file index) that wrote it */
    int32_t root;      /* value whose memory it aliases (itself if none) */
    int32_t stale_by;  /* op that overwrote its memory in place, or -1 */
    uint8_t create;    /* 0, or the creating optype: 1 create, 2 zeros, 3 arange */
    bool from_file;
    bool data_use;     /* read through a data argument */
    bool any_use;
} tinfo;

enum { CR_NONE = 0, CR_CREATE, CR_ZEROS, CR_ARANGE };

typedef struct ln_opref {
    const gir_json *obj;
    const char *name;
    const char *optype;
    const gir_json *tin, *tout, *params;
    const ln_op_schema *schema; /* NULL for tensorrt / opaque helpers */
    const char *variant;
} ln_opref;

typedef struct named {
    const char *name;
    size_t idx;
} named;

typedef struct rd {
    const char *path;
    const gir_options *opts;
    gir_json_doc *doc;
    gir_graph *g;
    gir_error *err;
    ln_opref *ops;
    size_t n_ops;
    tinfo *t;
    size_t t_cap;
    uint64_t seed;
    size_t cur; /* op being checked */
    named *opnames, *tnames; /* sorted: every op name, every tensor written */
    size_t n_opnames, n_tnames;
    char ptr[128];
} rd;

/* cJSON_GetObjectItem: first member whose key matches case-insensitively. */
const gir_json *lnr_jget(const gir_json *obj, const char *key);

const char *lnr_jstr(const gir_json *v);

gir_status lnr_rfail(rd *r, const gir_json *at, gir_status code, const char *fmt, ...) GIR_PRINTF(4, 5);

const char *lnr_setptr(rd *r, const char *fmt, ...) GIR_PRINTF(2, 3);

/* The LightNet param type of a JSON value (ln_json.c's rules). */
gir_status lnr_classify(rd *r, const gir_json *v, const char *pname, ln_ptype *out);

/* A JSON number as LightNet keeps it: a double (cJSON's strtod). */
gir_status lnr_num(rd *r, const gir_json *v, const char *what, double *out);

gir_status lnr_grow_t(rd *r);

gir_value *lnr_val(rd *r, int32_t v);

/* The first entry of list whose arg_name equals arg (LightNet looks args
 * up by name with strcmp; keys were matched case-insensitively). */
const gir_json *lnr_find_arg(const gir_json *list, const char *arg, size_t *idx);

gir_status lnr_new_output(rd *r, gir_node *n, size_t k, const char *name, gir_dtype dt, const gir_shape *s);

int64_t lnr_numel(const gir_shape *s);

/* A shape from dims (each >= 1), at most 8 axes and 2^31-1 elements
 * (TensorLight counts elements in an int). */
gir_status lnr_make_shape(rd *r, const gir_json *at, const int64_t *dims, size_t n, gir_shape *s);

/* The shape a LightNet op gives an opaque op's output: from the param
 * dst<k>_shape / dst<k>_dtype (tensorrt), or by rule. */
gir_status lnr_op_opaque(rd *r, const ln_opref *op);

/* Argument roles: which inputs hold parameters (so a from_file create read
 * only through them is a weight, not a graph input). */
bool lnr_is_param_arg(const char *optype, const char *arg);

gir_status lnr_check_op(rd *r, size_t i);

#endif
