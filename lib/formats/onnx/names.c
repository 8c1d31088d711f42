/* A string -> int map for ONNX value names (keys are borrowed). */
#include "onnx.h"

#include <stdlib.h>
#include <string.h>

static uint64_t hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

void onnx_map_free(onnx_map *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

int32_t onnx_map_get(const onnx_map *m, const char *key)
{
    if (!m->cap || !key)
        return -1;
    size_t mask = m->cap - 1;
    for (size_t i = (size_t)hash(key) & mask;; i = (i + 1) & mask) {
        if (!m->keys[i])
            return -1;
        if (strcmp(m->keys[i], key) == 0)
            return m->vals[i];
    }
}

static void put(const char **keys, int32_t *vals, size_t cap, const char *key, int32_t v)
{
    size_t mask = cap - 1;
    size_t i = (size_t)hash(key) & mask;
    while (keys[i] && strcmp(keys[i], key) != 0)
        i = (i + 1) & mask;
    keys[i] = key;
    vals[i] = v;
}

bool onnx_map_put(onnx_map *m, const char *key, int32_t v)
{
    if ((m->n + 1) * 2 > m->cap) {
        size_t ncap = m->cap ? m->cap * 2 : 64;
        const char **nk = calloc(ncap, sizeof *nk);
        int32_t *nv = calloc(ncap, sizeof *nv);
        if (!nk || !nv) {
            free(nk);
            free(nv);
            return false;
        }
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i])
                put(nk, nv, ncap, m->keys[i], m->vals[i]);
        free(m->keys);
        free(m->vals);
        m->keys = nk;
        m->vals = nv;
        m->cap = ncap;
    }
    if (!onnx_map_has(m, key))
        m->n++;
    put(m->keys, m->vals, m->cap, key, v);
    return true;
}

bool onnx_map_has(const onnx_map *m, const char *key)
{
    if (!m->cap || !key)
        return false;
    size_t mask = m->cap - 1;
    for (size_t i = (size_t)hash(key) & mask;; i = (i + 1) & mask) {
        if (!m->keys[i])
            return false;
        if (strcmp(m->keys[i], key) == 0)
            return true;
    }
}
