/* The ONNX format: probe, options and the plugin record. */
#include "onnx.h"

#include <string.h>

/* A ModelProto starts with known field numbers and wire types; writers put
 * ir_version (field 1, varint) first. */
static int probe(const unsigned char *head, size_t n, const char *path)
{
    static const struct {
        uint8_t field, wt;
    } known[] = { { 1, 0 }, { 2, 2 }, { 3, 2 }, { 4, 2 }, { 5, 0 }, { 6, 2 }, { 7, 2 }, { 8, 2 }, { 14, 2 }, { 20, 2 },
                  { 25, 2 } };
    size_t i = 0;
    int fields = 0;
    bool ir_first = n >= 2 && head[0] == 0x08 && head[1] >= 1 && head[1] <= 20;
    bool saw_graph = false;
    while (i < n) {
        uint64_t key = 0;
        int s = 0;
        while (i < n && s < 64) {
            key |= (uint64_t)(head[i] & 0x7f) << s;
            s += 7;
            if (!(head[i++] & 0x80))
                break;
        }
        if (i >= n && fields)
            break; /* the head ends inside a field: fine */
        uint32_t field = (uint32_t)(key >> 3), wt = key & 7;
        bool ok = false;
        for (size_t k = 0; k < sizeof known / sizeof known[0]; k++)
            ok |= known[k].field == field && known[k].wt == wt;
        if (!ok)
            return 0;
        fields++;
        if (field == 7)
            saw_graph = true;
        if (wt == 0) {
            while (i < n && (head[i] & 0x80))
                i++;
            i++;
        } else {
            uint64_t len = 0;
            s = 0;
            while (i < n && s < 64) {
                len |= (uint64_t)(head[i] & 0x7f) << s;
                s += 7;
                if (!(head[i++] & 0x80))
                    break;
            }
            if (field == 7)
                break; /* the graph runs past the head in most models */
            if (len > n - (i < n ? i : n))
                break;
            i += (size_t)len;
        }
    }
    bool ext = path && gir_str_ends_with(path, ".onnx");
    if (!fields)
        return 0;
    if (ir_first && (saw_graph || fields >= 2))
        return ext ? 95 : 80;
    return ext ? 60 : 20;
}

static const char *const extensions[] = { ".onnx", NULL };

static const gir_option_doc read_options[] = {
    { NULL, NULL },
};

static const gir_option_doc write_options[] = {
    { "opset", "opset of the default domain to write, 6..18 (default: 13, or the opset of a model read from ONNX)" },
    { "external-data", "write tensors of at least external-threshold bytes to NAME.data beside the model (1/0)" },
    { "external-threshold", "smallest tensor, in bytes, that external-data moves out of the model (default 1024)" },
    { NULL, NULL },
};

const gir_format gir_format_onnx =
    GIR_FORMAT_PLUGIN("onnx", "ONNX ModelProto (opsets 1-18 read, 7-18 written; external data)", onnx);
