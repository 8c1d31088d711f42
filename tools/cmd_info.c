/* graphconv info: what a model holds, without loading its weights. */
#include "cli.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

static void shape_text(const gir_value *v, char *buf, size_t n)
{
    if (v->shape.rank < 0) {
        snprintf(buf, n, "?");
        return;
    }
    size_t used = (size_t)snprintf(buf, n, "[");
    for (int i = 0; i < v->shape.rank && used < n; i++) {
        const char *sep = i ? "," : "";
        if (v->dim_names[i])
            used += (size_t)snprintf(buf + used, n - used, "%s%s", sep, v->dim_names[i]);
        else if (v->shape.dims[i] < 0)
            used += (size_t)snprintf(buf + used, n - used, "%s?", sep);
        else
            used += (size_t)snprintf(buf + used, n - used, "%s%lld", sep, (long long)v->shape.dims[i]);
    }
    if (used < n)
        snprintf(buf + used, n - used, "]");
}

static void attr_value_text(const gir_attr *a, FILE *f, bool json)
{
    char num[48];
    switch (a->type) {
    case GIR_ATTR_INT: fprintf(f, "%lld", (long long)a->u.i); break;
    case GIR_ATTR_BOOL: fputs(a->u.i ? "true" : "false", f); break;
    case GIR_ATTR_FLOAT:
        gir_fmt_double(num, a->u.f, false);
        fputs(num, f);
        break;
    case GIR_ATTR_STRING:
        if (json)
            gc_json_string(f, a->u.s);
        else
            fputs(a->u.s, f);
        break;
    case GIR_ATTR_INTS:
        fputc('[', f);
        for (size_t i = 0; i < a->u.ints.n; i++)
            fprintf(f, "%s%lld", i ? ", " : "", (long long)a->u.ints.v[i]);
        fputc(']', f);
        break;
    case GIR_ATTR_FLOATS:
        fputc('[', f);
        for (size_t i = 0; i < a->u.floats.n; i++) {
            gir_fmt_double(num, a->u.floats.v[i], false);
            fprintf(f, "%s%s", i ? ", " : "", num);
        }
        fputc(']', f);
        break;
    case GIR_ATTR_STRINGS:
        fputc('[', f);
        for (size_t i = 0; i < a->u.strs.n; i++) {
            fputs(i ? ", " : "", f);
            gc_json_string(f, a->u.strs.v[i]);
        }
        fputc(']', f);
        break;
    case GIR_ATTR_TENSOR:
        if (json)
            fputs("\"<tensor>\"", f);
        else
            fputs("<tensor>", f);
        break;
    }
}

static void print_values_json(const gir_graph *g, const int32_t *idx, size_t n)
{
    printf("[");
    for (size_t i = 0; i < n; i++) {
        const gir_value *v = g->values[idx[i]];
        printf("%s{\"name\": ", i ? ", " : "");
        gc_json_string(stdout, v->name);
        printf(", \"dtype\": \"%s\", \"shape\": ", gir_dtype_name(v->dtype));
        if (v->shape.rank < 0) {
            printf("null");
        } else {
            printf("[");
            for (int d = 0; d < v->shape.rank; d++) {
                if (d)
                    printf(", ");
                if (v->dim_names[d])
                    gc_json_string(stdout, v->dim_names[d]);
                else if (v->shape.dims[d] < 0)
                    printf("null");
                else
                    printf("%lld", (long long)v->shape.dims[d]);
            }
            printf("]");
        }
        printf("}");
    }
    printf("]");
}

