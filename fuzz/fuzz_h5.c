/* Fuzz target: an NNabla parameter.h5 beside its .nntxt (nntxt, FUZZ_SPLIT, h5) */
#include "harness.h"

GIR_FUZZ_TARGET("model.nntxt", "parameter.h5", NULL, true, false)
