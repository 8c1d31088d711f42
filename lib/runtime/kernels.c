/* The kernel table: one row per canonical op, in ops.def order.
 *
 * Every row of ops.def must have a KERNEL_<op> definition here (a missing
 * one does not compile); an op the runtime cannot run is defined as NULL
 * with the reason, and the executor reports it as GIR_E_NO_KERNEL naming
 * the op and the node, never skipping it. */
#include "rt.h"

#define KERNEL_Identity (&gir_k_identity)
#define KERNEL_Relu (&gir_k_unary)
#define KERNEL_Sigmoid (&gir_k_unary)
#define KERNEL_Tanh (&gir_k_unary)
#define KERNEL_LeakyRelu (&gir_k_unary)
#define KERNEL_Elu (&gir_k_unary)
#define KERNEL_Selu (&gir_k_unary)
#define KERNEL_HardSigmoid (&gir_k_unary)
#define KERNEL_Softplus (&gir_k_unary)
#define KERNEL_Softsign (&gir_k_unary)
#define KERNEL_PRelu (&gir_k_prelu)
#define KERNEL_Clip (&gir_k_unary)
#define KERNEL_Exp (&gir_k_unary)
#define KERNEL_Log (&gir_k_unary)
#define KERNEL_Sqrt (&gir_k_unary)
#define KERNEL_Abs (&gir_k_unary)
#define KERNEL_Neg (&gir_k_unary)
#define KERNEL_Floor (&gir_k_unary)
#define KERNEL_Ceil (&gir_k_unary)
#define KERNEL_Round (&gir_k_unary)
#define KERNEL_Reciprocal (&gir_k_unary)
#define KERNEL_Sign (&gir_k_unary)
#define KERNEL_Erf (&gir_k_unary)
#define KERNEL_Sin (&gir_k_unary)
#define KERNEL_Cos (&gir_k_unary)
#define KERNEL_Not (&gir_k_not)
#define KERNEL_Cast (&gir_k_cast)
#define KERNEL_Add (&gir_k_binary)
#define KERNEL_Sub (&gir_k_binary)
#define KERNEL_Mul (&gir_k_binary)
#define KERNEL_Div (&gir_k_binary)
#define KERNEL_Pow (&gir_k_binary)
#define KERNEL_Mod (&gir_k_binary)
#define KERNEL_Max (&gir_k_variadic)
#define KERNEL_Min (&gir_k_variadic)
#define KERNEL_Sum (&gir_k_variadic)
#define KERNEL_Mean (&gir_k_variadic)
#define KERNEL_Equal (&gir_k_binary)
#define KERNEL_Greater (&gir_k_binary)
#define KERNEL_Less (&gir_k_binary)
#define KERNEL_GreaterOrEqual (&gir_k_binary)
#define KERNEL_LessOrEqual (&gir_k_binary)
#define KERNEL_And (&gir_k_binary)
#define KERNEL_Or (&gir_k_binary)
#define KERNEL_Xor (&gir_k_binary)
#define KERNEL_Where (&gir_k_where)
#define KERNEL_Conv (&gir_k_conv)
#define KERNEL_ConvTranspose (&gir_k_conv_transpose)
#define KERNEL_Gemm (&gir_k_gemm)
#define KERNEL_MatMul (&gir_k_matmul)
#define KERNEL_BatchNormalization (&gir_k_batchnorm)
#define KERNEL_InstanceNormalization (&gir_k_instancenorm)
#define KERNEL_LRN (&gir_k_lrn)
#define KERNEL_MaxPool (&gir_k_maxpool)
#define KERNEL_AveragePool (&gir_k_avgpool)
#define KERNEL_GlobalMaxPool (&gir_k_globalpool)
#define KERNEL_GlobalAveragePool (&gir_k_globalpool)
#define KERNEL_Softmax (&gir_k_softmax)
#define KERNEL_LogSoftmax (&gir_k_softmax)
#define KERNEL_Dropout (&gir_k_dropout)
#define KERNEL_ReduceSum (&gir_k_reduce)
#define KERNEL_ReduceMean (&gir_k_reduce)
#define KERNEL_ReduceMax (&gir_k_reduce)
#define KERNEL_ReduceMin (&gir_k_reduce)
#define KERNEL_ReduceProd (&gir_k_reduce)
#define KERNEL_ArgMax (&gir_k_argminmax)
#define KERNEL_ArgMin (&gir_k_argminmax)
#define KERNEL_Reshape (&gir_k_reshape)
#define KERNEL_Flatten (&gir_k_flatten)
#define KERNEL_Transpose (&gir_k_transpose)
#define KERNEL_Squeeze (&gir_k_squeeze)
#define KERNEL_Unsqueeze (&gir_k_unsqueeze)
#define KERNEL_Concat (&gir_k_concat)
#define KERNEL_Split (&gir_k_split)
#define KERNEL_Slice (&gir_k_slice)
#define KERNEL_Pad (&gir_k_pad)
#define KERNEL_Tile (&gir_k_tile)
#define KERNEL_Expand (&gir_k_expand)
#define KERNEL_Gather (&gir_k_gather)
#define KERNEL_Resize (&gir_k_resize)
#define KERNEL_DepthToSpace (&gir_k_depth_to_space)
#define KERNEL_SpaceToDepth (&gir_k_space_to_depth)
#define KERNEL_Shape (&gir_k_shape)

static const rt_kernel *const kernel_table[] = {
    [GIR_OP_OPAQUE] = NULL, /* opaque nodes: see gir_rt_kernel */
#define GIR_OP(id, mi, ma, mo, mxo, cat) [GIR_OP_##id] = KERNEL_##id,
#include "ops/ops.def"
#undef GIR_OP
};

_Static_assert(sizeof kernel_table / sizeof kernel_table[0] == GIR_OP_COUNT_,
               "the kernel table needs exactly one row per op of ops.def");

const rt_kernel *gir_rt_kernel(gir_op op)
{
    return (unsigned)op < GIR_OP_COUNT_ ? kernel_table[op] : NULL;
}
