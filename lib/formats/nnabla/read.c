/* Reading .nnp archives and standalone .nntxt/.prototxt files. */
#include "nnabla.h"

#include "io/zip.h"
#include "passes/passes.h"

#include <stdlib.h>
#include <string.h>

/* ---- sources --------------------------------------------------------------- */

static const char *extension(const char *name)
{
    const char *base = strrchr(name, '/');
    base = base ? base + 1 : name;
    const char *dot = strrchr(base, '.');
    return dot ? dot : "";
}

static gir_status merge_text(Nnabla__NNablaProtoBuf *pb, const char *text, size_t len, const char *label,
                             gir_error *err)
{
    gir_status st = gir_pbtext_merge(text, len, &pb->base, err);
    if (st)
        gir_err_file(err, label);
    return st;
}

static bool is_hdf5(const unsigned char *p, size_t n)
{
    static const unsigned char magic[8] = { 0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n' };
    return n >= 8 && memcmp(p, magic, 8) == 0;
}

/* Reads every member nnabla reads: networks from *.nntxt / *.prototxt (all
 * of them, merged in archive order), parameters from *.protobuf and *.h5. */
static gir_status read_archive(const char *path, const gir_zip_limits *lim, Nnabla__NNablaProtoBuf *pb,
                               nnb_params *params, bool *have_params, gir_error *err)
{
    gir_zip *z;
    TRY(gir_zip_open(path, lim, &z, err));
    gir_status st = GIR_OK;
    size_t n_text = 0;
    for (size_t i = 0; i < gir_zip_count(z) && !st; i++) {
        if (gir_zip_is_dir(z, i))
            continue;
        const char *name = gir_zip_name(z, i);
        const char *ext = extension(name);
        bool text = gir_str_ieq(ext, ".nntxt") || gir_str_ieq(ext, ".prototxt");
        bool pbuf = gir_str_ieq(ext, ".protobuf");
        bool h5 = gir_str_ieq(ext, ".h5");
        if (!text && !pbuf && !h5)
            continue; /* nnp_version.txt, solver states, NNC's extra files */
        char *label = gir_strdupf("%s:%s", path, name);
        if (!label) {
            st = gir_nomem(err);
            break;
        }
        if (!text) {
            /* parameters stored uncompressed are read in place */
            uint64_t off;
            gir_error e2 = GIR_ERROR_INIT;
            if (gir_zip_stored_offset(z, i, &off, &e2) == GIR_OK) {
                gir_error_clear(&e2);
                st = nnb_params_add_stored(params, path, off, gir_zip_size(z, i), h5, err);
                if (st)
                    gir_err_file(err, label);
                *have_params = true;
                free(label);
                continue;
            }
            gir_error_clear(&e2);
        }
        void *data;
        size_t len;
        st = gir_zip_read(z, i, &data, &len, err);
        if (st) {
            free(label);
            break;
        }
        if (text) {
            st = merge_text(pb, data, len, label, err);
            free(data);
            n_text++;
        } else {
            st = nnb_params_add(params, data, len, !pbuf, err);
            if (st)
                gir_err_file(err, label);
            *have_params = true;
        }
        free(label);
    }
    gir_zip_close(z);
    if (!st && n_text == 0) {
        gir_fail(err, GIR_E_SCHEMA, "the archive has no network: no .nntxt or .prototxt member");
        gir_err_file(err, path);
        return GIR_E_SCHEMA;
    }
    return st;
}

static gir_status read_params_file(const char *ppath, uint64_t max_bytes, nnb_params *params, gir_error *err)
{
    char *data;
    size_t len;
    TRY(gir_read_file(ppath, max_bytes, &data, &len, err));
    bool h5 = gir_str_ieq(extension(ppath), ".h5") || is_hdf5((const unsigned char *)data, len);
    gir_status st = nnb_params_add(params, data, len, h5, err);
    if (st)
        gir_err_file(err, ppath);
    return st;
}

/* Parameters written into the text itself (nnabla_cli --nnp-parameter-nntxt)
 * count when no parameter file has the same name. */
static gir_status add_text_params(Nnabla__NNablaProtoBuf *pb, nnb_params *params, bool *have_params, gir_error *err)
{
    for (size_t i = 0; i < pb->n_parameter; i++) {
        const Nnabla__Parameter *p = pb->parameter[i];
        *have_params = true;
        if (nnb_params_find(params, p->variable_name) >= 0)
            continue;
        gir_shape s = { 1, { (int64_t)p->n_data } };
        if (p->shape) {
            if (p->shape->n_dim > GIR_MAX_RANK)
                return gir_fail(err, GIR_E_LIMIT, "parameter '%s' has more than %d dimensions", p->variable_name,
                                GIR_MAX_RANK);
            s.rank = (int)p->shape->n_dim;
            for (size_t d = 0; d < p->shape->n_dim; d++)
                s.dims[d] = p->shape->dim[d];
        }
        int64_t numel = gir_shape_numel(&s);
        if (numel < 0 || (uint64_t)numel != p->n_data) {
            char sh[128];
            return gir_fail(err, GIR_E_PARAMS, "parameter '%s' has %zu values but its shape %s holds %lld",
                            p->variable_name, p->n_data, gir_shape_str(&s, sh, sizeof sh), (long long)numel);
        }
        void *data = malloc(p->n_data ? p->n_data * sizeof(float) : 1);
        if (!data)
            return gir_nomem(err);
        if (p->n_data)
            memcpy(data, p->data, p->n_data * sizeof(float));
        gir_tensor *t;
        TRY(gir_tensor_adopt(GIR_DT_F32, &s, data, &t, err));
        char *name = gir_strdupf("%s", p->variable_name);
        if (!name || !GIR_GROW(params->items, params->cap, params->n + 1)) {
            free(name);
            gir_tensor_unref(t);
            return gir_nomem(err);
        }
        params->items[params->n++] = (nnb_param){ name, GIR_DT_F32, s, p->need_grad, t };
    }
    return GIR_OK;
}

/* ---- choosing the network --------------------------------------------------- */

static gir_status choose(const Nnabla__NNablaProtoBuf *pb, const char *want_exec, const char *want_net,
                         ptrdiff_t *exec_i, ptrdiff_t *net_i, gir_error *err)
{
    *exec_i = -1;
    *net_i = -1;
    if (pb->n_network == 0)
        return gir_fail(err, GIR_E_SCHEMA, "the file defines no network");
    if (want_exec) {
        for (size_t i = 0; i < pb->n_executor && *exec_i < 0; i++)
            if (strcmp(pb->executor[i]->name, want_exec) == 0)
                *exec_i = (ptrdiff_t)i;
        if (*exec_i < 0) {
            gir_buf b = GIR_BUF_INIT;
            for (size_t i = 0; i < pb->n_executor; i++)
                gir_buf_printf(&b, "%s'%s'", i ? ", " : "", pb->executor[i]->name);
            gir_fail(err, GIR_E_ARGUMENT, "no executor named '%s' (the file has %s)", want_exec,
                     pb->n_executor ? b.data : "none");
            gir_buf_free(&b);
            return GIR_E_ARGUMENT;
        }
    } else if (want_net) {
        for (size_t i = 0; i < pb->n_executor && *exec_i < 0; i++)
            if (strcmp(pb->executor[i]->network_name, want_net) == 0)
                *exec_i = (ptrdiff_t)i;
    } else if (pb->n_executor) {
        *exec_i = 0;
    }
    const char *net_name = want_net;
    if (*exec_i >= 0) {
        const char *en = pb->executor[*exec_i]->network_name;
        if (want_net && strcmp(want_net, en) != 0)
            return gir_fail(err, GIR_E_ARGUMENT, "executor '%s' runs network '%s', not '%s'",
                            pb->executor[*exec_i]->name, en, want_net);
        net_name = en;
    }
    if (!net_name) {
        *net_i = 0;
        return GIR_OK;
    }
    for (size_t i = 0; i < pb->n_network && *net_i < 0; i++)
        if (strcmp(pb->network[i]->name, net_name) == 0)
            *net_i = (ptrdiff_t)i;
    if (*net_i < 0) {
        if (*exec_i >= 0)
            return gir_fail(err, GIR_E_REFERENCE, "executor '%s' runs network '%s', which the file does not define",
                            pb->executor[*exec_i]->name, net_name);
        return gir_fail(err, GIR_E_ARGUMENT, "no network named '%s'", net_name);
    }
    return GIR_OK;
}

/* ---- building the graph ------------------------------------------------------- */

static gir_status print_to_string(gir_graph *g, const ProtobufCMessage *m, const char **out, gir_error *err)
{
    gir_buf b = GIR_BUF_INIT;
    gir_status st = gir_pbtext_print(m, &b, err);
    if (!st) {
        *out = gir_arena_strndup(&g->arena, b.data ? b.data : "", b.len);
        if (!*out)
            st = gir_nomem(err);
    }
    gir_buf_free(&b);
    return st;
}

static gir_status meta_text(gir_graph *g, gir_attrs *a, const char *key, const ProtobufCMessage *m, gir_error *err)
{
    const char *s;
    TRY(print_to_string(g, m, &s, err));
    if (gir_attrs_set_string(g, a, key, s, err))
        return gir_nomem(err);
    return GIR_OK;
}

/* Graph meta: everything but the chosen network's body, so that writing
 * the graph as .nnp again reproduces the file. */
static gir_status keep_rest(gir_graph *g, Nnabla__NNablaProtoBuf *pb, size_t net_i, ptrdiff_t exec_i,
                            gir_error *err)
{
    Nnabla__Network *net = pb->network[net_i];
    /* the network's header */
    size_t nv = net->n_variable, nf = net->n_function;
    net->n_variable = 0;
    net->n_function = 0;
    gir_status st = meta_text(g, &g->meta, NNB_META_NETWORK, &net->base, err);
    net->n_variable = nv;
    net->n_function = nf;
    TRY(st);
    if (gir_attrs_set_int(g, &g->meta, NNB_META_NETWORK_INDEX, (int64_t)net_i, err))
        return gir_nomem(err);
    if (exec_i >= 0) {
        TRY(meta_text(g, &g->meta, NNB_META_EXECUTOR, &pb->executor[exec_i]->base, err));
        if (gir_attrs_set_int(g, &g->meta, NNB_META_EXECUTOR_INDEX, (int64_t)exec_i, err))
            return gir_nomem(err);
    }
    /* the rest: other networks and executors, configs, datasets, ... */
    Nnabla__Network **nets = pb->network;
    Nnabla__Executor **execs = pb->executor;
    size_t n_nets = pb->n_network, n_execs = pb->n_executor, n_par = pb->n_parameter;
    Nnabla__Network **rn = malloc((n_nets ? n_nets : 1) * sizeof *rn);
    Nnabla__Executor **re = malloc((n_execs ? n_execs : 1) * sizeof *re);
    if (!rn || !re) {
        free(rn);
        free(re);
        return gir_nomem(err);
    }
    size_t k = 0;
    for (size_t i = 0; i < n_nets; i++)
        if (i != net_i)
            rn[k++] = nets[i];
    pb->network = rn;
    pb->n_network = k;
    k = 0;
    for (size_t i = 0; i < n_execs; i++)
        if ((ptrdiff_t)i != exec_i)
            re[k++] = execs[i];
    pb->executor = re;
    pb->n_executor = k;
    pb->n_parameter = 0;
    st = meta_text(g, &g->meta, NNB_META_REST, &pb->base, err);
    pb->network = nets;
    pb->n_network = n_nets;
    pb->executor = execs;
    pb->n_executor = n_execs;
    pb->n_parameter = n_par;
    free(rn);
    free(re);
    return st;
}

typedef struct builder {
    gir_graph *g;
    const Nnabla__Network *net;
    const Nnabla__Executor *exec;
    int64_t batch;        /* --batch-size, or -1 */
    nnb_params *params;
    bool have_params;
    int32_t *producer;    /* value -> producing function index, or -1 */
    uint8_t *consumed;    /* value -> used as a function input */
    uint8_t *bn_only;
    uint8_t *affine_only;
    uint32_t *uses;       /* value -> function inputs reading it */
    uint8_t *used_param;  /* params index -> attached to a value */
    gir_error *err;
} builder;

static gir_status make_values(builder *b)
{
    gir_graph *g = b->g;
    const Nnabla__Network *net = b->net;
    for (size_t i = 0; i < net->n_variable; i++) {
        const Nnabla__Variable *v = net->variable[i];
        if (!v->name[0])
            return gir_fail(b->err, GIR_E_SCHEMA, "variable %zu of network '%s' has no name", i, net->name);
        bool is_param = strcmp(v->type, "Parameter") == 0;
        int32_t idx;
        gir_status st = gir_graph_add_value(g, v->name, is_param ? GIR_VALUE_WEIGHT : GIR_VALUE_INPUT, &idx, b->err);
        if (st) {
            if (st == GIR_E_DUPLICATE)
                gir_err_replace_message(b->err, "variable '%s' is declared twice in network '%s'", v->name,
                                        net->name);
            return st;
        }
        gir_value *gv = g->values[idx];
        gv->dtype = GIR_DT_F32;
        if (v->shape) {
            if (v->shape->n_dim > GIR_MAX_RANK)
                return gir_fail(b->err, GIR_E_LIMIT, "variable '%s' has %zu dimensions; at most %d are supported",
                                v->name, v->shape->n_dim, GIR_MAX_RANK);
            gv->shape.rank = (int)v->shape->n_dim;
            for (size_t d = 0; d < v->shape->n_dim; d++) {
                int64_t dim = v->shape->dim[d];
                if (dim < 1) {
                    /* the batch placeholder (variable_batch_size) */
                    if (b->batch > 0) {
                        dim = b->batch;
                    } else {
                        dim = -1;
                        gv->dim_names[d] = gir_arena_strdup(&g->arena, "batch");
                        if (!gv->dim_names[d])
                            return gir_nomem(b->err);
                    }
                }
                gv->shape.dims[d] = dim;
            }
        } else {
            gv->shape.rank = -1;
            if (gir_attrs_set_int(g, &gv->meta, NNB_META_NO_SHAPE, 1, b->err))
                return gir_nomem(b->err);
        }
        if (v->type[0] && strcmp(v->type, "Buffer") != 0 && !is_param &&
            gir_attrs_set_string(g, &gv->meta, "nnabla.variable_type", v->type, b->err))
            return gir_nomem(b->err);
        if (v->initializer)
            TRY(meta_text(g, &gv->meta, NNB_META_INITIALIZER, &v->initializer->base, b->err));
        if (v->n_repeat_id &&
            gir_attrs_set_strings(g, &gv->meta, NNB_META_REPEAT_ID, (const char *const *)v->repeat_id, v->n_repeat_id, b->err))
            return gir_nomem(b->err);
    }
    return GIR_OK;
}

/* Value index of a function's input or output variable. */
static gir_status lookup(builder *b, const Nnabla__Function *f, const char *fname, const char *var, bool output,
                         int32_t *idx)
{
    *idx = gir_graph_value_index(b->g, var);
    if (*idx < 0) {
        gir_fail(b->err, GIR_E_REFERENCE, "function '%s' %s '%s', which network '%s' does not declare", fname,
                 output ? "writes" : "reads", var, b->net->name);
        gir_err_node(b->err, fname);
        return GIR_E_REFERENCE;
    }
    (void)f;
    return GIR_OK;
}

static gir_status scan_uses(builder *b)
{
    gir_graph *g = b->g;
    const Nnabla__Network *net = b->net;
    size_t nv = g->n_values;
    b->producer = malloc((nv ? nv : 1) * sizeof *b->producer);
    b->consumed = calloc(nv ? nv : 1, 1);
    uint8_t *other = calloc(nv ? nv : 1, 1), *not_affine = calloc(nv ? nv : 1, 1);
    b->bn_only = calloc(nv ? nv : 1, 1);
    b->affine_only = calloc(nv ? nv : 1, 1);
    b->uses = calloc(nv ? nv : 1, sizeof *b->uses);
    if (!b->producer || !b->consumed || !other || !not_affine || !b->bn_only || !b->affine_only || !b->uses) {
        free(other);
        free(not_affine);
        return gir_nomem(b->err);
    }
    for (size_t i = 0; i < nv; i++)
        b->producer[i] = -1;
    gir_status st = GIR_OK;
    for (size_t fi = 0; fi < net->n_function && !st; fi++) {
        const Nnabla__Function *f = net->function[fi];
        const char *fname = f->name[0] ? f->name : f->type;
        bool bn = strcmp(f->type, "BatchNormalization") == 0;
        bool affine = strcmp(f->type, "Affine") == 0;
        for (size_t k = 0; k < f->n_input && !st; k++) {
            int32_t idx;
            st = lookup(b, f, fname, f->input[k], false, &idx);
            if (st)
                break;
            b->consumed[idx] = 1;
            b->uses[idx]++;
            if (bn && k >= 1 && k <= 4)
                b->bn_only[idx] = 1;
            else
                other[idx] = 1;
            if (affine && k == 1)
                b->affine_only[idx] = 1;
            else
                not_affine[idx] = 1;
        }
        for (size_t k = 0; k < f->n_output && !st; k++) {
            int32_t idx;
            st = lookup(b, f, fname, f->output[k], true, &idx);
            if (st)
                break;
            gir_value *v = g->values[idx];
            if (b->producer[idx] >= 0) {
                const Nnabla__Function *pf = net->function[b->producer[idx]];
                st = gir_fail(b->err, GIR_E_DUPLICATE, "variable '%s' is written by function '%s' and by '%s'",
                              v->name, pf->name[0] ? pf->name : pf->type, fname);
                gir_err_node(b->err, fname);
                break;
            }
            if (v->kind == GIR_VALUE_WEIGHT) {
                st = gir_fail(b->err, GIR_E_SCHEMA, "function '%s' writes parameter '%s'", fname, v->name);
                gir_err_node(b->err, fname);
                break;
            }
            b->producer[idx] = (int32_t)fi;
            v->kind = GIR_VALUE_INTERMEDIATE;
        }
    }
    for (size_t i = 0; i < nv; i++) {
        if (other[i])
            b->bn_only[i] = 0;
        if (not_affine[i])
            b->affine_only[i] = 0;
    }
    free(other);
    free(not_affine);
    return st;
}

static gir_status add_io(builder *b)
{
    gir_graph *g = b->g;
    const Nnabla__Executor *e = b->exec;
    uint8_t *is_input = calloc(g->n_values ? g->n_values : 1, 1);
    if (!is_input)
        return gir_nomem(b->err);
    gir_status st = GIR_OK;
    if (e) {
        size_t n = e->n_data_variable + e->n_generator_variable;
        for (size_t i = 0; i < n && !st; i++) {
            const char *name = i < e->n_data_variable ? e->data_variable[i]->variable_name
                                                      : e->generator_variable[i - e->n_data_variable]->variable_name;
            int32_t idx = gir_graph_value_index(g, name);
            if (idx < 0) {
                st = gir_fail(b->err, GIR_E_REFERENCE, "executor '%s' feeds '%s', which network '%s' does not declare",
                              e->name, name, b->net->name);
                break;
            }
            if (is_input[idx])
                continue;
            gir_value *v = g->values[idx];
            if (v->kind != GIR_VALUE_INPUT) {
                st = gir_fail(b->err, GIR_E_SCHEMA, "executor '%s' feeds '%s', which is a %s", e->name, name,
                              v->kind == GIR_VALUE_WEIGHT ? "parameter" : "function's output");
                break;
            }
            is_input[idx] = 1;
            st = gir_graph_add_input(g, idx, b->err);
        }
    }
    /* buffers read but never written nor listed by the executor */
    for (size_t i = 0; i < g->n_values && !st; i++)
        if (g->values[i]->kind == GIR_VALUE_INPUT && b->consumed[i] && !is_input[i]) {
            is_input[i] = 1;
            st = gir_graph_add_input(g, (int32_t)i, b->err);
        }
    free(is_input);
    if (st)
        return st;
    if (e) {
        for (size_t i = 0; i < e->n_output_variable; i++) {
            const char *name = e->output_variable[i]->variable_name;
            int32_t idx = gir_graph_value_index(g, name);
            if (idx < 0)
                return gir_fail(b->err, GIR_E_REFERENCE,
                                "executor '%s' outputs '%s', which network '%s' does not declare", e->name, name,
                                b->net->name);
            TRY(gir_graph_add_output(g, idx, b->err));
        }
    } else {
        for (size_t i = 0; i < g->n_values; i++)
            if (b->producer[i] >= 0 && !b->consumed[i])
                TRY(gir_graph_add_output(g, (int32_t)i, b->err));
    }
    return GIR_OK;
}

/* Gives every Parameter variable its data from the parameter files. */
static gir_status attach_params(builder *b)
{
    gir_graph *g = b->g;
    b->used_param = calloc(b->params->n ? b->params->n : 1, 1);
    if (!b->used_param)
        return gir_nomem(b->err);
    for (size_t i = 0; i < g->n_values; i++) {
        gir_value *v = g->values[i];
        if (v->kind != GIR_VALUE_WEIGHT)
            continue;
        ptrdiff_t pi = nnb_params_find(b->params, v->name);
        if (pi < 0) {
            if (b->have_params)
                return gir_fail(b->err, GIR_E_PARAMS, "parameter '%s' of network '%s' is not in the parameter file",
                                v->name, b->net->name);
            continue;
        }
        nnb_param *p = &b->params->items[pi];
        b->used_param[pi] = 1;
        int64_t have = gir_shape_numel(&p->shape);
        if (v->shape.rank >= 0) {
            int64_t want = gir_shape_numel(&v->shape);
            if (want < 0 || want != have) {
                char s1[128], s2[128];
                return gir_fail(b->err, GIR_E_SHAPE,
                                "parameter '%s' holds %lld values of shape %s but the variable is declared %s",
                                v->name, (long long)have, gir_shape_str(&p->shape, s1, sizeof s1),
                                gir_shape_str(&v->shape, s2, sizeof s2));
            }
        }
        gir_shape shape = v->shape.rank >= 0 ? v->shape : p->shape;
        if (!gir_shape_equal(&p->tensor->shape, &shape)) {
            /* the same values viewed in the declared shape: a private tensor */
            if (p->tensor->refs > 1)
                return gir_fail(b->err, GIR_E_SHAPE, "parameter '%s' is used with two different shapes", v->name);
            p->tensor->shape = shape;
        }
        gir_value_set_data(v, p->tensor);
        if (gir_attrs_set_int(g, &v->meta, NNB_META_NEED_GRAD, p->need_grad, b->err))
            return gir_nomem(b->err);
    }
    return GIR_OK;
}

static gir_status map_functions(builder *b)
{
    gir_graph *g = b->g;
    const Nnabla__Network *net = b->net;
    nnb_reader r = { g, net, b->err, b->bn_only, b->affine_only, b->uses };
    int32_t *in = NULL, *out = NULL;
    size_t cap_in = 0, cap_out = 0;
    gir_status st = GIR_OK;
    for (size_t fi = 0; fi < net->n_function && !st; fi++) {
        const Nnabla__Function *f = net->function[fi];
        if (!GIR_GROW(in, cap_in, f->n_input + 1) || !GIR_GROW(out, cap_out, f->n_output + 1)) {
            st = gir_nomem(b->err);
            break;
        }
        const char *fname = f->name[0] ? f->name : f->type;
        for (size_t k = 0; k < f->n_input; k++)
            in[k] = gir_graph_value_index(g, f->input[k]);
        for (size_t k = 0; k < f->n_output; k++)
            out[k] = gir_graph_value_index(g, f->output[k]);
        if (!f->type[0]) {
            st = gir_fail(b->err, GIR_E_SCHEMA, "function '%s' of network '%s' has no type", fname, net->name);
            break;
        }
        if (f->n_output == 0) {
            st = gir_fail(b->err, GIR_E_SCHEMA, "function '%s' has no output", fname);
            gir_err_node(b->err, fname);
            break;
        }
        const char *node_name = f->name;
        bool renamed = false;
        if (!node_name[0] || gir_graph_node_index(g, node_name) >= 0) {
            node_name = gir_graph_unique_node_name(g, fname, b->err);
            renamed = true;
            if (!node_name) {
                st = gir_nomem(b->err);
                break;
            }
        }
        gir_node *n;
        st = nnb_map_function(&r, f, node_name, in, f->n_input, out, f->n_output, &n, b->err);
        if (st) {
            gir_err_node(b->err, fname);
            break;
        }
        if (!f->name[0])
            st = gir_attrs_set_int(g, &n->meta, NNB_META_NO_NAME, 1, b->err);
        else if (renamed)
            st = gir_attrs_set_string(g, &n->meta, NNB_META_NAME, f->name, b->err);
        if (!st && f->context)
            st = meta_text(g, &n->meta, NNB_META_CONTEXT, &f->context->base, b->err);
        if (!st && f->n_repeat_id)
            st = gir_attrs_set_strings(g, &n->meta, NNB_META_REPEAT_ID, (const char *const *)f->repeat_id,
                                       f->n_repeat_id, b->err);
    }
    free(in);
    free(out);
    return st;
}

/* Parameters the graph does not use (other networks' weights, ...). */
static gir_status keep_params(builder *b)
{
    gir_graph *g = b->g;
    nnb_params *p = b->params;
    if (!p->n)
        return GIR_OK;
    const char **order = malloc(p->n * sizeof *order);
    const char **extra = malloc(p->n * sizeof *extra);
    int64_t *grads = malloc(p->n * sizeof *grads);
    gir_status st = GIR_OK;
    if (!order || !extra || !grads) {
        st = gir_nomem(b->err);
        goto done;
    }
    size_t ne = 0;
    for (size_t i = 0; i < p->n && !st; i++) {
        order[i] = p->items[i].name;
        if (b->used_param[i])
            continue;
        extra[ne] = p->items[i].name;
        grads[ne++] = p->items[i].need_grad;
        char *key = gir_strdupf("%s%s", NNB_META_EXTRA_PREFIX, p->items[i].name);
        if (!key || gir_attrs_set_tensor(g, &g->meta, key, p->items[i].tensor, b->err))
            st = gir_nomem(b->err);
        free(key);
    }
    if (!st && gir_attrs_set_strings(g, &g->meta, NNB_META_PARAM_ORDER, order, p->n, b->err))
        st = gir_nomem(b->err);
    if (!st && ne &&
        (gir_attrs_set_strings(g, &g->meta, NNB_META_EXTRA_PARAMS, extra, ne, b->err) ||
         gir_attrs_set_ints(g, &g->meta, NNB_META_EXTRA_NEED_GRAD, grads, ne, b->err)))
        st = gir_nomem(b->err);
done:
    free(order);
    free(extra);
    free(grads);
    return st;
}

static gir_status refuse_loops(const Nnabla__Network *net, gir_error *err)
{
    gir_buf b = GIR_BUF_INIT;
    size_t n = 0;
    const char *first = NULL;
    for (size_t i = 0; i < net->n_function; i++) {
        const Nnabla__Function *f = net->function[i];
        if (!nnb_is_loop_function(f->type))
            continue;
        if (!n++)
            first = f->name[0] ? f->name : f->type;
        bool seen = false;
        for (size_t j = 0; j < i; j++)
            seen |= strcmp(net->function[j]->type, f->type) == 0;
        if (!seen)
            gir_buf_printf(&b, "%s%s", b.len ? ", " : "", f->type);
    }
    if (!n)
        return GIR_OK;
    gir_fail(err, GIR_E_UNSUPPORTED,
             "network '%s' uses the loop pseudo-functions %s (%zu functions); graphconv does not unroll them "
             "(expand them first, e.g. with nnabla_cli convert)",
             net->name, b.data ? b.data : "", n);
    gir_err_node(err, first);
    gir_buf_free(&b);
    return GIR_E_UNSUPPORTED;
}

typedef struct unknown_seen {
    char name[64];
    const char *type;
} unknown_seen;

static void first_unknown_field(void *ctx, const ProtobufCMessage *msg, const char *text, size_t len)
{
    unknown_seen *u = ctx;
    if (!u->name[0]) {
        gir_pbtext_field_name(text, len, u->name, sizeof u->name);
        u->type = msg->descriptor->short_name;
    }
}

/* A note on the fields of a newer schema the file holds (kept verbatim). */
static gir_status note_unknown(gir_graph *g, const Nnabla__NNablaProtoBuf *pb, gir_error *err)
{
    size_t n = gir_pbtext_unknown_count(&pb->base);
    if (!n)
        return GIR_OK;
    unknown_seen u = { "", "" };
    TRY(gir_pbtext_each_unknown(&pb->base, first_unknown_field, &u, err));
    return gir_graph_note(g, err,
                          "the file has %zu field%s this nnabla schema does not know (a newer nnabla?), first '%s' "
                          "in a %s message: kept verbatim when written as nnabla",
                          n, n == 1 ? "" : "s", u.name, u.type);
}

static gir_status build(builder *b, Nnabla__NNablaProtoBuf *pb, size_t net_i, ptrdiff_t exec_i, gir_graph **out)
{
    gir_graph *g;
    TRY(gir_graph_new(&g, b->err));
    b->g = g;
    gir_status st = GIR_OK;
    g->name = gir_arena_strdup(&g->arena, b->net->name);
    if (!g->name || gir_attrs_set_string(g, &g->meta, "source.format", "nnabla", b->err))
        st = gir_nomem(b->err);
    /* the graph from the network, step by step */
    static gir_status (*const steps[])(builder *b) = { make_values,   scan_uses,     add_io,
                                                       attach_params, map_functions, keep_params };
    for (size_t i = 0; !st && i < sizeof steps / sizeof *steps; i++)
        st = steps[i](b);
    if (!st)
        st = keep_rest(g, pb, net_i, exec_i, b->err);
    if (!st)
        st = note_unknown(g, pb, b->err);
    if (!st)
        st = gir_graph_finish(g, b->err);
    if (st) {
        gir_graph_free(g);
        return st;
    }
    *out = g;
    return GIR_OK;
}

gir_status nnb_read(const char *path, const gir_options *opts, gir_graph **out, gir_error *err)
{
    *out = NULL;
    int64_t max_bytes, batch;
    TRY(gir_options_int(opts, "max-bytes", 0, &max_bytes, err));
    TRY(gir_options_int(opts, "batch-size", -1, &batch, err));
    if (max_bytes < 0)
        return gir_fail(err, GIR_E_ARGUMENT, "max-bytes must not be negative, not %lld", (long long)max_bytes);
    if (batch == 0 || batch < -1)
        return gir_fail(err, GIR_E_ARGUMENT, "batch-size must be a positive number, not %lld", (long long)batch);
    gir_zip_limits lim;
    gir_zip_limits_default(&lim);
    if (max_bytes > 0) {
        lim.max_total = (uint64_t)max_bytes;
        lim.max_member = (uint64_t)max_bytes;
    }
    Nnabla__NNablaProtoBuf *pb = (Nnabla__NNablaProtoBuf *)gir_pb_new(&nnabla__nnabla_proto_buf__descriptor);
    if (!pb)
        return gir_nomem(err);
    nnb_params params = { 0 };
    bool have_params = false;
    unsigned char head[4];
    size_t got;
    gir_status st = gir_read_head(path, head, sizeof head, &got, err);
    bool zip = !st && got == 4 && head[0] == 'P' && head[1] == 'K' && (head[2] == 3 || head[2] == 5);
    if (!st && zip) {
        st = read_archive(path, &lim, pb, &params, &have_params, err);
    } else if (!st) {
        char *text;
        size_t len;
        st = gir_read_file(path, (size_t)max_bytes, &text, &len, err);
        if (!st) {
            st = merge_text(pb, text, len, path, err);
            free(text);
        }
    }
    const char *ppath = gir_options_get(opts, "params");
    if (!st && ppath) {
        st = read_params_file(ppath, (uint64_t)max_bytes, &params, err);
        have_params = true;
    }
    if (!st)
        st = add_text_params(pb, &params, &have_params, err);
    ptrdiff_t exec_i = -1, net_i = -1;
    if (!st)
        st = choose(pb, gir_options_get(opts, "executor"), gir_options_get(opts, "network"), &exec_i, &net_i, err);
    if (!st)
        st = refuse_loops(pb->network[net_i], err);
    builder b = { 0 };
    if (!st) {
        b.net = pb->network[net_i];
        b.exec = exec_i >= 0 ? pb->executor[exec_i] : NULL;
        b.batch = batch;
        b.params = &params;
        b.have_params = have_params;
        b.err = err;
        st = build(&b, pb, (size_t)net_i, exec_i, out);
    }
    free(b.producer);
    free(b.consumed);
    free(b.bn_only);
    free(b.affine_only);
    free(b.uses);
    free(b.used_param);
    nnb_params_free(&params);
    gir_pb_free(&pb->base);
    return st;
}
