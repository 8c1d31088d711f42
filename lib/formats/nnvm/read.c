/* Reading NNVM, MXNet and TVM graph JSON (and the companion .params) into
 * the IR.  The structure is read by read_raw_fast.c straight from the text when
 * it can; when it cannot, or when anything after it fails, the file is
 * read through the DOM (gir_json_doc_parse, then read_raw.c), whose values give
 * every error its JSON pointer and line:column. */
#include "ops.h"
#include "api/api.h"
#include "passes/passes.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *nn_flavour_name(nn_flavour f)
{
    return f == NN_MXNET ? "mxnet" : f == NN_TVM ? "tvm" : "nnvm";
}

/* ---- which flavour ------------------------------------------------------- */

static nn_flavour classify(const nn_raw *raw, nn_flavour hint)
{
    if (raw->has_tvm_op || (nn_raw_gattr(raw, "storage_id") && nn_raw_gattr(raw, "dltype")))
        return NN_TVM;
    if (nn_raw_gattr(raw, "mxnet_version") || raw->legacy)
        return NN_MXNET;
    size_t mx = 0, nv = 0;
    for (size_t i = 0; i < raw->n_nodes; i++) {
        const char *op = raw->nodes[i].op;
        if (raw->nodes[i].var)
            continue;
        bool m = nn_op_known(NN_MXNET, op), n = nn_op_known(NN_NNVM, op);
        mx += m && !n;
        nv += n && !m;
    }
    if (mx > nv)
        return NN_MXNET;
    if (nv > mx)
        return NN_NNVM;
    return hint == NN_TVM ? NN_NNVM : hint;
}

/* ---- companion params ---------------------------------------------------- */

