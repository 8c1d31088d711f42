/* The LightNet writer's context, shared by write.c (names, values, the
 * walk, the files) and write_ops.c (each canonical operator as LightNet
 * ops).  Internal to lib/formats/lightnet. */
#ifndef GIR_LIGHTNET_WRITE_H
#define GIR_LIGHTNET_WRITE_H

#include "lightnet.h"

#include "io/json.h"

typedef struct strset {
    char **slot;
    size_t cap, n;
} strset;

typedef enum { WP_NUM, WP_INT, WP_STR, WP_BOOL, WP_INTS, WP_NUMS, WP_STRS, WP_BOOLS } wp_type;

typedef struct wpar {
    char *name;
    wp_type t;
    double d;
    int64_t i;
    char *s;
    size_t n;
    int64_t *iv;
    double *dv;
    char **sv;
} wpar;

typedef struct wop {
    char *name, *optype;
    char **in_arg, **in_name, **out_arg, **out_name;
    size_t n_in, n_out, cap_in, cap_out;
    wpar *p;
    size_t n_p, cap_p;
    bool failed;
} wop;

/* How a value without a producer is written. */
typedef enum {
    ST_NONE = 0,
    ST_INPUT,    /* create, from_file, no record: fed by the application */
    ST_NODATA,   /* a weight whose data graphconv does not have: from_file, no record */
    ST_WTS,      /* create, from_file, record in the .wts file */
    ST_INLINE,   /* create with inline data */
    ST_RAN,      /* create with ran (as read from LightNet) */
    ST_ZEROS,    /* zeros op */
    ST_ARANGE,   /* arange op */
} storage;

typedef struct fgroup {
    int32_t rmax, argmax, cast; /* node indices (rmax may be -1) */
    bool done;
} fgroup;

typedef struct wr {
    const gir_options *opts; /* for writer notes */
    const gir_graph *g;
    gir_error *err;
    gir_unsupported *u;
    bool emit;
    bool inline_all, keep_variants, allow_opaque;
    gir_buf buf;
    gir_json_writer jw;
    gir_outfile *out;
    wop op;
    strset opnames, tnames; /* names taken in the output */
    int32_t *order;         /* nodes in output order */
    int32_t *pos;           /* node -> position in order */
    int32_t *cons_start;    /* CSR: value -> consumer nodes */
    int32_t *cons;
    bool *is_output;
    int32_t *root;   /* value -> alias root in the output, -1 not written yet */
    bool *written;   /* value has been written (create emitted or produced) */
    storage *store;  /* value -> how it is written (no producer) */
    int32_t *group_of; /* node -> group index, -1 */
    fgroup *groups;
    size_t n_groups;
    ln_wts_item *wts;
    size_t n_wts, cap_wts;
    int32_t *wts_order; /* values in .wts order */
    int32_t cur;        /* node being written */
} wr;

void lnw_refuse(wr *w, gir_status code, const char *node, const char *fmt, ...) GIR_PRINTF(4, 5);

void lnw_begin_op(wr *w, const char *name, const char *optype);

void lnw_add_t(wr *w, bool in, const char *arg, const char *name);

#define OUT(arg, name) lnw_add_t(w, false, arg, name)

wpar *lnw_add_p(wr *w, const char *name, wp_type t);

void lnw_P_num(wr *w, const char *name, double d);

void lnw_P_str(wr *w, const char *name, const char *s);

void lnw_P_bool(wr *w, const char *name, bool b);

void lnw_P_ints(wr *w, const char *name, const int64_t *v, size_t n);

void lnw_P_nums(wr *w, const char *name, const double *v, size_t n);

gir_status lnw_end_op(wr *w);

/* A lnw_fresh name: for an op (unique among the ops written and not the name
 * of another node; a node may use its own), or for a tensor graphconv adds
 * (taken by no value and no other added tensor). */
const char *lnw_fresh(wr *w, bool op, const char *want, char *buf, size_t n);

const char *lnw_op_name(wr *w, const char *want, char *buf, size_t n);

gir_value *lnw_V(wr *w, int32_t v);

size_t lnw_n_consumers(wr *w, int32_t v);

bool lnw_shape_known(const gir_value *v);

gir_status lnw_emit_create(wr *w, int32_t vi);

int64_t lnw_norm_axis(int64_t axis, int rank);

gir_status lnw_write_node(wr *w, int32_t ni);

#endif