static void info_json(const char *path, const char *fmt, const char *reason, const gir_graph *g)
{
    size_t nops, opaque;
    gc_op_count *h = gc_histogram(g, true, &nops, &opaque);
    gc_param_stats ps = gc_parameters(g);
    printf("{\"file\": ");
    gc_json_string(stdout, path);
    printf(", \"format\": \"%s\", \"detected_by\": \"%s\", \"name\": ", fmt, reason);
    gc_json_string(stdout, gir_graph_name(g));
    printf(", \"inputs\": ");
    print_values_json(g, g->inputs, g->n_inputs);
    printf(", \"outputs\": ");
    print_values_json(g, g->outputs, g->n_outputs);
    printf(", \"nodes\": %zu, \"opaque_nodes\": %zu, \"ops\": {", g->n_nodes, opaque);
    for (size_t i = 0; h && i < nops; i++) {
        printf("%s", i ? ", " : "");
        gc_json_string(stdout, h[i].name);
        printf(": %zu", h[i].count);
    }
    printf("}, \"parameters\": {\"tensors\": %zu, \"elements\": %llu, \"bytes\": %llu, \"unknown_shape\": %zu}",
           ps.tensors, (unsigned long long)ps.elements, (unsigned long long)ps.bytes, ps.unknown);
    printf(", \"metadata\": {");
    for (size_t i = 0; i < g->meta.n; i++) {
        printf("%s", i ? ", " : "");
        gc_json_string(stdout, g->meta.items[i].name);
        printf(": ");
        const gir_attr *a = &g->meta.items[i];
        if (a->type == GIR_ATTR_STRINGS || a->type == GIR_ATTR_INTS || a->type == GIR_ATTR_FLOATS ||
            a->type == GIR_ATTR_STRING || a->type == GIR_ATTR_INT || a->type == GIR_ATTR_FLOAT ||
            a->type == GIR_ATTR_BOOL || a->type == GIR_ATTR_TENSOR)
            attr_value_text(a, stdout, true);
    }
    printf("}}\n");
    free(h);
}

static void info_text(const char *path, const char *fmt, const char *reason, const gir_graph *g, bool all_values)
{
    char shp[256];
    size_t nops, opaque;
    gc_op_count *h = gc_histogram(g, true, &nops, &opaque);
    gc_param_stats ps = gc_parameters(g);
    printf("file:       %s\n", path);
    printf("format:     %s (by %s)\n", fmt, reason);
    if (g->name && *g->name)
        printf("name:       %s\n", g->name);
    for (size_t i = 0; i < g->meta.n; i++) {
        const gir_attr *a = &g->meta.items[i];
        /* source.format is the line above; other source.* facts follow. */
        if (strncmp(a->name, "source.", 7) != 0 || strcmp(a->name, "source.format") == 0)
            continue;
        printf("%s:%*s", a->name + 7, (int)(11 - strlen(a->name + 7)), "");
        attr_value_text(a, stdout, false);
        printf("\n");
    }
    /* ONNX: the operator sets the model imports */
    const gir_attr *od = gir_attrs_find(&g->meta, "onnx.opset_domains");
    const gir_attr *ov = gir_attrs_find(&g->meta, "onnx.opset_versions");
    if (od && ov && od->type == GIR_ATTR_STRINGS && ov->type == GIR_ATTR_INTS && od->u.strs.n == ov->u.ints.n) {
        printf("opset:      ");
        for (size_t i = 0; i < od->u.strs.n; i++)
            printf("%s%s %lld", i ? ", " : "", *od->u.strs.v[i] ? od->u.strs.v[i] : "ai.onnx",
                   (long long)ov->u.ints.v[i]);
        printf("\n");
    }
    printf("input%s:%s%zu\n", g->n_inputs == 1 ? "" : "s", g->n_inputs == 1 ? "      " : "     ", g->n_inputs);
    for (size_t i = 0; i < g->n_inputs; i++) {
        const gir_value *v = g->values[g->inputs[i]];
        shape_text(v, shp, sizeof shp);
        printf("  %s  %s %s\n", v->name, gir_dtype_name(v->dtype), shp);
    }
    printf("output%s:%s%zu\n", g->n_outputs == 1 ? "" : "s", g->n_outputs == 1 ? "     " : "    ", g->n_outputs);
    for (size_t i = 0; i < g->n_outputs; i++) {
        const gir_value *v = g->values[g->outputs[i]];
        shape_text(v, shp, sizeof shp);
        printf("  %s  %s %s\n", v->name, gir_dtype_name(v->dtype), shp);
    }
    printf("nodes:      %zu (%zu opaque)\n", g->n_nodes, opaque);
    printf("ops:\n");
    for (size_t i = 0; h && i < nops; i++)
        printf("  %-24s %zu\n", h[i].name, h[i].count);
    printf("parameters: %zu tensors, %llu elements, %llu bytes", ps.tensors, (unsigned long long)ps.elements,
           (unsigned long long)ps.bytes);
    if (ps.unknown)
        printf(" (%zu of unknown shape)", ps.unknown);
    printf("\n");
    if (all_values) {
        printf("values:\n");
        static const char *kinds[] = { "input", "weight", "const", "" };
        for (size_t i = 0; i < g->n_values; i++) {
            const gir_value *v = g->values[i];
            shape_text(v, shp, sizeof shp);
            printf("  %s  %s %s %s\n", v->name, gir_dtype_name(v->dtype), shp, kinds[v->kind]);
        }
    }
    free(h);
}

