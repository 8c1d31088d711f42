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

static void json_options(const gir_option_doc *o)
{
    fputc('[', stdout);
    for (const gir_option_doc *d = o; d && d->key; d++) {
        fputs(d == o ? "{\"key\": " : ", {\"key\": ", stdout);
        gc_json_string(stdout, d->key);
        fputs(", \"doc\": ", stdout);
        gc_json_string(stdout, d->doc);
        fputc('}', stdout);
    }
    fputc(']', stdout);
}

int cmd_formats(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    bool json = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "jh", longopts, NULL)) != -1) {
        switch (c) {
        case 'j': json = true; break;
        case 'h':
            printf("Usage: graphconv formats [--json]\n"
                   "Lists the formats this build reads (r) and writes (w), the file extensions that choose\n"
                   "each, and the options its reader (-I KEY=VALUE) and writer (-O KEY=VALUE) take, then\n"
                   "the options every format takes.\n"
                   "  --json     one JSON object: {\"formats\": [{\"name\", \"description\", \"read\",\n"
                   "             \"write\", \"extensions\", \"read_options\", \"write_options\"}...],\n"
                   "             \"common_options\": [...]}\n"
                   "  -h, --help this help\n");
            return GC_EXIT_OK;
        default: return gc_bad_option(argv);
        }
    }
    if (optind < argc)
        return gc_usage_error("formats takes no arguments, not '%s'", argv[optind]);
    if (json) {
        fputs("{\"formats\": [", stdout);
        for (size_t i = 0; gir_format_at(i); i++) {
            const gir_format *f = gir_format_at(i);
            fputs(i ? ", {\"name\": " : "{\"name\": ", stdout);
            gc_json_string(stdout, f->name);
            fputs(", \"description\": ", stdout);
            gc_json_string(stdout, f->description);
            printf(", \"read\": %s, \"write\": %s, \"extensions\": [", f->read ? "true" : "false",
                   f->write ? "true" : "false");
            for (const char *const *e = f->extensions; e && *e; e++) {
                if (e != f->extensions)
                    fputs(", ", stdout);
                gc_json_string(stdout, *e);
            }
            fputs("], \"read_options\": ", stdout);
            json_options(f->read_options);
            fputs(", \"write_options\": ", stdout);
            json_options(f->write_options);
            fputc('}', stdout);
        }
        fputs("], \"common_options\": ", stdout);
        json_options(gir_common_options);
        fputs("}\n", stdout);
        return GC_EXIT_OK;
    }
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

/* Does m match one of the names asked (its name in the format, or the
 * canonical op's), or were none asked? */
static bool wanted(const gir_op_map *m, char **names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(m->format_op, names[i]) == 0 || (m->op != GIR_OP_OPAQUE && strcmp(gir_op_name(m->op), names[i]) == 0))
            return true;
    return n == 0;
}

