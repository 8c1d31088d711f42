/* Fuzz target: a LightNet .wts beside its JSON (json, FUZZ_SPLIT, wts) */
#include "harness.h"

GIR_FUZZ_TARGET("model.json", "model.wts", "lightnet", true, false)
