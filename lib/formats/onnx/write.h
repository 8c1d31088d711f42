/* The ONNX writer's context, shared by write.c (the graph, the model, the
 * streamed file) and write_ops.c (each node as NodeProto: attributes,
 * operands, opset forms, opaque nodes).  Internal to lib/formats/onnx. */
#ifndef GIR_ONNX_WRITE_H
#define GIR_ONNX_WRITE_H

#include "onnx.h"

/* An initializer to write. */
typedef struct winit {
    const char *name;
    gir_tensor *t;   /* reference owned by the writer */
    bool external;
    uint64_t offset; /* in the external data file */
} winit;

typedef struct writer {
    const gir_graph *g;
    const gir_options *opts;
    int64_t opset;
    int64_t fallback_opset; /* the opset to use when no option asks for one (0: the source's) */
    int64_t ir_version;
    gir_arena a;
    bool oom;
    gir_unsupported *u;
    onnx_map names; /* value names in the output; initializers map to index + 1 */
    Onnx__NodeProto **nodes;
    size_t n_nodes, cap_nodes;
    winit *inits;
    size_t n_inits, cap_inits;
    size_t n_value_inits; /* the first inits come from values, the rest are operands */
    Onnx__ValueInfoProto **inputs, **outputs, **vinfo;
    size_t n_inputs, n_outputs, n_vinfo;
    bool *const_done; /* per value: its Constant node was emitted */
    bool allow_opaque;
    const char *bad_meta; /* a value or node whose onnx.* blob does not decode */
    const char **xdom;    /* extra opset imports for other domains */
    int64_t *xver;
    size_t n_xdom;
} writer;

void *onnxw_aalloc(writer *w, size_t n);

char *onnxw_astr(writer *w, const char *s);

const char *onnxw_meta_s(const gir_attrs *m, const char *key);

void onnxw_unsupported(writer *w, const gir_node *n, gir_status code, const char *fmt, ...) GIR_PRINTF(4, 5);

/* Unpacks a base64 metadata blob into the arena. */
ProtobufCMessage *onnxw_unpack_blob(writer *w, const ProtobufCMessageDescriptor *desc, const char *blob);

bool onnxw_add_init(writer *w, const char *name, gir_tensor *t);

void onnxw_constant_node(writer *w, int32_t vi, gir_error *err);

bool onnxw_is_constant_node_value(const gir_value *v);

void onnxw_write_node(writer *w, const gir_node *n, gir_error *err);

#endif