static int list_format_ops(const gir_format *f, char **names, int n, bool json)
{
    size_t shown = 0;
    if (json) {
        fputs("{\"format\": ", stdout);
        gc_json_string(stdout, f->name);
        fputs(", \"operators\": [", stdout);
    } else {
        printf("%s operators (r = read, w = write; [1:1] = one to one: the inputs in order, no attributes):\n", f->name);
    }
    for (const gir_op_map *m = f->ops; m && m->format_op; m++) {
        if (!wanted(m, names, n))
            continue;
        if (json) {
            fputs(shown ? ", {\"name\": " : "{\"name\": ", stdout);
            gc_json_string(stdout, m->format_op);
            printf(", \"read\": %s, \"write\": %s, \"canonical\": ", (m->dir & GIR_MAP_READ) ? "true" : "false",
                   (m->dir & GIR_MAP_WRITE) ? "true" : "false");
            if (m->op == GIR_OP_OPAQUE)
                fputs("null", stdout);
            else
                gc_json_string(stdout, gir_op_name(m->op));
            printf(", \"plain_read\": %s, \"plain_write\": %s", (m->plain & GIR_MAP_READ) ? "true" : "false",
                   (m->plain & GIR_MAP_WRITE) ? "true" : "false");
            if (m->plain)
                printf(", \"inputs\": %u", m->n_in);
            fputs(", \"note\": ", stdout);
            if (m->note)
                gc_json_string(stdout, m->note);
            else
                fputs("null", stdout);
            fputs(", \"attributes\": [", stdout);
            for (const gir_attr_map *at = m->attrs; at && (at->format_attr || at->canonical_attr); at++) {
                fputs(at == m->attrs ? "{\"format\": " : ", {\"format\": ", stdout);
                if (at->format_attr)
                    gc_json_string(stdout, at->format_attr);
                else
                    fputs("null", stdout);
                fputs(", \"canonical\": ", stdout);
                if (at->canonical_attr)
                    gc_json_string(stdout, at->canonical_attr);
                else
                    fputs("null", stdout);
                fputs(", \"note\": ", stdout);
                if (at->note)
                    gc_json_string(stdout, at->note);
                else
                    fputs("null", stdout);
                fputc('}', stdout);
            }
            fputs("]}", stdout);
            shown++;
            continue;
        }
        shown++;
        printf("  %-24s %c%c  %s", m->format_op, (m->dir & GIR_MAP_READ) ? 'r' : '-',
               (m->dir & GIR_MAP_WRITE) ? 'w' : '-', m->op == GIR_OP_OPAQUE ? "(opaque)" : gir_op_name(m->op));
        if (m->plain)
            printf("  [1:1%s, %u input%s]", m->plain == (m->dir & (GIR_MAP_READ | GIR_MAP_WRITE)) ? ""
                                           : (m->plain & GIR_MAP_READ) ? " read" : " write",
                   m->n_in, m->n_in == 1 ? "" : "s");
        if (m->note)
            printf("  %s", m->note);
        printf("\n");
        for (const gir_attr_map *a = m->attrs; a && (a->format_attr || a->canonical_attr); a++) {
            printf("      %-20s -> %-18s %s\n", a->format_attr ? a->format_attr : "-",
                   a->canonical_attr ? a->canonical_attr : "-", a->note ? a->note : "");
        }
    }
    if (json) {
        fputs("]}\n", stdout);
    } else if (!f->ops || !f->ops->format_op) {
        printf("  (no operator mapping: operators are kept opaque)\n");
    }
    if (n > 0 && shown == 0) {
        fprintf(stderr, "graphconv: %s maps no operator named %s%s (see 'graphconv ops --format %s')\n", f->name,
                names[0], n > 1 ? " or the others given" : "", f->name);
        return GC_EXIT_USAGE;
    }
    return GC_EXIT_OK;
}

static void json_op(const gir_op_info *info, bool first)
{
    fputs(first ? "{\"name\": " : ", {\"name\": ", stdout);
    gc_json_string(stdout, info->name);
    fputs(", \"category\": ", stdout);
    gc_json_string(stdout, info->category);
    fputs(", \"inputs\": ", stdout);
    gc_json_string(stdout, info->inputs ? info->inputs : "");
    fputs(", \"outputs\": ", stdout);
    gc_json_string(stdout, info->outputs ? info->outputs : "");
    fputs(", \"doc\": ", stdout);
    gc_json_string(stdout, info->doc ? info->doc : "");
    fputs(", \"attributes\": [", stdout);
    char pres[256];
    for (const gir_attr_schema *a = info->attrs; a && a->name; a++) {
        presence_text(a, pres, sizeof pres);
        fputs(a == info->attrs ? "{\"name\": " : ", {\"name\": ", stdout);
        gc_json_string(stdout, a->name);
        fputs(", \"type\": ", stdout);
        gc_json_string(stdout, gir_attr_type_name(a->type));
        fputs(", \"presence\": ", stdout);
        gc_json_string(stdout, pres);
        fputs(", \"doc\": ", stdout);
        gc_json_string(stdout, a->doc ? a->doc : "");
        fputc('}', stdout);
    }
    fputs("]}", stdout);
}