int cmd_info(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "json", no_argument, NULL, 'j' },
        { "values", no_argument, NULL, 'a' },
        { "from", required_argument, NULL, 'F' },
        { "params", required_argument, NULL, 'p' },
        { "batch-size", required_argument, NULL, 'b' },
        { "input-shape", required_argument, NULL, 's' },
        { "read-option", required_argument, NULL, 'I' },
        { "verbose", no_argument, NULL, 'v' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    bool json = false, all_values = false;
    const char *from = NULL;
    gir_options *opts = gir_options_new();
    int rc = GC_EXIT_OK, c;
    if (!opts)
        return GC_EXIT_IO;
    optind = 1;
    while ((c = getopt_long(argc, argv, "I:vh", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'a': all_values = true; break;
        case 'F': from = optarg; break;
        case 'p': gir_options_set(opts, "params", optarg, NULL); break;
        case 'b': gir_options_set(opts, "batch-size", optarg, NULL); break;
        case 's': gir_options_set(opts, "input-shape", optarg, NULL); break;
        case 'I':
            if (!gc_parse_kv(opts, optarg, "--read-option")) {
                gir_options_free(opts);
                return GC_EXIT_USAGE;
            }
            break;
        case 'v': gc_verbosity++; break;
        case 'h':
            printf("Usage: graphconv info [OPTIONS] MODEL\n"
                   "Shows a model's format (and the rule that chose it), producer, ONNX opsets, the weights\n"
                   "file read, inputs and outputs with types and shapes, the operator histogram and the\n"
                   "parameter count.  MODEL - reads standard input.\n"
                   "  --json                 one JSON object instead of text\n"
                   "  --values               also list every value (name, type, shape, kind)\n"
                   "  --from FORMAT          the model's format (default: detected)\n"
                   "  --params FILE          its companion weights file (default: found beside it)\n"
                   "  --input-shape NAME:D0,D1,..[;NAME:..]  give inputs shapes; the rest is inferred\n"
                   "  --batch-size N         set every input's first dimension; the rest is inferred\n"
                   "  -I, --read-option KEY=VALUE  a reader option (see 'graphconv formats')\n"
                   "  -v, --verbose          say which rule chose the format\n"
                   "  -h, --help             this help\n");
            gir_options_free(opts);
            return GC_EXIT_OK;
        default: gir_options_free(opts); return gc_bad_option(argv);
        }
    }
    if (argc - optind != 1) {
        gir_options_free(opts);
        return gc_usage_error("info needs exactly one model file");
    }
    const char *path = argv[optind];
    gir_error err = GIR_ERROR_INIT;
    const char *fmt, *reason;
    gir_graph *g = NULL;
    gir_status st = gc_load_detect(path, from, opts, &g, &fmt, &reason, &err);
    if (st) {
        rc = gc_report(&err);
    } else if (json) {
        info_json(path, fmt, reason, g);
    } else {
        info_text(path, fmt, reason, g, all_values);
    }
    gir_error_clear(&err);
    gir_graph_free(g);
    gir_options_free(opts);
    return rc;
}
