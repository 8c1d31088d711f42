/* The three formats of the NNVM family: one reader, three writers. */
#include "nnvm.h"

#include <string.h>

const char *nn_meta_key(nn_flavour f, nn_mkey k)
{
    static const char *const keys[NN_FLAVOURS][NN_MK_COUNT] = {
        [NN_NNVM] = { "nnvm.op", "nnvm.name", "nnvm.num_outputs", "nnvm.versions", "nnvm.attrs",
                      "nnvm.graph_attrs", "nnvm.head_versions" },
        [NN_MXNET] = { "mxnet.op", "mxnet.name", "mxnet.num_outputs", "mxnet.versions", "mxnet.attrs",
                       "mxnet.graph_attrs", "mxnet.head_versions" },
        [NN_TVM] = { "tvm.op", "tvm.name", "tvm.num_outputs", "tvm.versions", "tvm.attrs", "tvm.graph_attrs",
                     "tvm.head_versions" },
    };
    return keys[f][k];
}

/* ---- content probe ---------------------------------------------------------- */

static size_t skip_ws(const unsigned char *h, size_t n, size_t i)
{
    while (i < n && (h[i] == ' ' || h[i] == '\t' || h[i] == '\n' || h[i] == '\r'))
        i++;
    return i;
}

static bool contains(const unsigned char *h, size_t n, const char *s)
{
    size_t k = strlen(s);
    for (size_t i = 0; i + k <= n; i++)
        if (h[i] == (unsigned char)s[0] && memcmp(h + i, s, k) == 0)
            return true;
    return false;
}

int nn_probe(const unsigned char *head, size_t n, nn_flavour *fl)
{
    *fl = NN_NNVM;
    bool npz;
    if (gir_params_sniff(head, n, &npz)) {
        /* Not a graph, but ours: a weak score lets the reader explain. */
        *fl = gir_params_sniff(head, n, &npz) == GIR_PARAMS_TVM ? NN_TVM : NN_MXNET;
        return 5;
    }
    size_t i = skip_ws(head, n, 0);
    if (i >= n || head[i] != '{' || !contains(head, n, "\"nodes\""))
        return 0;
    if (!contains(head, n, "\"op\"") && !contains(head, n, "\"arg_nodes\""))
        return 0;
    /* Classify by the operator names in the head. */
    size_t mx = 0, nv = 0;
    bool tvm = contains(head, n, "\"tvm_op\"");
    bool legacy = contains(head, n, "\"param\"") || contains(head, n, "\"backward_source_id\"") ||
                  contains(head, n, "\"mxnet_version\"");
    static const char key[] = "\"op\"";
    for (size_t p = 0; p + 4 <= n; p++) {
        if (memcmp(head + p, key, 4) != 0)
            continue;
        size_t q = skip_ws(head, n, p + 4);
        if (q >= n || head[q] != ':')
            continue;
        q = skip_ws(head, n, q + 1);
        if (q >= n || head[q] != '"')
            continue;
        char op[64];
        size_t k = 0;
        for (q++; q < n && head[q] != '"' && k + 1 < sizeof op; q++)
            op[k++] = (char)head[q];
        if (q >= n || head[q] != '"')
            break;
        op[k] = '\0';
        bool m = nn_op_known(NN_MXNET, op), v = nn_op_known(NN_NNVM, op);
        mx += m && !v;
        nv += v && !m;
    }
    if (tvm) {
        *fl = NN_TVM;
        return 95;
    }
    if (legacy || mx > nv) {
        *fl = NN_MXNET;
        return 90;
    }
    if (nv > mx) {
        *fl = NN_NNVM;
        return 90;
    }
    /* Only variables (or shared names) so far: the family, flavour unknown. */
    *fl = NN_NNVM;
    return 60;
}

static int probe_as(nn_flavour want, const unsigned char *head, size_t n)
{
    nn_flavour fl;
    int s = nn_probe(head, n, &fl);
    if (s <= 5)
        return fl == want ? s : s ? 4 : 0;
    if (fl == want)
        return s;
    /* The family but another flavour: below the claiming threshold. */
    return 40;
}

static int probe_nnvm(const unsigned char *head, size_t n, const char *path)
{
    (void)path;
    return probe_as(NN_NNVM, head, n);
}

static int probe_mxnet(const unsigned char *head, size_t n, const char *path)
{
    nn_flavour fl;
    /* Only variables in the head: the file name may say MXNet. */
    if (nn_probe(head, n, &fl) == 60 && path && gir_str_ends_with(path, "-symbol.json"))
        return 65;
    return probe_as(NN_MXNET, head, n);
}

static int probe_tvm(const unsigned char *head, size_t n, const char *path)
{
    (void)path;
    return probe_as(NN_TVM, head, n);
}

/* ---- the three formats ------------------------------------------------------------ */

static gir_status plan_nnvm(const gir_graph *g, const gir_options *opts, gir_unsupported *u, gir_error *err)
{
    return nn_plan(g, opts, NN_NNVM, u, err);
}

static gir_status plan_mxnet(const gir_graph *g, const gir_options *opts, gir_unsupported *u, gir_error *err)
{
    return nn_plan(g, opts, NN_MXNET, u, err);
}

static const gir_option_doc read_opts[] = {
    { "input-shape", "shapes of graph inputs, NAME:D1,D2,...;NAME:... (MXNet files record none), e.g. "
                     "data:1,3,224,224" },
    { "weights-as-inputs", "with no weights file, take the weights as graph inputs (shapes completed from "
                           "input-shape) instead of refusing (1/0)" },
    { NULL, NULL },
};

static const char *const ext_nnvm[] = { ".json", NULL };
static const char *const ext_mxnet[] = { "-symbol.json", ".json", NULL };
static const char *const ext_tvm[] = { ".graph", ".json", NULL };

/* The format gir_format_FL of flavour FLAVOUR: the family's reader and
 * writer for it, and planner its planner (NULL: none). */
#define NN_FORMAT(fl, FLAVOUR, desc, planner)                                                                 \
    static gir_status read_##fl(const char *path, const gir_options *opts, gir_graph **out, gir_error *err)   \
    {                                                                                                         \
        return nn_read(path, opts, FLAVOUR, out, err);                                                        \
    }                                                                                                         \
    static gir_status write_##fl(const gir_graph *g, const char *path, const gir_options *opts,               \
                                 gir_error *err)                                                              \
    {                                                                                                         \
        return nn_write(g, path, opts, FLAVOUR, err);                                                         \
    }                                                                                                         \
    const gir_format gir_format_##fl = { .name = #fl, .description = desc, .extensions = ext_##fl,            \
                                         .probe = probe_##fl, .read = read_##fl, .write = write_##fl,         \
                                         .plan = planner, .ops = nn_##fl##_ops, .read_options = read_opts }

NN_FORMAT(nnvm, NN_NNVM, "NNVM graph JSON with NNVM top operators (+ TVM .params)", plan_nnvm);
NN_FORMAT(mxnet, NN_MXNET, "MXNet symbol JSON, every generation (+ MXNet NDArray .params)", plan_mxnet);
NN_FORMAT(tvm, NN_TVM, "TVM graph-executor JSON (tvm_op nodes, shapes, storage plan) (+ TVM .params)", NULL);
