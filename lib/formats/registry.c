/* The static registry of formats: one line per format. */
#include "format.h"

#include <string.h>

extern const gir_format gir_format_nnvm;
extern const gir_format gir_format_mxnet;
extern const gir_format gir_format_tvm;
extern const gir_format gir_format_nnabla;
extern const gir_format gir_format_lightnet;
extern const gir_format gir_format_relayviz;
extern const gir_format gir_format_onnx;

static const gir_format *const registry[] = {
    &gir_format_nnvm,
    &gir_format_mxnet,
    &gir_format_tvm,
    &gir_format_nnabla,
    &gir_format_lightnet,
    &gir_format_relayviz,
    &gir_format_onnx,
    NULL /* sentinel: formats are listed above this line */
};

/* Every format in registry order; the count excludes the sentinel. */
static size_t registry_count(void)
{
    size_t n = 0;
    while (registry[n])
        n++;
    return n;
}
#define REGISTRY_COUNT registry_count()

const gir_format *gir_format_at(size_t i)
{
    return i < REGISTRY_COUNT ? registry[i] : NULL;
}

const gir_format *gir_format_find(const char *name)
{
    for (size_t i = 0; name && i < REGISTRY_COUNT; i++)
        if (strcmp(registry[i]->name, name) == 0)
            return registry[i];
    return NULL;
}

GIR_API size_t gir_format_count(void) { return REGISTRY_COUNT; }
GIR_API const char *gir_format_name(size_t i) { return i < REGISTRY_COUNT ? registry[i]->name : NULL; }
GIR_API const char *gir_format_description(size_t i)
{
    return i < REGISTRY_COUNT ? registry[i]->description : NULL;
}
GIR_API bool gir_format_can_read(size_t i) { return i < REGISTRY_COUNT && registry[i]->read; }
GIR_API bool gir_format_can_write(size_t i) { return i < REGISTRY_COUNT && registry[i]->write; }

GIR_API bool gir_format_option(size_t i, bool for_writing, size_t k, const char **key, const char **doc)
{
    if (i >= REGISTRY_COUNT)
        return false;
    const gir_option_doc *d = for_writing ? registry[i]->write_options : registry[i]->read_options;
    for (size_t j = 0; d && d[j].key; j++)
        if (j == k) {
            *key = d[j].key;
            *doc = d[j].doc;
            return true;
        }
    return false;
}

GIR_API bool gir_common_option(size_t k, const char **key, const char **doc)
{
    for (size_t j = 0; gir_common_options[j].key; j++)
        if (j == k) {
            *key = gir_common_options[j].key;
            *doc = gir_common_options[j].doc;
            return true;
        }
    return false;
}
