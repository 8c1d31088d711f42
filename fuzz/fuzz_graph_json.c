/* Fuzz target: graph JSON of every family (NNVM, MXNet, TVM, LightNet, RelayViz), format by probing */
#include "harness.h"

GIR_FUZZ_TARGET("model.json", NULL, NULL, false, false)
