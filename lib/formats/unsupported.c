/* Collecting every construct a writer cannot express, for one error. */
#include "format.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef struct item {
    gir_status code;
    char *what;
    char *first_node;
    size_t count;
} item;

/* One occurrence: which item, and whether it names a node (planning maps
 * those back to the graph's nodes). */
typedef struct event {
    size_t item;
    char *name;
    bool is_node;
} event;

struct gir_unsupported {
    item *items;
    size_t n, cap;
    event *events;
    size_t n_events, cap_events;
    bool failed;
};

gir_unsupported *gir_unsupported_new(void)
{
    return calloc(1, sizeof(gir_unsupported));
}

static void add_event(gir_unsupported *u, size_t it, const char *name, bool is_node)
{
    char *nm = name && *name ? gir_strdupf("%s", name) : NULL;
    if ((name && *name && !nm) || !GIR_GROW(u->events, u->cap_events, u->n_events + 1)) {
        free(nm);
        u->failed = true;
        return;
    }
    u->events[u->n_events++] = (event){ it, nm, is_node && nm };
}

static void add(gir_unsupported *u, gir_status code, const char *what, const char *name, bool is_node)
{
    if (!u)
        return;
    for (size_t i = 0; i < u->n; i++) {
        if (strcmp(u->items[i].what, what) == 0) {
            u->items[i].count++;
            add_event(u, i, name, is_node);
            return;
        }
    }
    char *w = gir_strdupf("%s", what);
    char *nd = gir_strdupf("%s", name ? name : "");
    if (!w || !nd || !GIR_GROW(u->items, u->cap, u->n + 1)) {
        free(w);
        free(nd);
        u->failed = true;
        return;
    }
    u->items[u->n++] = (item){ code, w, nd, 1 };
    add_event(u, u->n - 1, name, is_node);
}

void gir_unsupported_add(gir_unsupported *u, gir_status code, const char *what, const char *node)
{
    add(u, code, what, node, true);
}

void gir_unsupported_addf(gir_unsupported *u, gir_status code, const char *node, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    gir_unsupported_vaddf(u, code, node, fmt, ap);
    va_end(ap);
}

void gir_unsupported_vaddf(gir_unsupported *u, gir_status code, const char *node, const char *fmt, va_list ap)
{
    if (!u)
        return;
    char *what = gir_vstrdupf(fmt, ap);
    if (!what) {
        u->failed = true;
        return;
    }
    add(u, code, what, node, true);
    free(what);
}

void gir_unsupported_add_value(gir_unsupported *u, gir_status code, const char *what, const char *value)
{
    add(u, code, what, value, false);
}

size_t gir_unsupported_event_count(const gir_unsupported *u)
{
    return u ? u->n_events : 0;
}

const char *gir_unsupported_event(const gir_unsupported *u, size_t i, const char **node)
{
    const event *e = &u->events[i];
    *node = e->is_node ? e->name : NULL;
    return u->items[e->item].what;
}

bool gir_unsupported_failed(const gir_unsupported *u)
{
    return !u || u->failed;
}

size_t gir_unsupported_count(const gir_unsupported *u)
{
    return u ? u->n + (u->failed ? 1 : 0) : 0;
}

gir_status gir_unsupported_fail(gir_unsupported *u, const char *format, gir_error *err)
{
    if (!u)
        return gir_nomem(err);
    if (u->failed)
        return gir_nomem(err);
    if (u->n == 0)
        return GIR_OK;
    gir_buf b = GIR_BUF_INIT;
    gir_buf_printf(&b, "cannot write as %s: ", format);
    for (size_t i = 0; i < u->n; i++) {
        const item *it = &u->items[i];
        gir_buf_printf(&b, "%s%s (%zu node%s, first '%s')", i ? "; " : "", it->what, it->count,
                       it->count == 1 ? "" : "s", it->first_node);
    }
    char *msg = gir_buf_take(&b);
    if (!msg)
        return gir_nomem(err);
    gir_status st = gir_fail(err, u->items[0].code, "%s", msg);
    free(msg);
    return st;
}

void gir_unsupported_reset(gir_unsupported *u)
{
    if (!u)
        return;
    for (size_t i = 0; i < u->n; i++) {
        free(u->items[i].what);
        free(u->items[i].first_node);
    }
    for (size_t i = 0; i < u->n_events; i++)
        free(u->events[i].name);
    free(u->events);
    free(u->items);
    memset(u, 0, sizeof *u);
}

void gir_unsupported_free(gir_unsupported *u)
{
    gir_unsupported_reset(u);
    free(u);
}
