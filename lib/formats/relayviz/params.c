/* The companion TVM .params file, through the shared codec
 * (lib/io/params.c): one codec for the format in the project. */
#include "relayviz.h"

#include <stdlib.h>
#include <string.h>

#include "io/params.h"

struct rv_params {
    gir_params p;
};

gir_status rv_params_open(const char *path, rv_params **out, gir_error *err)
{
    *out = NULL;
    rv_params *rp = calloc(1, sizeof *rp);
    if (!rp)
        return gir_nomem(err);
    gir_status st = gir_params_open(path, &rp->p, err);
    if (st == GIR_OK && rp->p.kind != GIR_PARAMS_TVM) {
        st = gir_fail(err, GIR_E_PARAMS, "an MXNet parameters file, not the TVM .params a RelayViz program uses");
        gir_err_file(err, path);
    }
    for (size_t i = 0; st == GIR_OK && i < rp->p.n; i++) {
        for (size_t j = 0; j < i; j++) {
            if (strcmp(rp->p.items[i].name, rp->p.items[j].name) == 0) {
                st = gir_fail(err, GIR_E_DUPLICATE, "the parameters file holds '%s' twice", rp->p.items[i].name);
                gir_err_file(err, path);
                break;
            }
        }
    }
    if (st) {
        rv_params_free(rp);
        return st;
    }
    *out = rp;
    return GIR_OK;
}

gir_status rv_params_get(const rv_params *rp, const char *name, gir_tensor **t, gir_error *err)
{
    *t = NULL;
    for (size_t i = 0; rp && i < rp->p.n; i++)
        if (strcmp(rp->p.items[i].name, name) == 0)
            return gir_params_tensor(&rp->p, i, t, err);
    return GIR_OK;
}

void rv_params_free(rv_params *rp)
{
    if (!rp)
        return;
    gir_params_free(&rp->p);
    free(rp);
}

gir_status rv_params_write(gir_outfile *f, const char *const *names, gir_tensor *const *tensors, size_t n,
                           gir_error *err)
{
    gir_param_out *items = calloc(n ? n : 1, sizeof *items);
    if (!items)
        return gir_nomem(err);
    for (size_t i = 0; i < n; i++)
        items[i] = (gir_param_out){ names[i], tensors[i] };
    gir_status st = gir_params_write(f, GIR_PARAMS_TVM, items, n, gir_progress_add, err);
    free(items);
    return st;
}
