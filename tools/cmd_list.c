/* graphconv formats | ops | errors: what this build knows. */
#include "cli.h"

#include <getopt.h>
#include <string.h>

#include "formats/format.h"


/* Escapes text for troff: backslashes and leading dots/quotes. */
static void troff(const char *s)
{
    if (*s == '.' || *s == '\'')
        fputs("\\&", stdout);
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\e", stdout);
        else if (*s == '-')
            fputs("\\-", stdout);
        else
            putchar(*s);
    }
}

static void print_options(const char *title, const gir_option_doc *o)
{
    if (!o || !o->key)
        return;
    printf("    %s:\n", title);
    for (; o->key; o++)
        printf("      %-18s %s\n", o->key, o->doc);
}

int cmd_formats(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
        printf("Usage: graphconv formats\n");
        return GC_EXIT_OK;
    }
    if (argc > 1)
        return gc_usage_error("formats takes no arguments");
    printf("Formats (r = read, w = write):\n");
    for (size_t i = 0; gir_format_at(i); i++) {
        const gir_format *f = gir_format_at(i);
        printf("  %-10s %c%c  %s\n", f->name, f->read ? 'r' : '-', f->write ? 'w' : '-', f->description);
        printf("    extensions:");
        for (const char *const *e = f->extensions; e && *e; e++)
            printf(" %s", *e);
        printf("\n");
        print_options("read options", f->read_options);
        print_options("write options", f->write_options);
    }
    printf("Options for every format:\n");
    for (const gir_option_doc *o = gir_common_options; o->key; o++)
        printf("  %-18s %s\n", o->key, o->doc);
    return GC_EXIT_OK;
}

/* "required", "optional", "default 1", "default \"NOTSET\"", plus the
 * allowed values of a string attribute. */
static void presence_text(const gir_attr_schema *a, char *buf, size_t n)
{
    char num[48];
    size_t used = 0;
    switch (a->presence) {
    case GIR_ATTR_REQUIRED: used = (size_t)snprintf(buf, n, "required"); break;
    case GIR_ATTR_OPTIONAL: used = (size_t)snprintf(buf, n, "optional"); break;
    case GIR_ATTR_DEFAULTED:
        if (a->type == GIR_ATTR_INT || a->type == GIR_ATTR_BOOL) {
            used = (size_t)snprintf(buf, n, "default %lld", (long long)a->i);
        } else if (a->type == GIR_ATTR_FLOAT) {
            gir_fmt_double(num, a->f, false);
            used = (size_t)snprintf(buf, n, "default %s", num);
        } else if (a->type == GIR_ATTR_STRING) {
            used = (size_t)snprintf(buf, n, "default \"%s\"", a->s ? a->s : "");
        } else {
            used = (size_t)snprintf(buf, n, "defaulted");
        }
        break;
    }
    for (const char *const *c = a->choices; c && *c && used < n; c++)
        used += (size_t)snprintf(buf + used, n - used, "%s%s", c == a->choices ? "; one of " : ", ", *c);
}

static void print_op(const gir_op_info *info)
{
    printf("%s  (%s): %s -> %s\n", info->name, info->category, info->inputs ? info->inputs : "?",
           info->outputs ? info->outputs : "?");
    if (info->doc)
        printf("    %s\n", info->doc);
    char pres[256];
    for (const gir_attr_schema *a = info->attrs; a && a->name; a++) {
        presence_text(a, pres, sizeof pres);
        printf("    %-22s %-7s %s", a->name, gir_attr_type_name(a->type), pres);
        if (a->doc)
            printf("  %s", a->doc);
        printf("\n");
    }
}

static int list_format_ops(const gir_format *f)
{
    printf("%s operators (r = read, w = write):\n", f->name);
    if (!f->ops || !f->ops->format_op) {
        printf("  (no operator mapping: operators are kept opaque)\n");
        return GC_EXIT_OK;
    }
    for (const gir_op_map *m = f->ops; m->format_op; m++) {
        printf("  %-24s %c%c  %s", m->format_op, (m->dir & GIR_MAP_READ) ? 'r' : '-',
               (m->dir & GIR_MAP_WRITE) ? 'w' : '-', m->op == GIR_OP_OPAQUE ? "(opaque)" : gir_op_name(m->op));
        if (m->note)
            printf("  %s", m->note);
        printf("\n");
        for (const gir_attr_map *a = m->attrs; a && (a->format_attr || a->canonical_attr); a++) {
            printf("      %-20s -> %-18s %s\n", a->format_attr ? a->format_attr : "-",
                   a->canonical_attr ? a->canonical_attr : "-", a->note ? a->note : "");
        }
    }
    return GC_EXIT_OK;
}

int cmd_ops(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "format", required_argument, NULL, 'f' },
        { "man", no_argument, NULL, 'm' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *format = NULL;
    bool man = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:hm", longopts, NULL)) != -1) {
        switch (c) {
        case 'f': format = optarg; break;
        case 'm': man = true; break;
        case 'h': printf("Usage: graphconv ops [--format FORMAT] [OP...]\n"); return GC_EXIT_OK;
        default: return GC_EXIT_USAGE;
        }
    }
    if (format) {
        const gir_format *f = gir_format_find(format);
        if (!f)
            return gc_usage_error("unknown format '%s' (see 'graphconv formats')", format);
        return list_format_ops(f);
    }
    if (optind < argc) {
        for (int i = optind; i < argc; i++) {
            gir_op op = gir_op_from_name(argv[i]);
            if (op == GIR_OP_OPAQUE)
                return gc_usage_error("'%s' is not a canonical operator (see 'graphconv ops')", argv[i]);
            print_op(gir_op_get(op));
        }
        return GC_EXIT_OK;
    }
    if (man) {
        for (int op = 1; op < GIR_OP_COUNT_; op++) {
            const gir_op_info *info = gir_op_get((gir_op)op);
            printf(".TP\n.B %s\n", info->name);
            troff(info->inputs ? info->inputs : "");
            printf(" \\(-> ");
            troff(info->outputs ? info->outputs : "");
            printf(": ");
            troff(info->doc ? info->doc : info->category);
            printf("\n");
            char pres[256];
            for (const gir_attr_schema *a = info->attrs; a && a->name; a++) {
                presence_text(a, pres, sizeof pres);
                printf(".br\n\\fI%s\\fR (%s, ", a->name, gir_attr_type_name(a->type));
                troff(pres);
                printf("): ");
                troff(a->doc ? a->doc : "");
                printf("\n");
            }
        }
        return GC_EXIT_OK;
    }
    for (int op = 1; op < GIR_OP_COUNT_; op++)
        print_op(gir_op_get((gir_op)op));
    return GC_EXIT_OK;
}

int cmd_errors(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--man") == 0) {
        printf(".TS\nl l l.\ncode\texit\tmeaning\n");
        for (int i = 0; i < GIR_STATUS_COUNT_; i++) {
            troff(gir_status_name((gir_status)i));
            printf("\t%d\t", gir_status_exit_code((gir_status)i));
            troff(gir_status_describe((gir_status)i));
            printf("\n");
        }
        printf(".TE\n");
        return GC_EXIT_OK;
    }
    if (argc > 1)
        return gc_usage_error("errors takes no arguments (or --man)");
    printf("%-24s %s  %s\n", "code", "exit", "meaning");
    for (int i = 0; i < GIR_STATUS_COUNT_; i++)
        printf("%-24s %4d  %s\n", gir_status_name((gir_status)i), gir_status_exit_code((gir_status)i),
               gir_status_describe((gir_status)i));
    return GC_EXIT_OK;
}
