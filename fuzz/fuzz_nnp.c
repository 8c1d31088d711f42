/* Fuzz target: an NNabla .nnp zip */
#include "harness.h"

GIR_FUZZ_TARGET("model.nnp", NULL, NULL, false, false)