static bool ends_with(const char *s, const char *suffix)
{
    return gir_str_ends_with(s, suffix);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* X-symbol.json -> X-NNNN.params (exactly one). */
static gir_status find_epoch_params(const char *json_path, char **out, gir_error *err)
{
    char *dir = gir_path_dirname(json_path);
    const char *base = gir_path_basename(json_path);
    size_t plen = strlen(base) - strlen("-symbol.json");
    if (!dir)
        return gir_nomem(err);
    DIR *d = opendir(dir);
    if (!d) {
        free(dir);
        return GIR_OK;
    }
    char **found = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    gir_status st = GIR_OK;
    while ((e = readdir(d))) {
        const char *nm = e->d_name;
        size_t len = strlen(nm);
        if (len < plen + 1 + 4 + 7 || strncmp(nm, base, plen) != 0 || nm[plen] != '-' || !ends_with(nm, ".params"))
            continue;
        bool digits = true;
        for (size_t i = plen + 1; i < len - 7; i++)
            digits = digits && nm[i] >= '0' && nm[i] <= '9';
        if (!digits || len - 7 - (plen + 1) < 4)
            continue;
        if (!GIR_GROW(found, cap, n + 1) || !(found[n] = gir_strdupf("%s", nm))) {
            st = gir_nomem(err);
            break;
        }
        n++;
    }
    closedir(d);
    if (!st && n > 1) {
        qsort(found, n, sizeof *found, cmp_str);
        gir_buf b = GIR_BUF_INIT;
        for (size_t i = 0; i < n && i < 5; i++)
            gir_buf_printf(&b, "%s%s", i ? ", " : "", found[i]);
        if (n > 5)
            gir_buf_printf(&b, ", ...");
        st = gir_fail(err, GIR_E_ARGUMENT, "%zu parameter files match the graph (%s); choose one with --params", n,
                      b.data ? b.data : "");
        gir_buf_free(&b);
        gir_err_file(err, json_path);
    } else if (!st && n == 1) {
        *out = gir_path_join(dir, found[0]);
        if (!*out)
            st = gir_nomem(err);
    }
    for (size_t i = 0; i < n; i++)
        free(found[i]);
    free(found);
    free(dir);
    return st;
}

gir_status nn_find_params(const char *json_path, char **out, gir_error *err)
{
    *out = NULL;
    if (ends_with(json_path, "-symbol.json") && strlen(gir_path_basename(json_path)) > strlen("-symbol.json")) {
        gir_status st = find_epoch_params(json_path, out, err);
        if (st || *out)
            return st;
        /* No X-NNNN.params: the same stem (X-symbol.params), as the nnvm
         * and tvm writers name a companion of such a file. */
    }
    char *cand = NULL;
    size_t len = strlen(json_path);
    if (ends_with(json_path, "_graph.json"))
        cand = gir_strdupf("%.*s_param.params", (int)(len - strlen("_graph.json")), json_path);
    else if (ends_with(json_path, ".json"))
        cand = gir_strdupf("%.*s.params", (int)(len - 5), json_path);
    else if (ends_with(json_path, ".graph"))
        cand = gir_strdupf("%.*s.params", (int)(len - 6), json_path);
    else
        cand = gir_strdupf("%s.params", json_path);
    if (!cand)
        return gir_nomem(err);
    if (gir_path_exists(cand)) {
        *out = cand;
        return GIR_OK;
    }
    free(cand);
    return GIR_OK;
}

char *nn_params_path_for(const char *json_path, nn_flavour fl)
{
    size_t len = strlen(json_path);
    if (fl == NN_MXNET && ends_with(json_path, "-symbol.json") &&
        strlen(gir_path_basename(json_path)) > strlen("-symbol.json"))
        return gir_strdupf("%.*s-0000.params", (int)(len - strlen("-symbol.json")), json_path);
    if (ends_with(json_path, "_graph.json"))
        return gir_strdupf("%.*s_param.params", (int)(len - strlen("_graph.json")), json_path);
    if (ends_with(json_path, ".json"))
        return gir_strdupf("%.*s.params", (int)(len - 5), json_path);
    if (ends_with(json_path, ".graph"))
        return gir_strdupf("%.*s.params", (int)(len - 6), json_path);
    return gir_strdupf("%s.params", json_path);
}

/* ---- options ---------------------------------------------------------------- */

static gir_status parse_ishapes(nn_reader *r, const char *spec, gir_error *err)
{
    return gir_input_shapes_parse(spec, &r->g->arena, &r->ishapes, &r->n_ishapes, err);
}

/* ---- graph attributes --------------------------------------------------------- */

/* Keeps a graph attribute this reader does not interpret as compact JSON
 * in "<pfx>.graph_attr.<key>". */
static gir_status keep_gattr(nn_reader *r, const nn_gattr *a, gir_error *err)
{
    gir_buf b = GIR_BUF_INIT;
    gir_json_writer w;
    gir_jw_init(&w, &b, GIR_JSON_COMPACT);
    nn_emit_json(&w, a->where);
    bool ok = gir_jw_ok(&w);
    gir_jw_free(&w);
    char *key = gir_strdupf("%s.graph_attr.%s", r->pfx, a->key);
    gir_status st = GIR_OK;
    if (!ok || !key || !b.data || gir_attrs_set_string(r->g, &r->g->meta, key, b.data, err))
        st = gir_nomem(err);
    free(key);
    gir_buf_free(&b);
    return st;
}

static gir_status graph_meta(nn_reader *r, gir_error *err)
{
    gir_graph *g = r->g;
    const nn_raw *raw = r->raw;
    if (gir_attrs_set_string(g, &g->meta, "source.format", r->pfx, err))
        return gir_nomem(err);
    char prod[64];
    if (r->fl == NN_MXNET) {
        if (r->mx_version > 0)
            snprintf(prod, sizeof prod, "MXNet %lld.%lld.%lld", (long long)(r->mx_version / 10000),
                     (long long)(r->mx_version / 100 % 100), (long long)(r->mx_version % 100));
        else
            snprintf(prod, sizeof prod, "MXNet 0.8 or older");
    } else if (r->fl == NN_TVM) {
        snprintf(prod, sizeof prod, raw->relay_layout ? "TVM (Relay graph executor)" : "TVM (NNVM compiler)");
    } else {
        snprintf(prod, sizeof prod, "NNVM");
    }
    if (gir_attrs_set_string(g, &g->meta, "source.producer", prod, err))
        return gir_nomem(err);
    if (raw->n_gattrs) {
        const char **keys = malloc(raw->n_gattrs * sizeof *keys);
        if (!keys)
            return gir_nomem(err);
        for (size_t i = 0; i < raw->n_gattrs; i++)
            keys[i] = raw->gattrs[i].key;
        const char *key = nn_meta_key(r->fl, NN_MK_GRAPH_ATTRS);
        gir_status st = gir_attrs_set_strings(g, &g->meta, key, keys, raw->n_gattrs, err) ? gir_nomem(err) : GIR_OK;
        free(keys);
        if (st)
            return st;
    }
    static const char *const tvm_keys[] = { "shape", "dltype", "storage_id", "device_index", "storage_scope",
                                            "dtype", NULL };
    for (size_t i = 0; i < raw->n_gattrs; i++) {
        const nn_gattr *a = &raw->gattrs[i];
        bool known = false;
        if (r->fl == NN_MXNET && strcmp(a->key, "mxnet_version") == 0)
            known = true;
        for (size_t k = 0; r->fl == NN_TVM && tvm_keys[k]; k++)
            known = known || strcmp(a->key, tvm_keys[k]) == 0;
        if (r->fl == NN_NNVM && (strcmp(a->key, "shape") == 0 || strcmp(a->key, "dtype") == 0))
            known = true;
        if (!known)
            TRY(keep_gattr(r, a, err));
    }
    if (r->fl == NN_MXNET && r->mx_version > 0 && gir_attrs_set_int(g, &g->meta, "mxnet.version", r->mx_version, err))
        return gir_nomem(err);
    /* For a byte-identical same-format write: the params file's order and
     * a final newline dmlc would not write. */
    if (r->params && r->params->n) {
        const char **names = malloc(r->params->n * sizeof *names);
        if (!names)
            return gir_nomem(err);
        for (size_t i = 0; i < r->params->n; i++)
            names[i] = r->params->items[i].name;
        gir_status st = gir_attrs_set_strings(g, &g->meta, "nnvm.param_order", names, r->params->n, err) ? gir_nomem(err)
                                                                                                    : GIR_OK;
        free(names);
        TRY(st);
    }
    if (r->path) {
        FILE *f = fopen(r->path, "rb");
        bool nl = f && fseek(f, -1, SEEK_END) == 0 && fgetc(f) == '\n';
        if (f)
            fclose(f);
        if (nl && gir_attrs_set_string(g, &g->meta, "nnvm.final_newline", "1", err))
            return gir_nomem(err);
    }
    if (r->fl == NN_TVM && raw->relay_layout && gir_attrs_set_string(g, &g->meta, "tvm.layout", "relay", err))
        return gir_nomem(err);
    return nnr_versions_meta(g, &g->meta, nn_meta_key(r->fl, NN_MK_HEAD_VERSIONS), raw->heads, raw->n_heads, err);
}

/* ---- TVM per-entry attributes ------------------------------------------------- */

static gir_status gattr_list(const nn_reader *r, const char *key, const char *type, bool req, size_t n,
                             const gir_json **out, gir_error *err)
{
    *out = NULL;
    const nn_gattr *a = nn_raw_gattr(r->raw, key);
    if (!a) {
        if (!req)
            return GIR_OK;
        gir_fail(err, GIR_E_SCHEMA, "a TVM executor graph needs the graph attribute \"%s\" (%s)", key, type);
        gir_json_err_at(err, r->raw->doc, gir_json_get(gir_json_root(r->raw->doc), "attrs"), "/attrs");
        return GIR_E_SCHEMA;
    }
    if (strcmp(a->type, type) != 0) {
        gir_fail(err, GIR_E_SCHEMA, "graph attribute \"%s\" must be tagged \"%s\", found \"%s\"", key, type, a->type);
        gir_json_err_at(err, r->raw->doc, a->where, "/attrs/%s/0", key);
        return GIR_E_SCHEMA;
    }
    if (!gir_json_is(a->payload, GIR_JSON_ARRAY) || a->payload->len != n) {
        char what[80];
        gir_json_describe(a->payload, what, sizeof what);
        gir_fail(err, GIR_E_SCHEMA, "graph attribute \"%s\" must list %zu entries (one per node output), found %s",
                 key, n, what);
        gir_json_err_at(err, r->raw->doc, a->payload, "/attrs/%s/1", key);
        return GIR_E_SCHEMA;
    }
    *out = a->payload;
    return GIR_OK;
}

static gir_status entry_err(const nn_reader *r, const char *key, size_t e, const gir_json *v, gir_status code,
                            const char *expected, gir_error *err)
{
    char what[80];
    gir_json_describe(v, what, sizeof what);
    gir_fail(err, code, "%s entries must be %s, found %s", key, expected, what);
    gir_json_err_at(err, r->raw->doc, v, "/attrs/%s/1/%zu", key, e);
    return code;
}

static gir_status set_meta_int(gir_graph *g, gir_value *v, const char *key, int64_t x, gir_error *err)
{
    return gir_attrs_set_int(g, &v->meta, key, x, err) ? gir_nomem(err) : GIR_OK;
}

/* An NNVM graph saved after shape/type inference carries "shape"
 * (list_shape) and "dtype" (list_int, NNVM type codes) per entry: an empty
 * shape or a 0 dimension means unknown, as in NNVM. */
static gir_status nnvm_entries(nn_reader *r, gir_error *err)
{
    const nn_raw *raw = r->raw;
    const nn_gattr *sa = nn_raw_gattr(raw, "shape"), *da = nn_raw_gattr(raw, "dtype");
    if (!sa && !da)
        return GIR_OK;
    if (!raw->has_row_ptr || !raw->row_ptr_ok) {
        gir_fail(err, GIR_E_SCHEMA, "graph attributes shape/dtype need node_row_ptr (%zu non-decreasing offsets "
                 "from 0) to find their entries", raw->n_nodes + 1);
        gir_json_err_at(err, raw->doc, sa ? sa->where : da->where, "/attrs/%s", sa ? "shape" : "dtype");
        return GIR_E_SCHEMA;
    }
    size_t n = (size_t)raw->row_ptr[raw->n_nodes];
    const gir_json *shape = NULL, *dtype = NULL;
    if (sa)
        TRY(gattr_list(r, "shape", "list_shape", true, n, &shape, err));
    if (da)
        TRY(gattr_list(r, "dtype", "list_int", true, n, &dtype, err));
    gir_graph *g = r->g;
    for (size_t i = 0; i < raw->n_nodes; i++) {
        int64_t outs = raw->nodes[i].row_outputs;
        for (int64_t k = 0; k < outs && (uint64_t)k < r->n_outs[i]; k++) {
            size_t e = (size_t)raw->row_ptr[i] + (size_t)k;
            int32_t vi = r->outs[i][k];
            if (vi < 0)
                continue;
            gir_value *v = g->values[vi];
            const gir_json *sj = shape ? gir_json_at(shape, e) : NULL;
            if (sj) {
                if (!gir_json_is(sj, GIR_JSON_ARRAY) || sj->len > GIR_MAX_RANK)
                    return entry_err(r, "shape", e, sj, GIR_E_SCHEMA, "shapes of at most 8 dimensions", err);
                gir_shape s = { .rank = sj->len ? (int)sj->len : -1 };
                for (size_t d = 0; d < sj->len; d++) {
                    int64_t x;
                    if (!gir_json_get_i64(gir_json_at(sj, d), &x) || x < 0)
                        return entry_err(r, "shape", e, gir_json_at(sj, d), GIR_E_SHAPE,
                                         "shapes of non-negative integers", err);
                    s.dims[d] = x ? x : -1;
                }
                if (s.rank > 0 && gir_shape_numel(&s) < 0) {
                    bool known = true;
                    for (int d = 0; d < s.rank; d++)
                        known = known && s.dims[d] >= 0;
                    if (known)
                        return entry_err(r, "shape", e, sj, GIR_E_LIMIT,
                                         "shapes whose element count fits in 64 bits", err);
                }
                /* The input-shape option wins over the file. */
                bool given = false;
                for (size_t q = 0; q < r->n_ishapes && !given; q++)
                    given = strcmp(r->ishapes[q].name, v->name) == 0;
                if (s.rank >= 0 && !v->data && !given)
                    v->shape = s;
            }
            int64_t code;
            if (dtype && !gir_json_get_i64(gir_json_at(dtype, e), &code))
                return entry_err(r, "dtype", e, gir_json_at(dtype, e), GIR_E_SCHEMA, "integers", err);
            if (dtype && !v->data) {
                for (int t = GIR_DT_UNKNOWN + 1; t < GIR_DT_COUNT_; t++)
                    if (gir_nnvm_dtype_code((gir_dtype)t) == code)
                        v->dtype = (gir_dtype)t;
            }
        }
    }
    return GIR_OK;
}

static gir_status tvm_entries(nn_reader *r, gir_error *err)
{
    const nn_raw *raw = r->raw;
    if (!raw->has_row_ptr || !raw->row_ptr_ok) {
        gir_fail(err, GIR_E_SCHEMA, "a TVM executor graph needs node_row_ptr: %zu non-decreasing offsets from 0",
                 raw->n_nodes + 1);
        gir_json_err_at(err, raw->doc, gir_json_get(gir_json_root(raw->doc), "node_row_ptr"), "/node_row_ptr");
        return GIR_E_SCHEMA;
    }
    for (size_t i = 0; i < raw->n_nodes; i++) {
        int64_t want = r->n_outs[i];
        if (raw->nodes[i].row_outputs != want) {
            gir_fail(err, GIR_E_SCHEMA, "node %zu ('%s') has %lld output%s, but node_row_ptr gives it %lld", i,
                     raw->nodes[i].name, (long long)want, want == 1 ? "" : "s",
                     (long long)raw->nodes[i].row_outputs);
            gir_json_err_at(err, raw->doc, gir_json_at(gir_json_get(gir_json_root(raw->doc), "node_row_ptr"), i + 1),
                            "/node_row_ptr/%zu", i + 1);
            return GIR_E_SCHEMA;
        }
    }
    size_t n = (size_t)raw->row_ptr[raw->n_nodes];
    const gir_json *shape, *dltype, *sid, *dev, *scope, *dtype;
    TRY(gattr_list(r, "shape", "list_shape", true, n, &shape, err));
    TRY(gattr_list(r, "dltype", "list_str", true, n, &dltype, err));
    TRY(gattr_list(r, "storage_id", "list_int", true, n, &sid, err));
    TRY(gattr_list(r, "device_index", "list_int", false, n, &dev, err));
    TRY(gattr_list(r, "storage_scope", "list_str", false, n, &scope, err));
    TRY(gattr_list(r, "dtype", "list_int", false, n, &dtype, err));
    gir_graph *g = r->g;
    for (size_t i = 0; i < raw->n_nodes; i++) {
        for (uint32_t k = 0; k < r->n_outs[i]; k++) {
            size_t e = (size_t)raw->row_ptr[i] + k;
            int32_t vi = r->outs[i][k];
            if (vi < 0)
                continue;
            gir_value *v = g->values[vi];
            const gir_json *sj = gir_json_at(shape, e);
            if (!gir_json_is(sj, GIR_JSON_ARRAY) || sj->len > GIR_MAX_RANK)
                return entry_err(r, "shape", e, sj, sj && sj->type == GIR_JSON_ARRAY ? GIR_E_LIMIT : GIR_E_SCHEMA,
                                 "shapes of at most 8 dimensions", err);
            gir_shape s = { .rank = (int)sj->len };
            for (size_t d = 0; d < sj->len; d++) {
                int64_t x;
                if (!gir_json_get_i64(gir_json_at(sj, d), &x) || x < 0)
                    return entry_err(r, "shape", e, gir_json_at(sj, d), GIR_E_SHAPE,
                                     "shapes of non-negative integers (the executor has no dynamic shapes)", err);
                s.dims[d] = x;
            }
            if (v->data && !gir_shape_equal(&s, &v->data->shape)) {
                char a[128], b[128];
                gir_fail(err, GIR_E_SHAPE, "parameter '%s' has shape %s, but the graph says %s", v->name,
                         gir_shape_str(&v->data->shape, a, sizeof a), gir_shape_str(&s, b, sizeof b));
                gir_json_err_at(err, raw->doc, sj, "/attrs/shape/1/%zu", e);
                gir_err_node(err, v->name);
                return GIR_E_SHAPE;
            }
            if (gir_shape_numel(&s) < 0)
                return entry_err(r, "shape", e, sj, GIR_E_LIMIT, "shapes whose element count fits in 64 bits",
                                 err);
            v->shape = s;
            const char *dl = gir_json_get_cstr(gir_json_at(dltype, e));
            if (!dl)
                return entry_err(r, "dltype", e, gir_json_at(dltype, e), GIR_E_SCHEMA,
                                 "type names", err);
            gir_dtype dt = gir_dltype(dl);
            if (dt == GIR_DT_UNKNOWN && !gir_dltype_plausible(dl))
                return entry_err(r, "dltype", e, gir_json_at(dltype, e), GIR_E_DTYPE,
                                 "TVM type names (int, uint, float, bfloat, bool or handle, bits up to 128, lanes "
                                 "up to 1024)",
                                 err);
            if (dt != GIR_DT_UNKNOWN) {
                uint64_t nb;
                gir_status sst = gir_tensor_size(dt, &s, &nb, err);
                if (sst) {
                    gir_json_err_at(err, raw->doc, sj, "/attrs/shape/1/%zu", e);
                    return sst;
                }
            }
            if (dt == GIR_DT_UNKNOWN) {
                if (gir_attrs_set_string(g, &v->meta, "tvm.dltype", dl, err))
                    return gir_nomem(err);
            } else if (v->data && v->data->dtype != dt) {
                gir_fail(err, GIR_E_DTYPE, "parameter '%s' has type %s, but the graph says %s", v->name,
                         gir_dtype_name(v->data->dtype), dl);
                gir_json_err_at(err, raw->doc, gir_json_at(dltype, e), "/attrs/dltype/1/%zu", e);
                gir_err_node(err, v->name);
                return GIR_E_DTYPE;
            } else {
                v->dtype = dt;
            }
            int64_t x;
            if (!gir_json_get_i64(gir_json_at(sid, e), &x))
                return entry_err(r, "storage_id", e, gir_json_at(sid, e), GIR_E_SCHEMA,
                                 "integers", err);
            /* storage ids number the executor's buffers: at most one per entry */
            if (x < 0 || (uint64_t)x >= (uint64_t)n)
                return entry_err(r, "storage_id", e, gir_json_at(sid, e), GIR_E_SCHEMA,
                                 "buffer numbers from 0 to the entry count less one", err);
            TRY(set_meta_int(g, v, "tvm.storage_id", x, err));
            if (dev) {
                if (!gir_json_get_i64(gir_json_at(dev, e), &x))
                    return entry_err(r, "device_index", e, gir_json_at(dev, e), GIR_E_SCHEMA,
                                     "integers", err);
                TRY(set_meta_int(g, v, "tvm.device_index", x, err));
            }
            if (scope) {
                const char *sc = gir_json_get_cstr(gir_json_at(scope, e));
                if (!sc)
                    return entry_err(r, "storage_scope", e, gir_json_at(scope, e), GIR_E_SCHEMA,
                                     "strings", err);
                if (gir_attrs_set_string(g, &v->meta, "tvm.storage_scope", sc, err))
                    return gir_nomem(err);
            }
            if (dtype) {
                if (!gir_json_get_i64(gir_json_at(dtype, e), &x))
                    return entry_err(r, "dtype", e, gir_json_at(dtype, e), GIR_E_SCHEMA,
                                     "integers", err);
                if (x != gir_nnvm_dtype_code(v->dtype))
                    TRY(set_meta_int(g, v, "tvm.dtype", x, err));
            }
        }
    }
    return GIR_OK;
}

/* ---- the read --------------------------------------------------------------------- */

static int by_key_cmp(const void *a, const void *b, void *ctx)
{
    const gir_params *p = ctx;
    const gir_param *x = &p->items[*(const size_t *)a], *y = &p->items[*(const size_t *)b];
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

static gir_status setup_params(nn_reader *r, const gir_params *p, gir_error *err)
{
    r->params = p;
    r->claimed = nn_arena_array(&r->scratch, p->n, sizeof *r->claimed);
    r->by_key = nn_arena_array(&r->scratch, p->n, sizeof *r->by_key);
    if (!r->claimed || !r->by_key)
        return gir_nomem(err);
    for (size_t i = 0; i < p->n; i++) {
        r->claimed[i] = -1;
        r->by_key[i] = i;
        if (!p->items[i].name) {
            gir_fail(err, GIR_E_PARAMS, "the parameters file has no names (an unnamed list saved by mx.nd.save), "
                     "so its arrays cannot be matched to the graph's variables");
            gir_err_file(err, p->path);
            return GIR_E_PARAMS;
        }
    }
    qsort_r(r->by_key, p->n, sizeof *r->by_key, by_key_cmp, (void *)p);
    for (size_t i = 1; i < p->n; i++) {
        const gir_param *a = &p->items[r->by_key[i - 1]], *b = &p->items[r->by_key[i]];
        if (strcmp(a->key, b->key) == 0) {
            gir_fail(err, GIR_E_DUPLICATE, "parameters '%s' and '%s' both name variable '%s'", a->name, b->name,
                     a->key);
            gir_err_file(err, p->path);
            gir_err_loc(err, "byte %llu", (unsigned long long)b->record);
            return GIR_E_DUPLICATE;
        }
    }
    return GIR_OK;
}

/* Nodes that only compute the labels of output layers (a label variable,
 * or operators reshaping one): dropped, as inference never reads them.  A
 * node is kept when the heads reach it through other edges. */
static gir_status find_labels(nn_reader *r, gir_error *err)
{
    const nn_raw *raw = r->raw;
    if (r->fl != NN_MXNET)
        return GIR_OK;
    size_t n = raw->n_nodes;
    unsigned char *need = calloc(n ? n : 1, 1), *lab = calloc(n ? n : 1, 1);
    if (!need || !lab) {
        free(need);
        free(lab);
        return gir_nomem(err);
    }
    for (size_t i = 0; i < raw->n_heads; i++)
        need[raw->heads[i].node] = 1;
    /* raw->order is topological: walk it backwards. */
    for (size_t k = n; k-- > 0;) {
        size_t i = raw->order[k];
        const nn_node *nd = &raw->nodes[i];
        for (size_t j = 0; j < nd->n_in; j++) {
            uint32_t s = nd->in[j].node;
            if (nn_is_label_edge(nd, j))
                lab[s] = 1;
            else if (need[i])
                need[s] = 1;
            if (lab[i])
                lab[s] = 1;
        }
    }
    for (size_t i = 0; i < n; i++) {
        r->label_only[i] = lab[i] && !need[i];
        if (r->label_only[i] && !raw->nodes[i].var)
            r->n_label_ops++;
    }
    free(need);
    free(lab);
    return GIR_OK;
}

/* Whether graph input v is a weight by its use (an operand of Conv, Gemm,
 * BatchNormalization or PRelu other than the data) or its MXNet name. */
static bool weight_like(const gir_graph *g, int32_t v)
{
    static const char *const sfx[] = { "_weight", "_bias", "_gamma", "_beta", "_moving_mean", "_moving_var",
                                       "_running_mean", "_running_var", NULL };
    const char *name = g->values[v]->name;
    size_t len = strlen(name);
    for (size_t i = 0; sfx[i]; i++)
        if (len > strlen(sfx[i]) && strcmp(name + len - strlen(sfx[i]), sfx[i]) == 0)
            return true;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gir_node *n = g->nodes[i];
        bool w = n->op == GIR_OP_Conv || n->op == GIR_OP_ConvTranspose || n->op == GIR_OP_Gemm ||
                 n->op == GIR_OP_BatchNormalization || n->op == GIR_OP_PRelu;
        for (size_t k = 1; w && k < n->n_in; k++)
            if (n->in[k] == v)
                return true;
        /* PRelu's slope through its Unsqueeze */
        if (n->op == GIR_OP_Unsqueeze && n->n_in == 1 && n->in[0] == v && n->out[0] >= 0)
            for (size_t j = 0; j < g->n_nodes; j++)
                if (g->nodes[j]->op == GIR_OP_PRelu && g->nodes[j]->n_in == 2 && g->nodes[j]->in[1] == n->out[0])
                    return true;
    }
    return false;
}

/* The weights files nn_find_params looks for, for messages. */
static char *params_looked_for(const char *path)
{
    size_t len = strlen(path);
    const char *base = gir_path_basename(path);
    if (ends_with(path, "-symbol.json") && strlen(base) > strlen("-symbol.json")) {
        int k = (int)(strlen(base) - strlen("-symbol.json"));
        return gir_strdupf("%.*s-NNNN.params or %.*s-symbol.params", k, base, k, base);
    }
    char *full = ends_with(path, "_graph.json") ? gir_strdupf("%.*s_param.params", (int)(len - 11), path)
               : ends_with(path, ".json")       ? gir_strdupf("%.*s.params", (int)(len - 5), path)
               : ends_with(path, ".graph")      ? gir_strdupf("%.*s.params", (int)(len - 6), path)
                                                : gir_strdupf("%s.params", path);
    char *out = full ? gir_strdupf("%s", gir_path_basename(full)) : NULL;
    free(full);
    return out;
}

/* Graph inputs of unknown rank take the rank their consumers imply (the
 * data of a 2-d convolution or pooling is 4-d, of a Gemm 2-d, of a recurrent
 * operator 3-d, and so are its initial states), so that
 * formats that declare every input's rank can be written. */
static gir_status ranks_from_consumers(gir_graph *g, gir_error *err)
{
    bool changed = false;
    for (size_t i = 0; i < g->n_inputs; i++) {
        gir_value *v = g->values[g->inputs[i]];
        if (v->shape.rank >= 0)
            continue;
        int rank = -1;
        for (size_t j = 0; j < g->n_nodes && rank < 0; j++) {
            const gir_node *n = g->nodes[j];
            for (size_t slot = 0; slot < n->n_in && rank < 0; slot++) {
                if (n->in[slot] != g->inputs[i])
                    continue;
                const int64_t *k;
                ptrdiff_t nk;
                switch (n->op) {
                case GIR_OP_Conv: case GIR_OP_ConvTranspose: case GIR_OP_MaxPool: case GIR_OP_AveragePool:
                    nk = slot == 0 ? gir_attrs_get_ints(&n->attrs, "kernel_shape", &k) : 0;
                    rank = nk >= 1 ? (int)nk + 2 : -1;
                    break;
                case GIR_OP_Gemm: rank = slot == 0 ? 2 : -1; break;
                /* X, initial_h and initial_c of a recurrent operator are 3-d */
                case GIR_OP_LSTM: case GIR_OP_GRU: case GIR_OP_RNN:
                    rank = slot == 0 || slot == 5 || slot == 6 ? 3 : -1;
                    break;
                default: break;
                }
            }
        }
        if (rank < 0)
            continue;
        v->shape.rank = rank;
        for (int d = 0; d < rank; d++)
            v->shape.dims[d] = -1;
        changed = true;
    }
    return changed ? gir_graph_finish(g, err) : GIR_OK;
}

/* With no weights file, a graph whose variables include weights would run
 * on whatever the caller feeds them: refused unless the caller accepts the
 * weights as inputs (then their shapes are completed from the data's). */
static gir_status check_weights(nn_reader *r, const char *path, bool as_inputs, gir_error *err)
{
    gir_graph *g = r->g;
    size_t n = 0;
    const char *first = NULL;
    for (size_t i = 0; i < g->n_inputs; i++) {
        bool w = r->fl == NN_TVM ? i > 0 : weight_like(g, g->inputs[i]);
        if (w && !n++)
            first = g->values[g->inputs[i]]->name;
    }
    if (!n)
        return GIR_OK;
    if (as_inputs)
        return gir_graph_note(g, err, "no weights file: %zu weight%s (first '%s') taken as graph inputs", n,
                              n == 1 ? "" : "s", first) ? gir_nomem(err) : GIR_OK;
    char *looked = params_looked_for(path);
    gir_fail(err, GIR_E_PARAMS, "no weights file found beside the graph (looked for %s): its %zu weight%s (first "
             "'%s') would become graph inputs; give the file with --params FILE, or accept weights as inputs with "
             "--weights-as-inputs (reader option weights-as-inputs=1)",
             looked ? looked : "?", n, n == 1 ? "" : "s", first);
    free(looked);
    gir_err_file(err, path);
    return GIR_E_PARAMS;
}

/* Weights taken as inputs: dimensions the data's shape decides (input
 * channels, Gemm's K, per-channel vectors) completed after inference. */
static gir_status complete_weight_shapes(gir_graph *g, gir_error *err)
{
    bool changed = false;
    for (size_t i = 0; i < g->n_nodes; i++) {
        const gir_node *n = g->nodes[i];
        if (n->n_in < 2 || n->in[0] < 0 || n->in[1] < 0)
            continue;
        const gir_shape *x = &g->values[n->in[0]]->shape;
        gir_value *w = g->values[n->in[1]];
        if (w->kind != GIR_VALUE_INPUT || x->rank < 2 || x->dims[1] < 0)
            continue;
        int64_t c = x->dims[1];
        if (n->op == GIR_OP_Conv && w->shape.rank >= 2 && w->shape.dims[1] < 0) {
            w->shape.dims[1] = c / gir_attrs_get_int(&n->attrs, "group", 1);
            changed = true;
        } else if (n->op == GIR_OP_ConvTranspose && w->shape.rank >= 2 && w->shape.dims[0] < 0) {
            w->shape.dims[0] = c;
            changed = true;
        } else if (n->op == GIR_OP_Gemm && x->rank == 2 && w->shape.rank == 2 && w->shape.dims[1] < 0) {
            w->shape.dims[gir_attrs_get_int(&n->attrs, "transB", 0) ? 1 : 0] = c;
            changed = true;
        } else if (n->op == GIR_OP_BatchNormalization) {
            for (size_t k = 1; k < n->n_in && k < 5; k++) {
                gir_value *p = n->in[k] >= 0 ? g->values[n->in[k]] : NULL;
                if (p && p->kind == GIR_VALUE_INPUT && p->producer < 0 && p->shape.rank <= 1 &&
                    (p->shape.rank < 0 || p->shape.dims[0] < 0)) {
                    p->shape.rank = 1;
                    p->shape.dims[0] = c;
                    changed = true;
                }
            }
        }
    }
    return changed ? gir_graph_finish(g, err) : GIR_OK;
}

static gir_status build(nn_reader *r, gir_error *err)
{
    const nn_raw *raw = r->raw;
    gir_graph *g = r->g;
    size_t n = raw->n_nodes;
    r->outs = nn_arena_array(&r->scratch, n, sizeof *r->outs);
    r->n_outs = nn_arena_array(&r->scratch, n, sizeof *r->n_outs);
    r->label_only = nn_arena_array(&r->scratch, n, sizeof *r->label_only);
    r->var_made = nn_arena_array(&r->scratch, n, sizeof *r->var_made);
    r->bn_synth = nn_arena_array(&r->scratch, n, sizeof *r->bn_synth);
    r->defs = nn_arena_array(&r->scratch, n, sizeof *r->defs);
    if (!r->outs || !r->n_outs || !r->label_only || !r->var_made || !r->bn_synth || !r->defs)
        return gir_nomem(err);
    /* Every node's output slots in one array. */
    uint64_t total = 0;
    for (size_t i = 0; i < raw->n_nodes; i++) {
        bool var = raw->nodes[i].var;
        r->defs[i] = var ? NULL : nn_row_find(r->fl, raw->nodes[i].op);
        r->n_outs[i] = nn_node_outputs(r, i);
        total += r->n_outs[i];
    }
    if (total > SIZE_MAX || !(r->out_slots = nn_arena_array(&r->scratch, (size_t)total, sizeof *r->out_slots)))
        return gir_nomem(err);
    int32_t *slot = r->out_slots;
    for (size_t i = 0; i < raw->n_nodes; i++) {
        r->outs[i] = slot;
        for (uint32_t k = 0; k < r->n_outs[i]; k++)
            slot[k] = -1;
        slot += r->n_outs[i];
    }
    TRY(find_labels(r, err));
    for (size_t k = 0; k < raw->n_nodes; k++) {
        size_t i = raw->order[k];
        if (r->label_only[i])
            continue;
        if (raw->nodes[i].var) {
            TRY(nn_make_var(r, i, err));
        } else {
            TRY(nn_map_node(r, i, err));
        }
    }
    for (size_t i = 0; i < raw->n_heads; i++) {
        const nn_entry *e = &raw->heads[i];
        int32_t v = e->index < r->n_outs[e->node] ? r->outs[e->node][e->index] : -1;
        if (v < 0 && raw->nodes[e->node].var) {
            TRY(nn_make_var(r, e->node, err));
            v = r->outs[e->node][0];
        }
        if (v < 0) {
            gir_fail(err, GIR_E_UNSUPPORTED, "graph output %zu is output %u of '%s' (%s), which has no counterpart",
                     i, e->index, raw->nodes[e->node].name, raw->nodes[e->node].op);
            gir_json_err_at(err, raw->doc, gir_json_at(raw->heads_json, i), "/heads/%zu", i);
            return GIR_E_UNSUPPORTED;
        }
        TRY(gir_graph_add_output(g, v, err));
    }
    if (r->params) {
        for (size_t i = 0; i < r->params->n; i++) {
            if (r->claimed[i] < 0) {
                gir_fail(err, GIR_E_PARAMS, "parameter '%s' matches no variable of the graph", r->params->items[i].name);
                gir_err_file(err, r->params->path);
                gir_err_loc(err, "byte %llu", (unsigned long long)r->params->items[i].record);
                gir_err_node(err, r->params->items[i].name);
                return GIR_E_PARAMS;
            }
        }
    }
    for (size_t i = 0; i < r->n_ishapes; i++) {
        if (!r->ishapes[i].used) {
            int32_t v = gir_graph_value_index(g, r->ishapes[i].name);
            return gir_fail(err, GIR_E_ARGUMENT, "input-shape names '%s', which is %s", r->ishapes[i].name,
                            v < 0 ? "not a variable of the graph" : "a parameter, not an input");
        }
    }
    TRY(graph_meta(r, err));
    if (r->n_synth && gir_graph_note(g, err, "MXNet 0.8 file: gave %zu BatchNorm node%s the auxiliary inputs "
                                        "<name>_moving_mean and <name>_moving_var, as MXNet's loader does",
                                     r->n_synth, r->n_synth == 1 ? "" : "s"))
        return gir_nomem(err);
    if (r->n_labels && gir_graph_note(g, err, "dropped the label input of %zu output layer%s (SoftmaxOutput and the like: "
                                         "inference does not read it; an MXNet writer puts a label variable back)",
                                      r->n_labels, r->n_labels == 1 ? "" : "s"))
        return gir_nomem(err);
    if (r->n_label_ops && gir_graph_note(g, err, "dropped %zu operator%s that only computed labels of output layers",
                                         r->n_label_ops, r->n_label_ops == 1 ? "" : "s"))
        return gir_nomem(err);
    if (r->fl == NN_TVM)
        TRY(tvm_entries(r, err));
    if (r->fl == NN_NNVM)
        TRY(nnvm_entries(r, err));
    /* Inputs with no recorded type: float32, MXNet's and NNVM's default. */
    size_t untyped = 0;
    const char *first = NULL;
    for (size_t i = 0; r->fl != NN_TVM && i < g->n_inputs; i++) {
        gir_value *v = g->values[g->inputs[i]];
        if (v->dtype == GIR_DT_UNKNOWN) {
            v->dtype = GIR_DT_F32;
            if (!untyped++)
                first = v->name;
        }
    }
    if (untyped && gir_graph_note(g, err, "%zu input%s without a recorded type (first '%s') taken as float32, the %s "
                                     "default", untyped, untyped == 1 ? "" : "s", first,
                                  r->fl == NN_MXNET ? "MXNet" : "NNVM"))
        return gir_nomem(err);
    TRY(gir_graph_finish(g, err));
    TRY(ranks_from_consumers(g, err));
    if (!r->params) {
        TRY(check_weights(r, r->path, r->weights_as_inputs, err));
        if (r->weights_as_inputs)
            TRY(complete_weight_shapes(g, err));
    }
    return nn_resolve_pending(r, err);
}

static void reader_free(nn_reader *r)
{
    gir_arena_free(&r->scratch);
    free(r->ishapes);
    free(r->why);
}

/* Everything after the structure: raw (parsed with status st, freed here)
 * into a graph, with the params file. */
static gir_status read_raw(const char *path, const gir_options *opts, nn_flavour hint, nn_raw *raw, gir_status st,
                           gir_graph **out, gir_error *err)
{
    gir_params params;
    bool have_params = false;
    char *ppath = NULL;
    nn_reader r = { 0 };
    if (!st) {
        r.raw = raw;
        r.fl = classify(raw, hint);
        r.pfx = nn_flavour_name(r.fl);
        st = gir_graph_new(&r.g, err);
    }
    if (!st) {
        const nn_gattr *ver = nn_raw_gattr(raw, "mxnet_version");
        if (ver && (strcmp(ver->type, "int") != 0 || !gir_json_get_i64(ver->payload, &r.mx_version) ||
                    r.mx_version < 0)) {
            char what[80];
            gir_json_describe(ver->payload, what, sizeof what);
            st = gir_fail(err, GIR_E_SCHEMA, "mxnet_version must be [\"int\", N], found type \"%s\" and %s",
                          ver->type, what);
            gir_json_err_at(err, raw->doc, ver->where, "/attrs/mxnet_version");
        }
    }
    r.path = path;
    r.weights_as_inputs = gir_options_flag(opts, "weights-as-inputs");
    const char *spec = gir_options_get(opts, "input-shape");
    if (!st && spec)
        st = parse_ishapes(&r, spec, err);
    if (!st)
        st = gir_options_int(opts, "batch-size", 0, &r.batch, err);
    if (!st && r.batch < 0)
        st = gir_fail(err, GIR_E_ARGUMENT, "option batch-size must be positive");
    if (!st) {
        const char *given = gir_options_get(opts, "params");
        if (given)
            ppath = gir_strdupf("%s", given);
        else
            st = nn_find_params(path, &ppath, err);
        if (!st && given && !ppath)
            st = gir_nomem(err);
    }
    if (!st && ppath) {
        st = gir_params_open(ppath, &params, err);
        have_params = true;
        if (!st)
            st = setup_params(&r, &params, err);
    }
    if (!st)
        st = build(&r, err);
    /* which weights file was read (graphconv info shows it) */
    if (!st && ppath && gir_attrs_set_string(r.g, &r.g->meta, "source.params", ppath, err))
        st = gir_nomem(err);
    if (st) {
        if (!err || !err->file)
            gir_err_file(err, path);
        gir_graph_free(r.g);
        r.g = NULL;
    }
    reader_free(&r);
    if (have_params)
        gir_params_free(&params);
    free(ppath);
    nn_raw_free(raw);
    *out = r.g;
    return st;
}

gir_status nn_read_ex(const char *path, const gir_options *opts, nn_flavour hint, nn_read_mode mode, bool *fast_used,
                      gir_graph **out, gir_error *err)
{
    *out = NULL;
    if (fast_used)
        *fast_used = false;
    unsigned char head[8];
    size_t got;
    TRY(gir_read_head(path, head, sizeof head, &got, err));
    if (got == 0) {
        gir_fail(err, GIR_E_UNKNOWN_FORMAT, "file is empty");
        gir_err_file(err, path);
        return GIR_E_UNKNOWN_FORMAT;
    }
    bool npz;
    int pk = gir_params_sniff(head, got, &npz);
    if (pk) {
        gir_fail(err, GIR_E_SYNTAX, "this is %s parameters file, not a graph JSON; give the graph JSON and pass the "
                 "params with --params", npz ? "an MXNet 2.x (NumPy)" : pk == GIR_PARAMS_TVM ? "a TVM" : "an MXNet");
        gir_err_file(err, path);
        return GIR_E_SYNTAX;
    }
    int64_t max_bytes;
    TRY(gir_options_int(opts, "max-bytes", 0, &max_bytes, err));
    if (max_bytes < 0)
        return gir_fail(err, GIR_E_ARGUMENT, "option max-bytes must not be negative");
    gir_json_options jo = { .no_utf8_check = true };
    gir_json_doc *doc;
    TRY(gir_json_open_file(path, (size_t)max_bytes, &doc, err));
    nn_raw raw;
    gir_status st;
    if (mode != NN_READ_REFERENCE && nn_raw_parse_fast(doc, &jo, &raw)) {
        /* Errors from here on point into the DOM (nn_kv.where, ...), which
         * the fast path did not build: on any failure the graph, its notes
         * and the error are dropped, and the file is read again below. */
        if (fast_used)
            *fast_used = true;
        gir_error scratch = GIR_ERROR_INIT;
        st = read_raw(path, opts, hint, &raw, GIR_OK, out, &scratch);
        gir_error_clear(&scratch);
        if (!st) {
            gir_json_doc_free(doc);
            return GIR_OK;
        }
    }
    st = gir_json_doc_parse(doc, &jo, err);
    if (st) {
        gir_err_file(err, path);
        gir_json_doc_free(doc);
        return st;
    }
    st = nn_raw_parse(doc, &raw, err);
    st = read_raw(path, opts, hint, &raw, st, out, err);
    gir_json_doc_free(doc);
    return st;
}

gir_status nn_read(const char *path, const gir_options *opts, nn_flavour hint, gir_graph **out, gir_error *err)
{
    return nn_read_ex(path, opts, hint, NN_READ_AUTO, NULL, out, err);
}