int cmd_ops(int argc, char **argv)
{
    static const struct option longopts[] = {
        { "format", required_argument, NULL, 'f' },
        { "man", no_argument, NULL, 'm' },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    const char *format = NULL;
    bool man = false, json = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "f:hmj", longopts, NULL)) != -1) {
        switch (c) {
        case 'f': format = optarg; break;
        case 'm': man = true; break;
        case 'j': json = true; break;
        case 'h':
            printf("Usage: graphconv ops [--format FORMAT] [--json] [OP...]\n"
                   "Without --format: the canonical operators (all, or the OPs named), each with its\n"
                   "operands and attributes (type, required/optional/default, meaning).\n"
                   "With --format: how that format's operators map to canonical ones, attribute by\n"
                   "attribute (r = read, w = write); OPs filter by the format's or the canonical name.\n"
                   "  -f, --format FORMAT  a format of 'graphconv formats'\n"
                   "  --json               one JSON object instead of text\n"
                   "  --man                the canonical operators as troff (for the man page)\n"
                   "  -h, --help           this help\n");
            return GC_EXIT_OK;
        default: return gc_bad_option(argv);
        }
    }
    if (format) {
        const gir_format *f = gir_format_find(format);
        if (!f)
            return gc_usage_error("unknown format '%s' (see 'graphconv formats')", format);
        return list_format_ops(f, argv + optind, argc - optind, json);
    }
    for (int i = optind; i < argc; i++)
        if (gir_op_from_name(argv[i]) == GIR_OP_OPAQUE)
            return gc_usage_error("'%s' is not a canonical operator (see 'graphconv ops')", argv[i]);
    if (json) {
        fputs("{\"operators\": [", stdout);
        bool first = true;
        for (int op = 1; op < GIR_OP_COUNT_; op++) {
            bool want = optind == argc;
            for (int i = optind; i < argc; i++)
                want = want || gir_op_from_name(argv[i]) == (gir_op)op;
            if (want) {
                json_op(gir_op_get((gir_op)op), first);
                first = false;
            }
        }
        fputs("]}\n", stdout);
        return GC_EXIT_OK;
    }
    if (optind < argc) {
        for (int i = optind; i < argc; i++)
            print_op(gir_op_get(gir_op_from_name(argv[i])));
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
    static const struct option longopts[] = {
        { "man", no_argument, NULL, 'm' },
        { "json", no_argument, NULL, 'j' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    bool man = false, json = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "mjh", longopts, NULL)) != -1) {
        switch (c) {
        case 'm': man = true; break;
        case 'j': json = true; break;
        case 'h':
            printf("Usage: graphconv errors [--json]\n"
                   "Lists every error code graphconv and libgraphir report (the [code] ending each error\n"
                   "message), the exit status it gives and what it means.\n"
                   "  --json      one JSON object: {\"errors\": [{\"code\", \"exit\", \"meaning\"}...]}\n"
                   "  --man       the table as troff (for the man page)\n"
                   "  -h, --help  this help\n");
            return GC_EXIT_OK;
        default: return gc_bad_option(argv);
        }
    }
    if (optind < argc)
        return gc_usage_error("errors takes no arguments, not '%s'", argv[optind]);
    if (man) {
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
    if (json) {
        fputs("{\"errors\": [", stdout);
        for (int i = 0; i < GIR_STATUS_COUNT_; i++) {
            fputs(i ? ", {\"code\": " : "{\"code\": ", stdout);
            gc_json_string(stdout, gir_status_name((gir_status)i));
            printf(", \"exit\": %d, \"meaning\": ", gir_status_exit_code((gir_status)i));
            gc_json_string(stdout, gir_status_describe((gir_status)i));
            fputc('}', stdout);
        }
        fputs("]}\n", stdout);
        return GC_EXIT_OK;
    }
    printf("%-24s %s  %s\n", "code", "exit", "meaning");
    for (int i = 0; i < GIR_STATUS_COUNT_; i++)
        printf("%-24s %4d  %s\n", gir_status_name((gir_status)i), gir_status_exit_code((gir_status)i),
               gir_status_describe((gir_status)i));
    return GC_EXIT_OK;
}
