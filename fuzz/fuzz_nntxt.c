/* Fuzz target: NNabla protobuf text (.nntxt), parameters included or none */
#include "harness.h"

GIR_FUZZ_TARGET("model.nntxt", NULL, NULL, false, false)
