/* Reference-counted tensors with lazily loaded data. */
#include "ir.h"
#include "limits.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* No single tensor may exceed this (it also keeps byte counts far from
 * overflow in every later product). */
#define GIR_TENSOR_MAX_BYTES ((uint64_t)1 << 40)

gir_status gir_tensor_size(gir_dtype dt, const gir_shape *shape, uint64_t *nbytes, gir_error *err)
{
    if (dt <= GIR_DT_UNKNOWN || dt >= GIR_DT_COUNT_)
        return gir_fail(err, GIR_E_DTYPE, "tensor has no known element type");
    if (shape->rank < 0 || shape->rank > GIR_MAX_RANK)
        return gir_fail(err, GIR_E_SHAPE, "tensor rank %d is outside 0..%d", shape->rank, GIR_MAX_RANK);
    uint64_t n = gir_dtype_size(dt);
    for (int i = 0; i < shape->rank; i++) {
        if (shape->dims[i] < 0)
            return gir_fail(err, GIR_E_SHAPE, "tensor dimension %d is unknown (%lld)", i,
                            (long long)shape->dims[i]);
        if (!gir_mul_u64(n, (uint64_t)shape->dims[i], &n) || n > GIR_TENSOR_MAX_BYTES)
            return gir_fail(err, GIR_E_LIMIT, "tensor of %s is larger than %llu bytes",
                            gir_dtype_name(dt), (unsigned long long)GIR_TENSOR_MAX_BYTES);
    }
    *nbytes = n;
    return GIR_OK;
}

/* Lazily loaded data of this size or more is mapped on its own, so that
 * unloading it (a writer streaming the weights, the runtime once it has
 * packed them) gives the pages back at once.  From malloc, a large block
 * freed in the middle of the heap stays resident, and glibc raises its
 * mmap threshold after the first large free, so the next weights land in
 * the heap: ConvNeXt-T's session peaked at 207 MiB instead of 139. */
#define TENSOR_MAP_MIN ((uint64_t)128 << 10)

static void *data_alloc(uint64_t n, bool *mapped)
{
    *mapped = false;
#ifdef MAP_ANONYMOUS
    if (n >= TENSOR_MAP_MIN && n <= SIZE_MAX) {
        void *p = mmap(NULL, (size_t)n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p != MAP_FAILED) {
            *mapped = true;
            return p;
        }
    }
#endif
    return n > SIZE_MAX - 1 ? NULL : malloc(n ? (size_t)n : 1);
}

static void data_release(void *p, uint64_t n, bool mapped)
{
    if (mapped)
        munmap(p, (size_t)n);
    else
        free(p);
}

static void data_free(gir_tensor *t)
{
    data_release(t->data, t->nbytes, t->data_mapped);
    t->data = NULL;
    t->data_mapped = false;
}

static gir_status tensor_alloc(gir_dtype dt, const gir_shape *shape, gir_tensor **out, gir_error *err)
{
    uint64_t nbytes;
    gir_status st = gir_tensor_size(dt, shape, &nbytes, err);
    if (st || (st = gir_limit_tensor(nbytes, err)))
        return st;
    gir_tensor *t = calloc(1, sizeof *t);
    if (!t)
        return gir_nomem(err);
    t->refs = 1;
    t->dtype = dt;
    t->shape = *shape;
    t->nbytes = nbytes;
    *out = t;
    return GIR_OK;
}

gir_status gir_tensor_new(gir_dtype dt, const gir_shape *shape, gir_tensor **out, gir_error *err)
{
    gir_status st = tensor_alloc(dt, shape, out, err);
    if (st)
        return st;
    (*out)->data = calloc(1, (*out)->nbytes ? (size_t)(*out)->nbytes : 1);
    if (!(*out)->data) {
        free(*out);
        *out = NULL;
        return gir_nomem(err);
    }
    return GIR_OK;
}

gir_status gir_tensor_adopt(gir_dtype dt, const gir_shape *shape, void *data, gir_tensor **out, gir_error *err)
{
    gir_status st = tensor_alloc(dt, shape, out, err);
    if (st) {
        free(data);
        return st;
    }
    (*out)->data = data;
    return GIR_OK;
}

