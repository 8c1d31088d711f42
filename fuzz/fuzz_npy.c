/* Fuzz target: a NumPy .npy tensor (read, then written back) */
#include "harness.h"

GIR_FUZZ_TARGET("x.npy", NULL, NULL, false, true)
