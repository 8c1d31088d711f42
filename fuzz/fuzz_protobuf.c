/* Fuzz target: an NNabla parameter.protobuf beside its .nntxt (nntxt, FUZZ_SPLIT, protobuf) */
#include "harness.h"

GIR_FUZZ_TARGET("model.nntxt", "parameter.protobuf", NULL, true, false)
