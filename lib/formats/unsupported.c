/* Collecting every construct a writer cannot express, for one error. */
#include "format.h"

#include <stdlib.h>
#include <string.h>

typedef struct item {
    gir_status code;
    char *what;
    char *first_node;
    size_t count;
} item;

struct gir_unsupported {
    item *items;
    size_t n, cap;
    bool failed;
};

gir_unsupported *gir_unsupported_new(void)
{
    return calloc(1, sizeof(gir_unsupported));
}

void gir_unsupported_add(gir_unsupported *u, gir_status code, const char *what, const char *node)
{
    if (!u)
        return;
    for (size_t i = 0; i < u->n; i++) {
        if (strcmp(u->items[i].what, what) == 0) {
            u->items[i].count++;
            return;
        }
    }
    char *w = gir_strdupf("%s", what);
    char *nd = gir_strdupf("%s", node ? node : "");
    if (!w || !nd || !GIR_GROW(u->items, u->cap, u->n + 1)) {
        free(w);
        free(nd);
        u->failed = true;
        return;
    }
    u->items[u->n++] = (item){ code, w, nd, 1 };
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

void gir_unsupported_free(gir_unsupported *u)
{
    if (!u)
        return;
    for (size_t i = 0; i < u->n; i++) {
        free(u->items[i].what);
        free(u->items[i].first_node);
    }
    free(u->items);
    free(u);
}
