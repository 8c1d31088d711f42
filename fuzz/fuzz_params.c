/* Fuzz target: an MXNet/TVM .params file beside its graph JSON (graph, FUZZ_SPLIT, params) */
#include "harness.h"

GIR_FUZZ_TARGET("model.json", "model.params", NULL, true, false)
