/* Helpers the legalization patterns share. */
#include "patterns.h"

#include <stdio.h>
#include <stdlib.h>

gir_status gir_pat_skip(gir_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char *s = gir_vstrdupf(fmt, ap);
    va_end(ap);
    gir_status st = s ? gir_fail(err, GIR_E_UNSUPPORTED, "%s", s) : gir_nomem(err);
    free(s);
    return st == GIR_E_NOMEM ? st : GIR_E_UNSUPPORTED;
}

const gir_value *gir_pat_in(const gir_rw *rw, const gir_node *n, size_t i)
{
    return gir_in(rw->g, n, i);
}

gir_status gir_pat_float_dtype(const gir_value *v, gir_error *err)
{
    if (!v || (v->dtype != GIR_DT_F32 && v->dtype != GIR_DT_F64))
        return gir_pat_skip(err, "input of type %s", v ? gir_dtype_name(v->dtype) : "?");
    return GIR_OK;
}
