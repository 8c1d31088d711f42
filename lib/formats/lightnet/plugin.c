/* The LightNet format plugin: detection, options and the operator mapping
 * listed by `graphconv ops --format lightnet`. */
#include "lightnet.h"

#include <string.h>
#include <strings.h>

/* Content probe: a JSON object whose first keys include "ops" and whose
 * op objects have "optype" (keys are case-insensitive in LightNet; //
 * and block comments may precede anything). */
static int probe(const unsigned char *head, size_t n, const char *path)
{
    (void)path;
    size_t i = 0;
    for (;;) {
        while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r'))
            i++;
        if (i + 1 < n && head[i] == '/' && head[i + 1] == '/') {
            while (i < n && head[i] != '\n')
                i++;
        } else if (i + 1 < n && head[i] == '/' && head[i + 1] == '*') {
            i += 2;
            while (i + 1 < n && !(head[i] == '*' && head[i + 1] == '/'))
                i++;
            i += 2;
        } else {
            break;
        }
    }
    if (i + 3 <= n && head[i] == 0xef && head[i + 1] == 0xbb && head[i + 2] == 0xbf)
        i += 3;
    if (i >= n || head[i] != '{')
        return 0;
    bool ops = false, optype = false, tensors = false;
    for (size_t k = i; k + 8 < n; k++) {
        if (head[k] != '"')
            continue;
        const char *s = (const char *)head + k + 1;
        size_t rest = n - k - 1;
        if (rest >= 4 && strncasecmp(s, "ops\"", 4) == 0)
            ops = true;
        else if (rest >= 7 && strncasecmp(s, "optype\"", 7) == 0)
            optype = true;
        else if ((rest >= 11 && strncasecmp(s, "tensors_in\"", 11) == 0) ||
                 (rest >= 12 && strncasecmp(s, "tensors_out\"", 12) == 0))
            tensors = true;
    }
    if (ops && optype && tensors)
        return 95;
    if (ops && (optype || tensors))
        return 80;
    return 0;
}

static const char *const extensions[] = { ".json", NULL };

static const gir_option_doc read_options[] = {
    { "seed", "seed of the uniform random fill of `create` ops with `ran` (default 20180101)" },
    { NULL, NULL },
};

static const gir_option_doc write_options[] = {
    { "inline-weights", "1: write every weight as inline `data` of its create op, no .wts file" },
    { "keep-variants", "1: write backend variants (conv2d_cuda, ...) read from LightNet as they were" },
    { NULL, NULL },
};

const gir_format gir_format_lightnet = GIR_FORMAT_PLUGIN(
    "lightnet", "LightNet JSON IR (ops with optype, tensors_in/out, params) with a .wts weight file", ln);
