/* The static registry of formats: one line per format. */
#include "format.h"

#include <string.h>

static const gir_format *const registry[] = {
    NULL /* sentinel: formats are listed above this line */
};

#define REGISTRY_COUNT (sizeof registry / sizeof registry[0] - 1)

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
