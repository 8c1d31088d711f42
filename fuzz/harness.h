/* Fuzz targets: one per input kind, all through gir_fuzz_one. */
#ifndef GIR_FUZZ_HARNESS_H
#define GIR_FUZZ_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Between a graph and its companion file in one input. */
#define FUZZ_SPLIT "\n#--graphconv-fuzz-companion--#\n"

typedef struct gir_fuzz_kind {
    const char *file;      /* the input's file name (its extension matters) */
    const char *companion; /* the companion's file name, or NULL */
    const char *format;    /* NULL: detect, as the CLI does */
    bool params_option;    /* name the companion with the params option */
    bool npy;              /* a .npy tensor, not a model */
} gir_fuzz_kind;

int gir_fuzz_one(const uint8_t *data, size_t size, const gir_fuzz_kind *k);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define GIR_FUZZ_TARGET(...)                                        \
    static const gir_fuzz_kind fuzz_kind = { __VA_ARGS__ };        \
    int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)   \
    {                                                              \
        return gir_fuzz_one(data, size, &fuzz_kind);               \
    }

#endif