gir_status gir_tensor_lazy(gir_dtype dt, const gir_shape *shape, const gir_loader *loader, void *ctx,
                           gir_tensor **out, gir_error *err)
{
    gir_status st = tensor_alloc(dt, shape, out, err);
    if (st) {
        if (loader->release)
            loader->release(ctx);
        return st;
    }
    (*out)->loader = loader;
    (*out)->loader_ctx = ctx;
    return GIR_OK;
}

GIR_API gir_dtype gir_tensor_dtype(const gir_tensor *t)
{
    return t->dtype;
}

GIR_API const gir_shape *gir_tensor_shape(const gir_tensor *t)
{
    return &t->shape;
}

GIR_API uint64_t gir_tensor_nbytes(const gir_tensor *t)
{
    return t->nbytes;
}

GIR_API gir_status gir_tensor_load(gir_tensor *t, const void **data, gir_error *err)
{
    if (!t->data) {
        if (!t->loader)
            return gir_fail(err, GIR_E_INTERNAL, "tensor has neither data nor a loader");
        bool mapped;
        void *buf = data_alloc(t->nbytes, &mapped);
        if (!buf)
            return gir_nomem(err);
        gir_status st = t->loader->load(t->loader_ctx, buf, t->nbytes, err);
        if (st) {
            data_release(buf, t->nbytes, mapped);
            return st;
        }
        t->data = buf; /* published only once loaded: a failed load leaves none */
        t->data_mapped = mapped;
    }
    if (data)
        *data = t->data;
    return GIR_OK;
}

gir_status gir_tensor_own(gir_tensor *t, gir_error *err)
{
    if (!t->loader)
        return GIR_OK;
    TRY(gir_tensor_load(t, NULL, err));
    if (t->loader->release)
        t->loader->release(t->loader_ctx);
    t->loader = NULL;
    t->loader_ctx = NULL;
    return GIR_OK;
}

void gir_tensor_replace_data(gir_tensor *t, void *data)
{
    data_free(t);
    t->data = data;
}

GIR_API void gir_tensor_unload(gir_tensor *t)
{
    if (t && t->loader && t->data)
        data_free(t);
}

GIR_API gir_tensor *gir_tensor_ref(gir_tensor *t)
{
    if (t)
        t->refs++;
    return t;
}

GIR_API void gir_tensor_unref(gir_tensor *t)
{
    if (!t || --t->refs > 0)
        return;
    data_free(t);
    if (t->loader && t->loader->release)
        t->loader->release(t->loader_ctx);
    free(t);
}

gir_status gir_tensor_equal(gir_tensor *a, gir_tensor *b, bool *equal, gir_error *err)
{
    *equal = false;
    if (a->dtype != b->dtype || !gir_shape_equal(&a->shape, &b->shape))
        return GIR_OK;
    bool a_loaded = a->data != NULL, b_loaded = b->data != NULL;
    const void *pa, *pb;
    gir_status st = gir_tensor_load(a, &pa, err);
    if (st)
        return st;
    st = gir_tensor_load(b, &pb, err);
    if (st == GIR_OK)
        *equal = memcmp(pa, pb, (size_t)a->nbytes) == 0;
    if (!a_loaded)
        gir_tensor_unload(a);
    if (!b_loaded)
        gir_tensor_unload(b);
    return st;
}

gir_status gir_tensor_bool_as_float(gir_tensor *t, gir_dtype to, gir_tensor **out, gir_error *err)
{
    if (t->dtype != GIR_DT_BOOL || (to != GIR_DT_F32 && to != GIR_DT_F64))
        return gir_fail(err, GIR_E_INTERNAL, "a %s tensor cannot be held as %s 0/1", gir_dtype_name(t->dtype),
                        gir_dtype_name(to));
    const void *src;
    gir_status st = gir_tensor_load(t, &src, err);
    if (st || (st = gir_tensor_new(to, &t->shape, out, err)))
        return st;
    const uint8_t *b = src;
    size_t n = (size_t)gir_shape_numel(&t->shape);
    for (size_t i = 0; i < n; i++) {
        if (to == GIR_DT_F32)
            ((float *)(*out)->data)[i] = b[i] ? 1.0f : 0.0f;
        else
            ((double *)(*out)->data)[i] = b[i] ? 1.0 : 0.0;
    }
    return GIR_OK;
}
