"""The C declarations of libgraphir that the package uses, and the loaded
library (cffi's ABI mode: no compiler at install time).

The library is found, in order: the path in $GRAPHCONV_LIBRARY (a build
tree's tests set it), the path meson recorded when it installed the package
(_config.LIBRARY), then the dynamic linker's search ("libgraphir.so.N").
"""
import os

import cffi

CDEF = r"""
typedef int gir_status;
typedef int gir_dtype;
typedef int gir_value_kind;
typedef int gir_attr_type;

typedef struct gir_error {
    gir_status code;
    char *message;
    char *file;
    char *location;
    char *node;
} gir_error;

typedef struct gir_shape {
    int rank;
    int64_t dims[8];
} gir_shape;

typedef struct gir_graph gir_graph;
typedef struct gir_node gir_node;
typedef struct gir_value gir_value;
typedef struct gir_tensor gir_tensor;
typedef struct gir_attr gir_attr;
typedef struct gir_options gir_options;
typedef struct gir_session gir_session;

void gir_error_clear(gir_error *err);
const char *gir_status_name(gir_status code);
const char *gir_status_describe(gir_status code);
int gir_status_exit_code(gir_status code);
char *gir_error_format(const gir_error *err);
void free(void *p);

const char *gir_dtype_name(gir_dtype t);
gir_dtype gir_dtype_from_name(const char *name);
size_t gir_dtype_size(gir_dtype t);

void gir_graph_free(gir_graph *g);
const char *gir_graph_name(const gir_graph *g);
size_t gir_graph_node_count(const gir_graph *g);
const gir_node *gir_graph_node(const gir_graph *g, size_t i);
size_t gir_graph_value_count(const gir_graph *g);
const gir_value *gir_graph_value(const gir_graph *g, size_t i);
const gir_value *gir_graph_find_value(const gir_graph *g, const char *name);
size_t gir_graph_input_count(const gir_graph *g);
const gir_value *gir_graph_input(const gir_graph *g, size_t i);
size_t gir_graph_output_count(const gir_graph *g);
const gir_value *gir_graph_output(const gir_graph *g, size_t i);
size_t gir_graph_meta_count(const gir_graph *g);
const gir_attr *gir_graph_meta(const gir_graph *g, size_t i);

const char *gir_node_name(const gir_node *n);
const char *gir_node_op(const gir_node *n);
bool gir_node_is_opaque(const gir_node *n);
const char *gir_node_opaque_format(const gir_node *n);
size_t gir_node_input_count(const gir_node *n);
const gir_value *gir_node_input(const gir_node *n, size_t i);
size_t gir_node_output_count(const gir_node *n);
const gir_value *gir_node_output(const gir_node *n, size_t i);
size_t gir_node_attr_count(const gir_node *n);
const gir_attr *gir_node_attr(const gir_node *n, size_t i);

const char *gir_value_name(const gir_value *v);
gir_value_kind gir_value_get_kind(const gir_value *v);
gir_dtype gir_value_dtype(const gir_value *v);
const gir_shape *gir_value_shape(const gir_value *v);
const char *gir_value_dim_name(const gir_value *v, int axis);
gir_tensor *gir_value_tensor(const gir_value *v);

const char *gir_attr_name(const gir_attr *a);
gir_attr_type gir_attr_get_type(const gir_attr *a);
int64_t gir_attr_int(const gir_attr *a);
double gir_attr_float(const gir_attr *a);
const char *gir_attr_string(const gir_attr *a);
size_t gir_attr_list_len(const gir_attr *a);
const int64_t *gir_attr_ints(const gir_attr *a);
const double *gir_attr_floats(const gir_attr *a);
const char *const *gir_attr_strings(const gir_attr *a);
gir_tensor *gir_attr_tensor(const gir_attr *a);

gir_dtype gir_tensor_dtype(const gir_tensor *t);
const gir_shape *gir_tensor_shape(const gir_tensor *t);
uint64_t gir_tensor_nbytes(const gir_tensor *t);
gir_status gir_tensor_load(gir_tensor *t, const void **data, gir_error *err);
void gir_tensor_unload(gir_tensor *t);
gir_tensor *gir_tensor_ref(gir_tensor *t);
void gir_tensor_unref(gir_tensor *t);
gir_status gir_tensor_create(gir_dtype dtype, const gir_shape *shape, const void *data, size_t nbytes,
                             gir_tensor **out, gir_error *err);

gir_options *gir_options_new(void);
void gir_options_free(gir_options *o);
gir_status gir_options_set(gir_options *o, const char *key, const char *value, gir_error *err);
typedef void (*gir_note_fn)(void *ctx, const char *note);
void gir_options_set_note_handler(gir_options *o, gir_note_fn fn, void *ctx);

size_t gir_format_count(void);
const char *gir_format_name(size_t i);
const char *gir_format_description(size_t i);
bool gir_format_can_read(size_t i);
bool gir_format_can_write(size_t i);
bool gir_format_option(size_t i, bool for_writing, size_t k, const char **key, const char **doc);
bool gir_common_option(size_t k, const char **key, const char **doc);
gir_status gir_detect(const char *path, const char **name, const char **reason, gir_error *err);
gir_status gir_load(const char *path, const char *format, const gir_options *opts, gir_graph **out,
                    gir_error *err);
gir_status gir_save(const gir_graph *g, const char *path, const char *format, const gir_options *opts,
                    gir_error *err);

gir_status gir_session_new(const gir_graph *g, int threads, gir_session **out, gir_error *err);
void gir_session_free(gir_session *s);
size_t gir_session_input_count(const gir_session *s);
const gir_value *gir_session_input(const gir_session *s, size_t i);
gir_status gir_session_set_input_named(gir_session *s, const char *name, gir_tensor *t, gir_error *err);
gir_status gir_session_run(gir_session *s, gir_error *err);
size_t gir_session_output_count(const gir_session *s);
gir_tensor *gir_session_output(const gir_session *s, size_t i);
size_t gir_session_warning_count(const gir_session *s);
const char *gir_session_warning(const gir_session *s, size_t i);
const char *gir_format_for_extension(const char *path);

gir_status gir_load_memory(const void *data, size_t size, const void *params, size_t params_size,
                           const char *format, const gir_options *opts, gir_graph **out, gir_error *err);
gir_status gir_save_memory(const gir_graph *g, const char *format, const gir_options *opts, void **data,
                           size_t *size, void **params, size_t *params_size, gir_error *err);

typedef struct gir_check_options {
    double atol, rtol;
    uint64_t seed;
    int threads;
    bool per_node;
    size_t n_feeds;
    const char *const *feed_names;
    gir_tensor *const *feed_tensors;
    bool allow_structural;
    uint64_t max_run_elements;
} gir_check_options;
void gir_check_options_init(gir_check_options *o);
typedef struct gir_check_result {
    int method;
    bool passed;
    char *verdict;
    char *report;
    char *json;
    char *why;
} gir_check_result;
void gir_check_result_clear(gir_check_result *r);
gir_status gir_check_models(const gir_graph *a, const gir_graph *b, const gir_check_options *o,
                            gir_check_result *res, gir_error *err);
gir_status gir_check_written(const gir_graph *src, gir_graph *b, const gir_check_options *o,
                             gir_check_result *res, gir_error *err);
"""

ffi = cffi.FFI()
ffi.cdef(CDEF)


def _candidates():
    env = os.environ.get("GRAPHCONV_LIBRARY")
    if env:
        yield env
        return
    try:
        from . import _config
        if getattr(_config, "LIBRARY", None):
            yield _config.LIBRARY
    except ImportError:
        pass
    yield "libgraphir.so.0"
    yield "libgraphir.so"


def _open():
    tried = []
    for path in _candidates():
        try:
            return ffi.dlopen(path)
        except OSError as e:
            tried.append(f"{path}: {e}")
    raise ImportError("graphconv: cannot load libgraphir (set GRAPHCONV_LIBRARY to its path); tried "
                      + "; ".join(tried))


lib = _open()
