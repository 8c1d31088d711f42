/* Fuzz target: an ONNX model with its external data file weights.bin (model, FUZZ_SPLIT, data) */
#include "harness.h"

GIR_FUZZ_TARGET("model.onnx", "weights.bin", NULL, false, false)
