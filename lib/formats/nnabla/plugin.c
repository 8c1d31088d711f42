/* The NNabla format plugin: registration, probing and options (the
 * function <-> operator table is in ops.c). */
#include "nnabla.h"

#include <string.h>

static const char *const extensions[] = { ".nnp", ".nntxt", ".prototxt", NULL };

/* Does the text start like an NNablaProtoBuf (after comments/space)? */
static bool text_start(const unsigned char *p, size_t n)
{
    static const char *const fields[] = { "network", "executor", "global_config", "training_config", "dataset",
                                          "optimizer", "monitor", "parameter", "version", NULL };
    size_t i = 0;
    for (;;) {
        while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\r' || p[i] == '\n'))
            i++;
        if (i < n && p[i] == '#') {
            while (i < n && p[i] != '\n')
                i++;
            continue;
        }
        break;
    }
    for (size_t k = 0; fields[k]; k++) {
        size_t len = strlen(fields[k]);
        if (n - i > len && memcmp(p + i, fields[k], len) == 0) {
            size_t j = i + len;
            while (j < n && (p[j] == ' ' || p[j] == '\t'))
                j++;
            if (j < n && (p[j] == '{' || p[j] == ':' || p[j] == '<'))
                return true;
        }
    }
    return false;
}

static int probe(const unsigned char *head, size_t n, const char *path)
{
    bool ext_nnp = path && gir_str_ends_with(path, ".nnp");
    if (n >= 4 && head[0] == 'P' && head[1] == 'K' && head[2] == 3 && head[3] == 4) {
        /* the first member's name sits at offset 30 of its local header */
        if (n >= 30) {
            size_t name_len = (size_t)head[26] | (size_t)head[27] << 8;
            const char *nm = (const char *)head + 30;
            size_t avail = n - 30 < name_len ? n - 30 : name_len;
            static const char *const known[] = { "nnp_version.txt", "network.nntxt", "network.prototxt",
                                                 "net.nntxt", NULL };
            for (size_t k = 0; known[k]; k++)
                if (avail == strlen(known[k]) && memcmp(nm, known[k], avail) == 0)
                    return 95;
            if (avail > 6 && (memcmp(nm + avail - 6, ".nntxt", 6) == 0 ||
                              (avail > 9 && memcmp(nm + avail - 9, ".prototxt", 9) == 0)))
                return 90;
        }
        return ext_nnp ? 60 : 10;
    }
    if (text_start(head, n))
        return (path && (gir_str_ends_with(path, ".nntxt") || gir_str_ends_with(path, ".prototxt"))) ? 90 : 70;
    return 0;
}

static const gir_option_doc read_options[] = {
    { "executor", "executor whose network is read (default: the first executor)" },
    { "network", "network to read (default: the executor's network, else the first network)" },
    { NULL, NULL },
};

static const gir_option_doc write_options[] = {
    { "param-format", "parameter file in the .nnp: h5 (parameter.h5, the default) or protobuf "
                      "(parameter.protobuf)" },
    { NULL, NULL },
};

const gir_format gir_format_nnabla = GIR_FORMAT_PLUGIN(
    "nnabla",
    "NNabla / Neural Network Console: .nnp archive (nntxt network, parameter.h5 or parameter.protobuf) and "
    "standalone .nntxt",
    nnb);
