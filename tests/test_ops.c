/* The operator table: schemas and docs of every op, and shape/dtype
 * inference with exact results and errors. */
#include "gbuild.h"

#include <limits.h>
#include <math.h>

/* ---- helpers ---------------------------------------------------------------- */

/* A graph with one node "n" of op over graph inputs from spec
 * ("x:float32:[1,3] w:float32:[4]", "_" = an omitted input) and outputs
 * named in outs. */
static gir_graph *mk(const char *op, const char *spec, const char *outs, gir_node **np)
{
    gir_graph *g = gb_graph();
    char ins[512] = "", tok[128];
    const char *p = spec;
    while (*p) {
        size_t len = strcspn(p, " ");
        assert_true(len < sizeof tok);
        memcpy(tok, p, len);
        tok[len] = '\0';
        p += len;
        while (*p == ' ')
            p++;
        if (len == 0)
            continue;
        if (ins[0])
            strcat(ins, ",");
        if (strcmp(tok, "_") == 0) {
            strcat(ins, "_");
            continue;
        }
        char *c1 = strchr(tok, ':');
        assert_non_null(c1);
        char *c2 = strchr(c1 + 1, ':');
        assert_non_null(c2);
        *c1 = *c2 = '\0';
        gb_value(g, tok, GIR_VALUE_INPUT, c1 + 1, c2 + 1);
        strcat(ins, tok);
    }
    *np = gb_node(g, op, "n", ins, outs);
    return g;
}

/* Infers, checks one output, frees the graph. */
static void ok(gir_graph *g, const char *value, const char *dtype, const char *shape)
{
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_infer_shapes(g, &err), &err);
    gb_expect(g, value, dtype, shape);
    gir_error_clear(&err);
    gir_graph_free(g);
}

/* Infers, expects the failure code and message parts (the node is "n"), frees. */
#define BAD(g, code, ...)                                                                     \
    do {                                                                                      \
        gir_error e_ = GIR_ERROR_INIT;                                                        \
        gir_graph *g_ = (g);                                                                  \
        TU_FAILS(gir_infer_shapes(g_, &e_), &e_, (code), "node 'n'", __VA_ARGS__);            \
        gir_error_clear(&e_);                                                                 \
        gir_graph_free(g_);                                                                   \
    } while (0)

/* One-input op over x of the given type and shape, output y. */
static gir_graph *un(const char *op, const char *dtype, const char *shape, gir_node **np)
{
    char spec[128];
    snprintf(spec, sizeof spec, "x:%s:%s", dtype, shape);
    return mk(op, spec, "y", np);
}

/* ---- the table ------------------------------------------------------------------ */

static size_t count_operands(const char *spec, size_t *required, bool *variadic)
{
    size_t n = 0;
    *required = 0;
    *variadic = false;
    for (const char *p = spec; *p;) {
        size_t len = strcspn(p, ",");
        n++;
        if (len >= 3 && strncmp(p + len - 3, "...", 3) == 0) {
            *variadic = true;
            (*required)++;
        } else if (p[len - 1] != '?') {
            (*required)++;
        }
        p += len;
        while (*p == ',' || *p == ' ')
            p++;
    }
    return n;
}

static void test_table_complete(void **state)
{
    (void)state;
    int rows = 0;
#define GIR_OP(id, mi, ma, mo, mxo, cat) rows++;
#include "ops/ops.def"
#undef GIR_OP
    assert_int_equal(rows + 1, GIR_OP_COUNT_);
    assert_null(gir_op_get(GIR_OP_COUNT_));
    assert_string_equal(gir_op_name(GIR_OP_COUNT_), "?");
    for (int i = 1; i < GIR_OP_COUNT_; i++) {
        const gir_op_info *op = gir_op_get((gir_op)i);
        assert_non_null(op);
        assert_int_equal(gir_op_from_name(op->name), i);
        assert_non_null(op->infer);
        assert_non_null(op->attrs);
        assert_true(op->category && *op->category);
        /* a one-line doc: lower-case start, no final period, no newline */
        assert_true(op->doc && strlen(op->doc) > 10 && strlen(op->doc) < 110);
        assert_null(strchr(op->doc, '\n'));
        assert_true(op->doc[strlen(op->doc) - 1] != '.');
        /* operand names agree with the arity of ops.def */
        size_t req;
        bool var;
        size_t nin = count_operands(op->inputs, &req, &var);
        assert_int_equal(req, op->min_in);
        assert_int_equal(var ? GIR_VARIADIC : nin, op->max_in);
        size_t nout = count_operands(op->outputs, &req, &var);
        assert_int_equal(req, op->min_out);
        assert_int_equal(var ? GIR_VARIADIC : nout, op->max_out);
        size_t n_attrs = 0;
        while (op->attrs[n_attrs].name)
            n_attrs++;
        assert_int_equal(op->n_attrs, n_attrs);
        for (const gir_attr_schema *a = op->attrs; a->name; a++) {
            assert_true(a->doc && strlen(a->doc) > 5 && strlen(a->doc) < 130);
            assert_true(a->doc[strlen(a->doc) - 1] != '.');
            assert_ptr_equal(gir_op_attr_schema((gir_op)i, a->name), a); /* names unique */
            bool list = a->type == GIR_ATTR_INTS || a->type == GIR_ATTR_FLOATS;
            /* A defaulted list is filled from the spatial rank; fills only on INTS. */
            if (a->presence == GIR_ATTR_DEFAULTED && list)
                assert_int_not_equal(a->fill, GIR_FILL_NONE);
            if (a->fill != GIR_FILL_NONE)
                assert_int_equal(a->type, GIR_ATTR_INTS);
            if (a->choices) {
                assert_int_equal(a->type, GIR_ATTR_STRING);
                if (a->presence == GIR_ATTR_DEFAULTED) {
                    bool found = false;
                    for (const char *const *c = a->choices; *c; c++)
                        found = found || strcmp(*c, a->s) == 0;
                    assert_true(found);
                }
            }
            if (a->type == GIR_ATTR_STRING && a->presence == GIR_ATTR_DEFAULTED)
                assert_non_null(a->s);
            if (a->type == GIR_ATTR_INT && a->presence == GIR_ATTR_DEFAULTED && a->range == GIR_RANGE_BOOL)
                assert_true(a->i == 0 || a->i == 1);
            if (a->type == GIR_ATTR_INT && a->presence == GIR_ATTR_DEFAULTED && a->range == GIR_RANGE_POSITIVE)
                assert_true(a->i >= 1);
        }
    }
    assert_int_equal(gir_op_from_name("NoSuchOp"), GIR_OP_OPAQUE);
    assert_int_equal(gir_op_from_name(NULL), GIR_OP_OPAQUE);
}

static void test_table_details(void **state)
{
    (void)state;
    char buf[32];
    assert_string_equal(gir_op_operand_name(GIR_OP_Conv, false, 1, buf, sizeof buf), "W");
    assert_string_equal(gir_op_operand_name(GIR_OP_Conv, false, 2, buf, sizeof buf), "B");
    assert_string_equal(gir_op_operand_name(GIR_OP_Conv, false, 3, buf, sizeof buf), "?");
    assert_string_equal(gir_op_operand_name(GIR_OP_MaxPool, true, 1, buf, sizeof buf), "Indices");
    assert_string_equal(gir_op_operand_name(GIR_OP_Concat, false, 7, buf, sizeof buf), "inputs");
    assert_string_equal(gir_op_operand_name(GIR_OP_Split, true, 2, buf, sizeof buf), "outputs");
    assert_string_equal(gir_op_operand_name(GIR_OP_BatchNormalization, false, 4, buf, sizeof buf), "var");
    /* spot checks of ONNX opset-13 defaults */
    const gir_attr_schema *a = gir_op_attr_schema(GIR_OP_LeakyRelu, "alpha");
    assert_int_equal(a->presence, GIR_ATTR_DEFAULTED);
    assert_true(a->f == 0.01);
    a = gir_op_attr_schema(GIR_OP_Selu, "gamma");
    assert_true(a->f == 1.05070102214813232421875);
    a = gir_op_attr_schema(GIR_OP_BatchNormalization, "epsilon");
    assert_true(a->f == 1e-5);
    a = gir_op_attr_schema(GIR_OP_Resize, "coordinate_transformation_mode");
    assert_string_equal(a->s, "half_pixel");
    a = gir_op_attr_schema(GIR_OP_Resize, "cubic_coeff_a");
    assert_true(a->f == -0.75);
    a = gir_op_attr_schema(GIR_OP_Conv, "pads");
    assert_int_equal(a->fill, GIR_FILL_PADS);
    a = gir_op_attr_schema(GIR_OP_Conv, "kernel_shape");
    assert_int_equal(a->fill, GIR_FILL_KERNEL);
    assert_int_equal(gir_op_attr_schema(GIR_OP_MaxPool, "kernel_shape")->presence, GIR_ATTR_REQUIRED);
    assert_int_equal(gir_op_attr_schema(GIR_OP_Clip, "min")->presence, GIR_ATTR_OPTIONAL);
    assert_int_equal(gir_op_attr_schema(GIR_OP_Cast, "to")->type, GIR_ATTR_STRING);
    assert_int_equal(gir_op_attr_schema(GIR_OP_Reshape, "shape")->presence, GIR_ATTR_REQUIRED);
    assert_int_equal(gir_op_attr_schema(GIR_OP_Split, "split")->presence, GIR_ATTR_OPTIONAL);
    assert_int_equal(gir_op_attr_schema(GIR_OP_Unsqueeze, "axes")->presence, GIR_ATTR_REQUIRED);
    assert_int_equal(gir_op_attr_schema(GIR_OP_Squeeze, "axes")->presence, GIR_ATTR_OPTIONAL);
    assert_int_equal(gir_op_attr_schema(GIR_OP_ReduceMean, "keepdims")->i, 1);
    assert_int_equal(gir_op_attr_schema(GIR_OP_Softmax, "axis")->i, -1);
    assert_int_equal(gir_op_attr_schema(GIR_OP_Flatten, "axis")->i, 1);
    assert_null(gir_op_attr_schema(GIR_OP_Relu, "alpha"));
    assert_null(gir_op_attr_schema(GIR_OP_COUNT_, "alpha"));
    assert_string_equal(gir_attr_type_name(GIR_ATTR_INTS), "ints");
}

/* ---- elementwise ------------------------------------------------------------- */

static void test_unary(void **state)
{
    (void)state;
    static const char *const same[] = { "Identity", "Relu",  "Sigmoid",    "Tanh",     "LeakyRelu", "Elu",
                                        "Selu",     "HardSigmoid", "Softplus", "Softsign", "Clip",  "Exp",
                                        "Log",      "Sqrt",  "Abs",        "Neg",      "Floor",     "Ceil",
                                        "Round",    "Reciprocal", "Sign",  "Erf",      "Sin",       "Cos",
                                        "LRN",      "Softmax", "LogSoftmax" };
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        gir_node *n;
        gir_graph *g = un(same[i], "float32", "[batch,3,?,5]", &n);
        if (strcmp(same[i], "LRN") == 0)
            GB_INT(n, "size", 3);
        ok(g, "y", "float32", "[batch,3,?,5]");
    }
    gir_node *n;
    ok(un("Relu", "float32", "*", &n), "y", "float32", "*");
    ok(un("Not", "bool", "[2,3]", &n), "y", "bool", "[2,3]");
    BAD(un("Not", "float32", "[2,3]", &n), GIR_E_DTYPE, "Not input 0 (X) must be bool, found float32");

    gir_graph *g = un("Cast", "float32", "[N,4]", &n);
    GB_STR(n, "to", "int64");
    ok(g, "y", "int64", "[N,4]");
    g = un("Cast", "float32", "[4]", &n);
    GB_STR(n, "to", "complex64");
    BAD(g, GIR_E_ATTRIBUTE, "Cast attribute 'to' is 'complex64', expected one of float32, float64");
    g = un("Cast", "float32", "[4]", &n);
    BAD(g, GIR_E_ATTRIBUTE, "Cast needs attribute 'to'");

    g = un("Softmax", "float32", "[2,3]", &n);
    GB_INT(n, "axis", 2);
    BAD(g, GIR_E_ATTRIBUTE, "Softmax axis 2 is out of range for rank 2 (expected -2 to 1)");
    g = un("LRN", "float32", "[1,3,4,4]", &n);
    GB_INT(n, "size", 0);
    BAD(g, GIR_E_ATTRIBUTE, "LRN attribute 'size' is 0, expected 1 or more");

    g = mk("PRelu", "x:float32:[N,3,4,4] s:float32:[3,1,1]", "y", &n);
    ok(g, "y", "float32", "[N,3,4,4]");
    BAD(mk("PRelu", "x:float32:[1,3,4,5] s:float32:[4]", "y", &n), GIR_E_SHAPE,
        "PRelu cannot broadcast slope [4] to [1,3,4,5]");
    BAD(mk("PRelu", "x:float32:[3] s:float32:[1,3]", "y", &n), GIR_E_SHAPE, "slope [1,3] to [3]");
}

static void test_broadcast(void **state)
{
    (void)state;
    gir_node *n;
    ok(mk("Add", "a:float32:[2,3,4] b:float32:[3,1]", "y", &n), "y", "float32", "[2,3,4]");
    ok(mk("Mul", "a:float32:[batch,3] b:float32:[1]", "y", &n), "y", "float32", "[batch,3]");
    ok(mk("Sub", "a:float32:[] b:float32:[5,1]", "y", &n), "y", "float32", "[5,1]");
    /* an unknown dimension against 1 stays unknown (and keeps its name);
     * against a known size it takes that size */
    ok(mk("Div", "a:float32:[?,1,seq] b:float32:[1,4,1]", "y", &n), "y", "float32", "[?,4,seq]");
    ok(mk("Add", "a:float32:[?,seq] b:float32:[7,?]", "y", &n), "y", "float32", "[7,?]");
    ok(mk("Add", "a:float32:[batch] b:float32:[batch]", "y", &n), "y", "float32", "[batch]");
    ok(mk("Add", "a:float32:* b:float32:[3]", "y", &n), "y", "float32", "*");
    ok(mk("Add", "a:?:[3] b:float32:[3]", "y", &n), "y", "float32", "[3]");
    BAD(mk("Add", "a:float32:[2,3] b:float32:[4]", "y", &n), GIR_E_SHAPE,
        "Add cannot broadcast shapes [2,3] and [4]");
    BAD(mk("Add", "a:float32:[2,3] b:int64:[3]", "y", &n), GIR_E_DTYPE,
        "Add inputs 0 and 1 have different types float32 and int64");
    ok(mk("Pow", "a:float32:[2,3] b:int64:[3]", "y", &n), "y", "float32", "[2,3]");
    gir_graph *g = mk("Mod", "a:int32:[4] b:int32:[4]", "y", &n);
    GB_INT(n, "fmod", 2);
    BAD(g, GIR_E_ATTRIBUTE, "Mod attribute 'fmod' is 2, expected 0 or 1");

    ok(mk("Sum", "a:float32:[3,1] b:float32:[1,4] c:float32:[2,1,1]", "y", &n), "y", "float32", "[2,3,4]");
    ok(mk("Max", "a:float32:[3]", "y", &n), "y", "float32", "[3]");
    BAD(mk("Mean", "a:float32:[3] b:float32:[3] c:float32:[2]", "y", &n), GIR_E_SHAPE,
        "Mean cannot broadcast shapes [3] and [2]");
    BAD(mk("Min", "a:float32:[3] _", "y", &n), GIR_E_REFERENCE, "Min input 1 (data_0) is required but omitted");

    static const char *const cmp[] = { "Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual" };
    for (size_t i = 0; i < 5; i++)
        ok(mk(cmp[i], "a:int64:[N,1] b:int64:[5]", "y", &n), "y", "bool", "[N,5]");
    ok(mk("And", "a:bool:[2,1] b:bool:[3]", "y", &n), "y", "bool", "[2,3]");
    ok(mk("Xor", "a:bool:[2] b:?:[2]", "y", &n), "y", "bool", "[2]");
    BAD(mk("Or", "a:bool:[2] b:float32:[2]", "y", &n), GIR_E_DTYPE, "Or input 1 (B) must be bool, found float32");

    ok(mk("Where", "c:bool:[2,1,1] x:float32:[3,1] y0:float32:[4]", "y", &n), "y", "float32", "[2,3,4]");
    BAD(mk("Where", "c:int32:[2] x:float32:[2] y0:float32:[2]", "y", &n), GIR_E_DTYPE,
        "Where input 0 (condition) must be bool, found int32");
    BAD(mk("Where", "c:bool:[2] x:float32:[3] y0:float32:[3]", "y", &n), GIR_E_SHAPE,
        "Where cannot broadcast shapes [2] and [3]");
}

/* ---- convolution and pooling ------------------------------------------------------ */

static void test_conv(void **state)
{
    (void)state;
    gir_node *n;
    /* ResNet stem: 7x7 stride 2 pad 3 */
    gir_graph *g = mk("Conv", "x:float32:[N,3,224,224] w:float32:[64,3,7,7]", "y", &n);
    GB_INTS(n, "strides", 2, 2);
    GB_INTS(n, "pads", 3, 3, 3, 3);
    ok(g, "y", "float32", "[N,64,112,112]");
    /* asymmetric pads: H (0, 1), W (2, 0) */
    g = mk("Conv", "x:float32:[1,4,7,7] w:float32:[8,4,3,3] b:float32:[8]", "y", &n);
    GB_INTS(n, "strides", 2, 2);
    GB_INTS(n, "pads", 0, 2, 1, 0);
    ok(g, "y", "float32", "[1,8,3,4]");
    /* dilation 2: extent 5 */
    g = mk("Conv", "x:float32:[1,1,10,12] w:float32:[2,1,3,3]", "y", &n);
    GB_INTS(n, "dilations", 2, 3);
    ok(g, "y", "float32", "[1,2,6,6]");
    /* groups */
    g = mk("Conv", "x:float32:[1,32,8,8] w:float32:[64,8,3,3]", "y", &n);
    GB_INT(n, "group", 4);
    ok(g, "y", "float32", "[1,64,6,6]");
    /* depthwise, as in MobileNet v2 */
    g = mk("Conv", "x:float32:[1,32,112,112] w:float32:[32,1,3,3]", "y", &n);
    GB_INT(n, "group", 32);
    GB_INTS(n, "pads", 1, 1, 1, 1);
    GB_INTS(n, "strides", 2, 2);
    ok(g, "y", "float32", "[1,32,56,56]");
    /* auto_pad */
    g = mk("Conv", "x:float32:[1,1,7,8] w:float32:[1,1,3,3]", "y", &n);
    GB_STR(n, "auto_pad", "SAME_UPPER");
    GB_INTS(n, "strides", 2, 3);
    ok(g, "y", "float32", "[1,1,4,3]");
    g = mk("Conv", "x:float32:[1,1,7,8] w:float32:[1,1,3,3]", "y", &n);
    GB_STR(n, "auto_pad", "VALID");
    GB_INTS(n, "strides", 2, 2);
    GB_INTS(n, "pads", 5, 5, 5, 5); /* ignored under VALID */
    ok(g, "y", "float32", "[1,1,3,3]");
    /* 1-d and 3-d */
    ok(mk("Conv", "x:float32:[1,4,10] w:float32:[8,4,3]", "y", &n), "y", "float32", "[1,8,8]");
    ok(mk("Conv", "x:float32:[2,1,5,6,7] w:float32:[3,1,1,2,3]", "y", &n), "y", "float32", "[2,3,5,5,5]");
    /* W unknown: kernel_shape gives the spatial size, channels unknown */
    g = mk("Conv", "x:float32:[1,3,10,10] w:float32:*", "y", &n);
    GB_INTS(n, "kernel_shape", 5, 5);
    ok(g, "y", "float32", "[1,?,6,6]");
    ok(mk("Conv", "x:float32:* w:float32:*", "y", &n), "y", "float32", "*");
    ok(mk("Conv", "x:float32:[N,3,?,32] w:float32:[16,3,3,3]", "y", &n), "y", "float32", "[N,16,?,30]");

    g = mk("Conv", "x:float32:[1,3,2,2] w:float32:[4,3,5,5]", "y", &n);
    BAD(g, GIR_E_ATTRIBUTE, "Conv kernel extent 5 on spatial axis 0 is larger than the padded input extent 2");
    g = mk("Conv", "x:float32:[1,3,4,4] w:float32:[4,3,3,3]", "y", &n);
    GB_INTS(n, "dilations", 2, 2);
    BAD(g, GIR_E_ATTRIBUTE, "kernel extent 5 on spatial axis 0 is larger than the padded input extent 4");
    g = mk("Conv", "x:float32:[1,30,8,8] w:float32:[64,8,3,3]", "y", &n);
    GB_INT(n, "group", 4);
    BAD(g, GIR_E_ATTRIBUTE, "Conv group 4 does not divide the 30 input channels");
    g = mk("Conv", "x:float32:[1,32,8,8] w:float32:[62,8,3,3]", "y", &n);
    GB_INT(n, "group", 4);
    BAD(g, GIR_E_ATTRIBUTE, "Conv group 4 does not divide the 62 output channels");
    g = mk("Conv", "x:float32:[1,32,8,8] w:float32:[64,16,3,3]", "y", &n);
    GB_INT(n, "group", 4);
    BAD(g, GIR_E_SHAPE, "Conv input X [1,32,8,8] has 32 channels but weight W [64,16,3,3] expects 16 x group 4");
    g = mk("Conv", "x:float32:[1,3,8,8] w:float32:[4,3,3,3]", "y", &n);
    GB_INT(n, "group", 0);
    BAD(g, GIR_E_ATTRIBUTE, "Conv attribute 'group' is 0, expected 1 or more");
    g = mk("Conv", "x:float32:[1,3,8,8] w:float32:[4,3,3,3]", "y", &n);
    GB_INTS(n, "strides", 1, 1, 1);
    BAD(g, GIR_E_ATTRIBUTE, "Conv attribute 'strides' has 3 values, expected 2 (one per spatial axis)");
    g = mk("Conv", "x:float32:[1,3,8,8] w:float32:[4,3,3,3]", "y", &n);
    GB_INTS(n, "pads", 1, 1);
    BAD(g, GIR_E_ATTRIBUTE, "Conv attribute 'pads' has 2 values, expected 4 (begins then ends");
    g = mk("Conv", "x:float32:[1,3,8,8] w:float32:[4,3,3,3]", "y", &n);
    GB_INTS(n, "strides", 1, 0);
    BAD(g, GIR_E_ATTRIBUTE, "Conv attribute 'strides' has value 0 at position 1, expected 1 or more");
    g = mk("Conv", "x:float32:[1,3,8,8] w:float32:[4,3,3,3]", "y", &n);
    GB_INTS(n, "kernel_shape", 3, 2);
    BAD(g, GIR_E_SHAPE, "Conv kernel_shape [3,2] disagrees with weight W [4,3,3,3]");
    g = mk("Conv", "x:float32:[1,3,8,8] w:float32:[4,3,3,3]", "y", &n);
    GB_STR(n, "auto_pad", "SAME");
    BAD(g, GIR_E_ATTRIBUTE, "Conv attribute 'auto_pad' is 'SAME', expected one of NOTSET, SAME_UPPER, SAME_LOWER, VALID");
    g = mk("Conv", "x:float32:[1,3,8,8] w:float32:[4,3,3,3]", "y", &n);
    GB_STR(n, "group", "1");
    BAD(g, GIR_E_ATTRIBUTE, "Conv attribute 'group' has type string, expected int");
    BAD(mk("Conv", "x:float32:[1,3,8,8] w:float32:[4,3,3,3] b:float32:[5]", "y", &n), GIR_E_SHAPE,
        "Conv bias B has shape [5], expected [4]");
    BAD(mk("Conv", "x:float32:[3,8,8] w:float32:[4,3,3,3]", "y", &n), GIR_E_SHAPE,
        "Conv weight W [4,3,3,3] does not match input X [3,8,8] (expected rank 3)");
    BAD(mk("Conv", "x:float32:[8,8] w:float32:*", "y", &n), GIR_E_SHAPE,
        "Conv input X must have rank 3 or more (batch, channels, spatial axes), found [8,8]");
    BAD(mk("Conv", "x:float32:[1,3,8,8] w:float16:[4,3,3,3]", "y", &n), GIR_E_DTYPE,
        "Conv inputs 0 and 1 have different types float32 and float16");
    BAD(mk("Conv", "x:float32:[1,3,8,8]", "y", &n), GIR_E_SCHEMA, "Conv takes 2 to 3 inputs, found 1");
}

static void test_conv_transpose(void **state)
{
    (void)state;
    gir_node *n;
    /* stride 2, pad 1, output_padding 1: 2 * 6 + 1 + 3 - 2 = 14 */
    gir_graph *g = mk("ConvTranspose", "x:float32:[N,16,7,7] w:float32:[16,8,3,3] b:float32:[8]", "y", &n);
    GB_INTS(n, "strides", 2, 2);
    GB_INTS(n, "pads", 1, 1, 1, 1);
    GB_INTS(n, "output_padding", 1, 1);
    ok(g, "y", "float32", "[N,8,14,14]");
    /* groups multiply the output channels; asymmetric pads and dilation */
    g = mk("ConvTranspose", "x:float32:[1,16,5,5] w:float32:[16,4,3,3]", "y", &n);
    GB_INT(n, "group", 2);
    GB_INTS(n, "dilations", 2, 1);
    GB_INTS(n, "pads", 0, 1, 1, 0);
    ok(g, "y", "float32", "[1,8,8,6]");
    g = mk("ConvTranspose", "x:float32:[1,16,5,5] w:float32:[16,4,3,3]", "y", &n);
    GB_INTS(n, "output_shape", 20, 21);
    GB_INTS(n, "strides", 4, 4);
    ok(g, "y", "float32", "[1,4,20,21]");
    g = mk("ConvTranspose", "x:float32:[1,16,5,6] w:float32:[16,4,3,3]", "y", &n);
    GB_STR(n, "auto_pad", "SAME_LOWER");
    GB_INTS(n, "strides", 2, 3);
    ok(g, "y", "float32", "[1,4,10,18]");

    g = mk("ConvTranspose", "x:float32:[1,16,5,5] w:float32:[16,4,3,3]", "y", &n);
    GB_INTS(n, "strides", 2, 2);
    GB_INTS(n, "output_padding", 2, 0);
    BAD(g, GIR_E_ATTRIBUTE, "ConvTranspose output_padding 2 on spatial axis 0 is not less than the stride 2");
    BAD(mk("ConvTranspose", "x:float32:[1,8,5,5] w:float32:[16,4,3,3]", "y", &n), GIR_E_SHAPE,
        "ConvTranspose input X [1,8,5,5] has 8 channels but weight W [16,4,3,3] expects 16");
    g = mk("ConvTranspose", "x:float32:[1,16,1,1] w:float32:[16,4,1,1]", "y", &n);
    GB_INTS(n, "pads", 1, 0, 0, 0);
    BAD(g, GIR_E_ATTRIBUTE, "ConvTranspose pads 1 + 0 on spatial axis 0 leave no output");
    g = mk("ConvTranspose", "x:float32:[1,16,5,5] w:float32:[16,4,3,3]", "y", &n);
    GB_INTS(n, "output_shape", 1, 20, 20);
    BAD(g, GIR_E_ATTRIBUTE, "ConvTranspose attribute 'output_shape' has 3 values, expected 2");
}

static void test_pool(void **state)
{
    (void)state;
    gir_node *n;
    /* ResNet: 3x3 stride 2 pad 1 */
    gir_graph *g = mk("MaxPool", "x:float32:[N,64,112,112]", "y", &n);
    GB_INTS(n, "kernel_shape", 3, 3);
    GB_INTS(n, "strides", 2, 2);
    GB_INTS(n, "pads", 1, 1, 1, 1);
    ok(g, "y", "float32", "[N,64,56,56]");
    /* ceil_mode rounds up: (110 - 3) / 2 = 53.5 */
    g = mk("MaxPool", "x:float32:[1,96,110,109]", "y", &n);
    GB_INTS(n, "kernel_shape", 3, 3);
    GB_INTS(n, "strides", 2, 2);
    GB_INT(n, "ceil_mode", 1);
    ok(g, "y", "float32", "[1,96,55,54]");
    g = mk("MaxPool", "x:float32:[1,96,110,109]", "y", &n);
    GB_INTS(n, "kernel_shape", 3, 3);
    GB_INTS(n, "strides", 2, 2);
    ok(g, "y", "float32", "[1,96,54,54]");
    /* ceil_mode never starts a window in the end padding: 5 + 2 pad, k2 s2
     * would give 4 rounded up, but the 4th window starts at 6 >= 5 + 1 */
    g = mk("MaxPool", "x:float32:[1,1,5,6]", "y", &n);
    GB_INTS(n, "kernel_shape", 2, 2);
    GB_INTS(n, "strides", 2, 2);
    GB_INTS(n, "pads", 1, 1, 1, 1);
    GB_INT(n, "ceil_mode", 1);
    ok(g, "y", "float32", "[1,1,3,4]");
    /* dilations and the Indices output */
    g = mk("MaxPool", "x:float32:[2,3,9,9]", "y,idx", &n);
    GB_INTS(n, "kernel_shape", 3, 3);
    GB_INTS(n, "dilations", 2, 2);
    ok(g, "idx", "int64", "[2,3,5,5]");
    g = mk("MaxPool", "x:float32:[2,3,9,9]", "y,_", &n);
    GB_INTS(n, "kernel_shape", 3, 3);
    ok(g, "y", "float32", "[2,3,7,7]");
    g = mk("AveragePool", "x:float32:[N,C,7,7]", "y", &n);
    GB_INTS(n, "kernel_shape", 7, 7);
    ok(g, "y", "float32", "[N,C,1,1]");
    g = mk("AveragePool", "x:float32:[1,1,8]", "y", &n);
    GB_INTS(n, "kernel_shape", 3);
    GB_STR(n, "auto_pad", "SAME_LOWER");
    GB_INTS(n, "strides", 3);
    ok(g, "y", "float32", "[1,1,3]");
    g = mk("AveragePool", "x:float32:*", "y", &n);
    GB_INTS(n, "kernel_shape", 3, 3);
    ok(g, "y", "float32", "*");

    g = mk("AveragePool", "x:float32:[1,1,8,8]", "y", &n);
    GB_INTS(n, "kernel_shape", 3, 3);
    GB_INTS(n, "dilations", 2, 2);
    BAD(g, GIR_E_ATTRIBUTE, "AveragePool has no attribute 'dilations'");
    BAD(mk("MaxPool", "x:float32:[1,1,8,8]", "y", &n), GIR_E_ATTRIBUTE, "MaxPool needs attribute 'kernel_shape'");
    g = mk("MaxPool", "x:float32:*", "y", &n);
    GB_INTS(n, "kernel_shape", 1, 1, 1, 1, 1, 1, 1);
    BAD(g, GIR_E_ATTRIBUTE, "MaxPool attribute 'kernel_shape' has 7 values, more than the 6 spatial axes");
    g = mk("Conv", "x:float32:* w:float32:*", "y", &n);
    GB_INTS(n, "kernel_shape", 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
    BAD(g, GIR_E_ATTRIBUTE, "Conv attribute 'kernel_shape' has 20 values, more than the 6 spatial axes");
    g = mk("MaxPool", "x:float32:[1,1,8,8,8]", "y", &n);
    GB_INTS(n, "kernel_shape", 3, 3);
    BAD(g, GIR_E_ATTRIBUTE, "MaxPool attribute 'kernel_shape' has 2 values, expected 3 (one per spatial axis)");
    g = mk("MaxPool", "x:float32:[1,1,2,8]", "y", &n);
    GB_INTS(n, "kernel_shape", 3, 3);
    GB_INTS(n, "pads", 0, 0, 0, 1);
    BAD(g, GIR_E_ATTRIBUTE, "MaxPool kernel extent 3 on spatial axis 0 is larger than the padded input extent 2");
    g = mk("MaxPool", "x:float32:[1,1,8,8]", "y", &n);
    GB_INTS(n, "kernel_shape", 3, 3);
    GB_INT(n, "storage_order", 2);
    BAD(g, GIR_E_ATTRIBUTE, "MaxPool attribute 'storage_order' is 2, expected 0 or 1");

    ok(un("GlobalAveragePool", "float32", "[N,512,7,7]", &n), "y", "float32", "[N,512,1,1]");
    ok(un("GlobalMaxPool", "float32", "[1,8,3,4,5]", &n), "y", "float32", "[1,8,1,1,1]");
    BAD(un("GlobalMaxPool", "float32", "[8,3]", &n), GIR_E_SHAPE, "GlobalMaxPool input X must have rank 3 or more");
}

/* ---- other nn ops ------------------------------------------------------------------ */

static void test_gemm_matmul(void **state)
{
    (void)state;
    gir_node *n;
    ok(mk("Gemm", "a:float32:[batch,512] b:float32:[512,1000] c:float32:[1000]", "y", &n), "y", "float32",
       "[batch,1000]");
    gir_graph *g = mk("Gemm", "a:float32:[4,3] b:float32:[5,4]", "y", &n);
    GB_INT(n, "transA", 1);
    GB_INT(n, "transB", 1);
    ok(g, "y", "float32", "[3,5]");
    g = mk("Gemm", "a:float32:[3,4] b:float32:[5,4] c:float32:[3,1]", "y", &n);
    GB_INT(n, "transB", 1);
    ok(g, "y", "float32", "[3,5]");
    BAD(mk("Gemm", "a:float32:[3,4] b:float32:[5,4]", "y", &n), GIR_E_SHAPE,
        "Gemm inner dimensions differ: A [3,4] and B [5,4]");
    g = mk("Gemm", "a:float32:[3,4] b:float32:[4,5] c:float32:[3]", "y", &n);
    BAD(g, GIR_E_SHAPE, "Gemm cannot broadcast C [3] to [3,5]");
    BAD(mk("Gemm", "a:float32:[2,3,4] b:float32:[4,5]", "y", &n), GIR_E_SHAPE,
        "Gemm input A must be a matrix, found [2,3,4]");
    g = mk("Gemm", "a:float32:[3,4] b:float32:[4,5]", "y", &n);
    GB_INT(n, "transA", 1);
    BAD(g, GIR_E_SHAPE, "Gemm inner dimensions differ: A [3,4] (transposed) and B [4,5]");

    ok(mk("MatMul", "a:float32:[2,3,4] b:float32:[4,5]", "y", &n), "y", "float32", "[2,3,5]");
    ok(mk("MatMul", "a:float32:[4] b:float32:[4,5]", "y", &n), "y", "float32", "[5]");
    ok(mk("MatMul", "a:float32:[3,4] b:float32:[4]", "y", &n), "y", "float32", "[3]");
    ok(mk("MatMul", "a:float32:[4] b:float32:[4]", "y", &n), "y", "float32", "[]");
    ok(mk("MatMul", "a:float32:[2,1,3,4] b:float32:[5,4,6]", "y", &n), "y", "float32", "[2,5,3,6]");
    ok(mk("MatMul", "a:float32:[batch,seq,64] b:float32:[64,?]", "y", &n), "y", "float32", "[batch,seq,?]");
    BAD(mk("MatMul", "a:float32:[2,3,4] b:float32:[3,5]", "y", &n), GIR_E_SHAPE,
        "MatMul inner dimensions differ: [2,3,4] and [3,5]");
    BAD(mk("MatMul", "a:float32:[2,3,4] b:float32:[3,4,5]", "y", &n), GIR_E_SHAPE,
        "MatMul cannot broadcast the batch dimensions of [2,3,4] and [3,4,5]");
}

static void test_norm_dropout(void **state)
{
    (void)state;
    gir_node *n;
    ok(mk("BatchNormalization",
          "x:float32:[N,3,8,8] s:float32:[3] b:float32:[3] m:float32:[3] v:float32:*", "y", &n),
       "y", "float32", "[N,3,8,8]");
    BAD(mk("BatchNormalization", "x:float32:[N,3,8,8] s:float32:[3] b:float32:[4] m:float32:[3] v:float32:[3]",
           "y", &n),
        GIR_E_SHAPE, "BatchNormalization input B has shape [4], expected [3] (one value per channel of X [?,3,8,8])");
    ok(mk("InstanceNormalization", "x:float32:[2,4,5] s:float32:[4] b:float32:[4]", "y", &n), "y", "float32",
       "[2,4,5]");
    BAD(mk("InstanceNormalization", "x:float32:[2,4,5] s:float32:[2,2] b:float32:[4]", "y", &n), GIR_E_SHAPE,
        "InstanceNormalization input scale has shape [2,2], expected [4]");

    gir_graph *g = mk("Dropout", "x:float16:[N,10]", "y,mask", &n);
    GB_FLOAT(n, "ratio", 0.25);
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_infer_shapes(g, &err), &err);
    gb_expect(g, "y", "float16", "[N,10]");
    gb_expect(g, "mask", "bool", "[N,10]");
    gir_graph_free(g);
    g = mk("Dropout", "x:float32:[3]", "y", &n);
    GB_FLOAT(n, "ratio", 1.0);
    BAD(g, GIR_E_ATTRIBUTE, "Dropout ratio 1 is outside [0, 1)");
}

static void test_reduce(void **state)
{
    (void)state;
    gir_node *n;
    gir_graph *g = un("ReduceMean", "float32", "[N,3,4,5]", &n);
    GB_INTS(n, "axes", -1, -2);
    GB_INT(n, "keepdims", 0);
    ok(g, "y", "float32", "[N,3]");
    g = un("ReduceMean", "float32", "[N,3,4,5]", &n);
    GB_INTS(n, "axes", 2, 3);
    ok(g, "y", "float32", "[N,3,1,1]");
    ok(un("ReduceMax", "float32", "[2,3]", &n), "y", "float32", "[1,1]");
    g = un("ReduceProd", "int32", "[2,3]", &n);
    GB_INT(n, "keepdims", 0);
    ok(g, "y", "int32", "[]");
    g = un("ReduceSum", "float32", "[2,3]", &n);
    GB_INT(n, "noop_with_empty_axes", 1);
    ok(g, "y", "float32", "[2,3]");
    g = un("ReduceMin", "float32", "[2,3]", &n);
    GB_INTS(n, "axes", 1, -1);
    BAD(g, GIR_E_ATTRIBUTE, "ReduceMin axes repeats axis 1");
    g = un("ReduceSum", "float32", "[2,3]", &n);
    GB_INTS(n, "axes", 2);
    BAD(g, GIR_E_ATTRIBUTE, "ReduceSum axes 2 is out of range for rank 2 (expected -2 to 1)");
    g = un("ReduceMean", "float32", "[2,3]", &n);
    GB_INT(n, "noop_with_empty_axes", 1);
    BAD(g, GIR_E_ATTRIBUTE, "ReduceMean has no attribute 'noop_with_empty_axes'");

    g = un("ArgMax", "float32", "[2,3,4]", &n);
    GB_INT(n, "axis", -1);
    GB_INT(n, "keepdims", 0);
    ok(g, "y", "int64", "[2,3]");
    ok(un("ArgMin", "float32", "[N,3,4]", &n), "y", "int64", "[1,3,4]");
    g = un("ArgMin", "float32", "[2,3,4]", &n);
    GB_INT(n, "axis", -4);
    BAD(g, GIR_E_ATTRIBUTE, "ArgMin axis -4 is out of range for rank 3 (expected -3 to 2)");
}

/* ---- shape ops -------------------------------------------------------------------- */

static void test_reshape_flatten(void **state)
{
    (void)state;
    gir_node *n;
    gir_graph *g = un("Reshape", "float32", "[2,3,4]", &n);
    GB_INTS(n, "shape", 0, -1);
    ok(g, "y", "float32", "[2,12]");
    g = un("Reshape", "float32", "[batch,3,4]", &n);
    GB_INTS(n, "shape", 0, -1);
    ok(g, "y", "float32", "[batch,12]");
    /* the -1 is the one unknown dimension: it passes through with its name */
    g = un("Reshape", "float32", "[batch,512,1,1]", &n);
    GB_INTS(n, "shape", -1, 512);
    ok(g, "y", "float32", "[batch,512]");
    g = un("Reshape", "float32", "[batch,?,4]", &n);
    GB_INTS(n, "shape", -1, 4);
    ok(g, "y", "float32", "[?,4]");
    g = un("Reshape", "float32", "[2,3,4]", &n);
    GB_INTS(n, "shape", 4, 0, -1);
    ok(g, "y", "float32", "[4,3,2]");
    g = un("Reshape", "float32", "[0,5]", &n);
    GB_INTS(n, "shape", 5, 0);
    GB_INT(n, "allowzero", 1);
    ok(g, "y", "float32", "[5,0]");
    g = un("Reshape", "float32", "*", &n);
    GB_INTS(n, "shape", 0, 3, -1);
    ok(g, "y", "float32", "[?,3,?]");

    g = un("Reshape", "float32", "[2,3,4]", &n);
    GB_INTS(n, "shape", 5, 5);
    BAD(g, GIR_E_SHAPE, "Reshape cannot reshape [2,3,4] (24 elements) to [5,5] (25 elements)");
    g = un("Reshape", "float32", "[2,3,4]", &n);
    GB_INTS(n, "shape", 5, -1);
    BAD(g, GIR_E_SHAPE, "Reshape cannot reshape [2,3,4] (24 elements) to [5,?]");
    g = un("Reshape", "float32", "[2,3,4]", &n);
    GB_INTS(n, "shape", -1, -1);
    BAD(g, GIR_E_ATTRIBUTE, "Reshape shape has more than one -1");
    g = un("Reshape", "float32", "[2,3,4]", &n);
    GB_INTS(n, "shape", 0, -1);
    GB_INT(n, "allowzero", 1);
    BAD(g, GIR_E_ATTRIBUTE, "Reshape shape has both 0 and -1 while allowzero is 1");
    g = un("Reshape", "float32", "[24]", &n);
    GB_INTS(n, "shape", 24, 0);
    BAD(g, GIR_E_ATTRIBUTE, "Reshape shape[1] is 0 (copy the input dimension) but input [24] has rank 1");
    g = un("Reshape", "float32", "[24]", &n);
    GB_INTS(n, "shape", -2, 12);
    BAD(g, GIR_E_ATTRIBUTE, "Reshape shape has value -2");
    BAD(un("Reshape", "float32", "[24]", &n), GIR_E_ATTRIBUTE, "Reshape needs attribute 'shape'");
    g = un("Reshape", "float32", "[24]", &n);
    GB_FLOATS(n, "shape", 2.0, 12.0);
    BAD(g, GIR_E_ATTRIBUTE, "Reshape attribute 'shape' has type floats, expected ints");

    ok(un("Flatten", "float32", "[N,3,4,5]", &n), "y", "float32", "[N,60]");
    g = un("Flatten", "float32", "[N,3,4,5]", &n);
    GB_INT(n, "axis", 0);
    ok(g, "y", "float32", "[1,?]");
    g = un("Flatten", "float32", "[N,3,4,5]", &n);
    GB_INT(n, "axis", -1);
    ok(g, "y", "float32", "[?,5]");
    g = un("Flatten", "float32", "[2,3,4,5]", &n);
    GB_INT(n, "axis", 4);
    ok(g, "y", "float32", "[120,1]");
    ok(un("Flatten", "float32", "*", &n), "y", "float32", "[?,?]");
    g = un("Flatten", "float32", "[2,3,4,5]", &n);
    GB_INT(n, "axis", 5);
    BAD(g, GIR_E_ATTRIBUTE, "Flatten axis 5 is out of range for rank 4 (expected -4 to 4)");
}

static void test_transpose_squeeze(void **state)
{
    (void)state;
    gir_node *n;
    ok(un("Transpose", "float32", "[N,3,4]", &n), "y", "float32", "[4,3,N]");
    gir_graph *g = un("Transpose", "float32", "[N,3,4,5]", &n);
    GB_INTS(n, "perm", 0, 2, 3, 1);
    ok(g, "y", "float32", "[N,4,5,3]");
    g = un("Transpose", "float32", "*", &n);
    GB_INTS(n, "perm", 1, 0);
    ok(g, "y", "float32", "[?,?]");
    g = un("Transpose", "float32", "[2,3,4]", &n);
    GB_INTS(n, "perm", 0, 2, 2);
    BAD(g, GIR_E_ATTRIBUTE, "Transpose perm is not a permutation of 0..2 (value 2 at 2)");
    g = un("Transpose", "float32", "[2,3,4]", &n);
    GB_INTS(n, "perm", 1, 0);
    BAD(g, GIR_E_ATTRIBUTE, "Transpose attribute 'perm' has 2 values, expected 3 (one per input axis)");

    ok(un("Squeeze", "float32", "[1,3,1,5]", &n), "y", "float32", "[3,5]");
    g = un("Squeeze", "float32", "[N,1,1,5]", &n);
    GB_INTS(n, "axes", -2, 1);
    ok(g, "y", "float32", "[N,5]");
    ok(un("Squeeze", "float32", "[N,1,5]", &n), "y", "float32", "*");
    g = un("Squeeze", "float32", "[1,3]", &n);
    GB_INTS(n, "axes", 1);
    BAD(g, GIR_E_SHAPE, "Squeeze axis 1 of [1,3] has size 3, not 1");

    g = un("Unsqueeze", "float32", "[N,5]", &n);
    GB_INTS(n, "axes", 0, -1);
    ok(g, "y", "float32", "[1,N,5,1]");
    g = un("Unsqueeze", "float32", "[3,5]", &n);
    GB_INTS(n, "axes", 1, 3);
    ok(g, "y", "float32", "[3,1,5,1]");
    g = un("Unsqueeze", "float32", "[3,5]", &n);
    GB_INTS(n, "axes", 4);
    BAD(g, GIR_E_ATTRIBUTE, "Unsqueeze axes 4 is out of range for rank 3 (expected -3 to 2)");
    g = un("Unsqueeze", "float32", "[1,2,3,4,5,6,7]", &n);
    GB_INTS(n, "axes", 0, 1);
    BAD(g, GIR_E_LIMIT, "Unsqueeze output would have rank 9, more than the maximum 8");
    BAD(un("Unsqueeze", "float32", "[3]", &n), GIR_E_ATTRIBUTE, "Unsqueeze needs attribute 'axes'");
}

static void test_concat_split(void **state)
{
    (void)state;
    gir_node *n;
    gir_graph *g = mk("Concat", "a:float32:[N,3,8,8] b:float32:[N,5,8,8] c:float32:[N,1,8,8]", "y", &n);
    GB_INT(n, "axis", 1);
    ok(g, "y", "float32", "[N,9,8,8]");
    g = mk("Concat", "a:float32:[2,?] b:float32:* c:float32:[?,4]", "y", &n);
    GB_INT(n, "axis", -1);
    ok(g, "y", "float32", "[2,?]");
    g = mk("Concat", "a:float32:[2,3] b:float32:[2,4]", "y", &n);
    GB_INT(n, "axis", 0);
    BAD(g, GIR_E_SHAPE, "Concat input 1 [2,4] differs from [2,3] outside axis 0");
    g = mk("Concat", "a:float32:[2,3] b:float32:[2,3,1]", "y", &n);
    GB_INT(n, "axis", 0);
    BAD(g, GIR_E_SHAPE, "Concat inputs have different ranks: [2,3] and [2,3,1]");
    BAD(mk("Concat", "a:float32:[2,3] b:float32:[2,3]", "y", &n), GIR_E_ATTRIBUTE, "Concat needs attribute 'axis'");

    g = mk("Split", "x:float32:[6,N]", "a,b,c", &n);
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_infer_shapes(g, &err), &err);
    gb_expect(g, "a", "float32", "[2,N]");
    gb_expect(g, "c", "float32", "[2,N]");
    gir_graph_free(g);
    g = mk("Split", "x:float32:[4,7]", "a,b", &n);
    GB_INT(n, "axis", -1);
    GB_INTS(n, "split", 2, 5);
    TU_OK(gir_infer_shapes(g, &err), &err);
    gb_expect(g, "a", "float32", "[4,2]");
    gb_expect(g, "b", "float32", "[4,5]");
    gir_graph_free(g);
    g = mk("Split", "x:float32:[4,7]", "a,b", &n);
    GB_INT(n, "axis", 1);
    GB_INTS(n, "split", 2, 4);
    BAD(g, GIR_E_SHAPE, "Split sizes sum to 6 but axis 1 of [4,7] has 7");
    g = mk("Split", "x:float32:[4,7]", "a,b", &n);
    GB_INT(n, "axis", 1);
    BAD(g, GIR_E_SHAPE, "Split cannot divide axis 1 of [4,7] (7) into 2 equal parts");
    g = mk("Split", "x:float32:[4,7]", "a,b", &n);
    GB_INTS(n, "split", 1, 1, 2);
    BAD(g, GIR_E_ATTRIBUTE, "Split attribute 'split' has 3 values, expected 2 (one per output)");
}

static void test_slice_pad(void **state)
{
    (void)state;
    gir_node *n;
    gir_graph *g = un("Slice", "float32", "[10,N,30]", &n);
    GB_INTS(n, "starts", 1, -5);
    GB_INTS(n, "ends", INT64_MAX, -1);
    GB_INTS(n, "axes", 0, 2);
    GB_INTS(n, "steps", 2, 1);
    ok(g, "y", "float32", "[5,N,4]");
    /* reversal with a negative step, clamping of out-of-range starts */
    g = un("Slice", "float32", "[10,20]", &n);
    GB_INTS(n, "starts", -1, 100);
    GB_INTS(n, "ends", INT64_MIN, 200);
    GB_INTS(n, "steps", -1, 1);
    ok(g, "y", "float32", "[10,0]");
    g = un("Slice", "float32", "[10,20]", &n);
    GB_INTS(n, "starts", 8, -100);
    GB_INTS(n, "ends", 1, 100);
    GB_INTS(n, "steps", -3, 7);
    ok(g, "y", "float32", "[3,3]");
    g = un("Slice", "float32", "[N,20]", &n);
    GB_INTS(n, "starts", 0, 2);
    GB_INTS(n, "ends", INT64_MAX, 4);
    ok(g, "y", "float32", "[N,2]");
    g = un("Slice", "float32", "[N,20]", &n);
    GB_INTS(n, "starts", 1);
    GB_INTS(n, "ends", 4);
    ok(g, "y", "float32", "[?,20]");
    g = un("Slice", "float32", "[10,20]", &n);
    GB_INTS(n, "starts", 0);
    GB_INTS(n, "ends", 4);
    GB_INTS(n, "steps", 0);
    BAD(g, GIR_E_ATTRIBUTE, "Slice steps[0] is 0, expected a non-zero step");
    g = un("Slice", "float32", "[10,20]", &n);
    GB_INTS(n, "starts", 0, 1);
    GB_INTS(n, "ends", 4);
    BAD(g, GIR_E_ATTRIBUTE, "Slice attribute 'ends' has 1 values, expected 2 (one per start)");
    g = un("Slice", "float32", "[10,20]", &n);
    GB_INTS(n, "starts", 0, 1);
    GB_INTS(n, "ends", 4, 5);
    GB_INTS(n, "axes", 1, -1);
    BAD(g, GIR_E_ATTRIBUTE, "Slice axes repeats axis 1");

    g = un("Pad", "float32", "[N,3,4,4]", &n);
    GB_INTS(n, "pads", 0, 0, 1, 2, 0, 0, 3, 4);
    ok(g, "y", "float32", "[N,3,8,10]");
    g = un("Pad", "float32", "[1,3,4,4]", &n);
    GB_INTS(n, "pads", 0, 0, -1, 0, 0, 0, -1, 2);
    GB_STR(n, "mode", "reflect");
    ok(g, "y", "float32", "[1,3,2,6]");
    g = un("Pad", "float32", "*", &n);
    GB_INTS(n, "pads", 1, 1, 1, 1);
    ok(g, "y", "float32", "[?,?]");
    g = un("Pad", "float32", "[1,3,4,4]", &n);
    GB_INTS(n, "pads", 1, 1, 1, 1);
    BAD(g, GIR_E_ATTRIBUTE, "Pad attribute 'pads' has 4 values, expected 8 (begins then ends of each axis)");
    g = un("Pad", "float32", "[4,4]", &n);
    GB_INTS(n, "pads", 0, -3, 0, -2);
    BAD(g, GIR_E_ATTRIBUTE, "Pad pads -3 and -2 remove more than the 4 cells of axis 1 of [4,4]");
    g = un("Pad", "float32", "[4,4]", &n);
    GB_INTS(n, "pads", 0, 0, 0, 0);
    GB_STR(n, "mode", "wrap");
    BAD(g, GIR_E_ATTRIBUTE, "Pad attribute 'mode' is 'wrap', expected one of constant, reflect, edge");
}

static void test_tile_expand_gather(void **state)
{
    (void)state;
    gir_node *n;
    gir_graph *g = un("Tile", "float32", "[N,3]", &n);
    GB_INTS(n, "repeats", 1, 4);
    ok(g, "y", "float32", "[N,12]");
    g = un("Tile", "float32", "[2,3]", &n);
    GB_INTS(n, "repeats", 2, 1, 1);
    BAD(g, GIR_E_ATTRIBUTE, "Tile attribute 'repeats' has 3 values, expected 2 (one per input axis)");
    g = un("Tile", "float32", "[2,3]", &n);
    GB_INTS(n, "repeats", 2, -1);
    BAD(g, GIR_E_ATTRIBUTE, "Tile attribute 'repeats' has value -1 at position 1, expected 0 or more");

    g = un("Expand", "float32", "[3,1]", &n);
    GB_INTS(n, "shape", 2, 1, 4);
    ok(g, "y", "float32", "[2,3,4]");
    g = un("Expand", "float32", "[3,2]", &n);
    GB_INTS(n, "shape", 4);
    BAD(g, GIR_E_SHAPE, "Expand cannot broadcast shapes [3,2] and [4]");

    ok(mk("Gather", "d:float32:[5,4,3] i:int64:[2,6]", "y", &n), "y", "float32", "[2,6,4,3]");
    g = mk("Gather", "d:float32:[5,4,3] i:int32:[]", "y", &n);
    GB_INT(n, "axis", -2);
    ok(g, "y", "float32", "[5,3]");
    BAD(mk("Gather", "d:float32:[5,4] i:float32:[2]", "y", &n), GIR_E_DTYPE,
        "Gather input 1 (indices) must be int32 or int64, found float32");
    BAD(mk("Gather", "d:float32:[] i:int64:[2]", "y", &n), GIR_E_SHAPE,
        "Gather input data must have rank 1 or more, found []");
}

static void test_resize_space_shape(void **state)
{
    (void)state;
    gir_node *n;
    gir_graph *g = un("Resize", "float32", "[N,3,10,7]", &n);
    GB_FLOATS(n, "scales", 1.0, 1.0, 2.0, 0.5);
    ok(g, "y", "float32", "[N,3,20,3]");
    g = un("Resize", "float32", "[N,3,10,7]", &n);
    GB_INTS(n, "sizes", 1, 3, 32, 32);
    GB_STR(n, "mode", "linear");
    ok(g, "y", "float32", "[1,3,32,32]");
    g = un("Resize", "float32", "[1,3,10,10]", &n);
    GB_FLOATS(n, "scales", 1.0, 1.0, 2.0, 2.0);
    GB_INTS(n, "sizes", 1, 3, 20, 20);
    BAD(g, GIR_E_ATTRIBUTE, "Resize takes attribute 'scales' or 'sizes', not both");
    BAD(un("Resize", "float32", "[1,3,10,10]", &n), GIR_E_ATTRIBUTE, "Resize needs attribute 'scales' or 'sizes'");
    g = un("Resize", "float32", "[1,3,10,10]", &n);
    GB_FLOATS(n, "scales", 2.0, 2.0);
    BAD(g, GIR_E_ATTRIBUTE, "Resize attribute 'scales' has 2 values, expected 4 (one per input axis)");
    g = un("Resize", "float32", "[1,3,10,10]", &n);
    GB_FLOATS(n, "scales", 1.0, 1.0, 0.0, 2.0);
    BAD(g, GIR_E_ATTRIBUTE, "Resize scale 0 on axis 2 is not a positive number");
    g = un("Resize", "float32", "[1,3,10,10]", &n);
    GB_FLOATS(n, "scales", 1.0, 1.0, 2.0, 2.0);
    GB_STR(n, "nearest_mode", "round");
    BAD(g, GIR_E_ATTRIBUTE, "Resize attribute 'nearest_mode' is 'round', expected one of round_prefer_floor");

    g = un("DepthToSpace", "float32", "[N,8,2,3]", &n);
    GB_INT(n, "blocksize", 2);
    ok(g, "y", "float32", "[N,2,4,6]");
    g = un("SpaceToDepth", "float32", "[1,2,4,6]", &n);
    GB_INT(n, "blocksize", 2);
    ok(g, "y", "float32", "[1,8,2,3]");
    g = un("DepthToSpace", "float32", "[1,6,2,3]", &n);
    GB_INT(n, "blocksize", 2);
    BAD(g, GIR_E_SHAPE, "DepthToSpace input [1,6,2,3] has 6 channels, not a multiple of blocksize^2 = 4");
    g = un("SpaceToDepth", "float32", "[1,2,5,6]", &n);
    GB_INT(n, "blocksize", 2);
    BAD(g, GIR_E_SHAPE, "SpaceToDepth input [1,2,5,6] has height or width not a multiple of blocksize 2");
    g = un("DepthToSpace", "float32", "[8,2,3]", &n);
    GB_INT(n, "blocksize", 2);
    GB_STR(n, "mode", "CRD");
    BAD(g, GIR_E_SHAPE, "DepthToSpace input must have rank 4 (N, C, H, W), found [8,2,3]");

    ok(un("Shape", "float32", "[N,3,?]", &n), "y", "int64", "[3]");
    ok(un("Shape", "float32", "*", &n), "y", "int64", "[?]");
}

/* ---- declared outputs ---------------------------------------------------------------- */

static void test_declared_outputs(void **state)
{
    (void)state;
    gir_node *n;
    /* A reader may know output shapes: they must agree, and what either side
     * knows is kept. */
    gir_graph *g = mk("Relu", "x:float32:[N,3,?]", "y", &n);
    gb_shape(g->values[n->out[0]], "[?,3,7]");
    ok(g, "y", "float32", "[N,3,7]");
    g = mk("Relu", "x:float32:[N,3,4]", "y", &n);
    gb_shape(g->values[n->out[0]], "[N,3,5]");
    BAD(g, GIR_E_SHAPE, "Relu output 'y' is declared [?,3,5] but inferred [?,3,4]");
    g = mk("Relu", "x:float32:[2,3]", "y", &n);
    gb_shape(g->values[n->out[0]], "[2,3,1]");
    BAD(g, GIR_E_SHAPE, "Relu output 'y' is declared [2,3,1] but inferred [2,3]");
    g = mk("Shape", "x:float32:[2,3]", "y", &n);
    g->values[n->out[0]]->dtype = GIR_DT_I32;
    BAD(g, GIR_E_DTYPE, "Shape output 'y' is declared int32 but inferred int64");
    /* running inference twice changes nothing */
    g = mk("Conv", "x:float32:[N,3,8,8] w:float32:[4,3,3,3]", "y", &n);
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_infer_shapes(g, &err), &err);
    TU_OK(gir_infer_shapes(g, &err), &err);
    gb_expect(g, "y", "float32", "[N,4,6,6]");
    gir_graph_free(g);
}

static void test_attribute_checks(void **state)
{
    (void)state;
    gir_node *n;
    gir_graph *g = un("Relu", "float32", "[3]", &n);
    GB_FLOAT(n, "alpha", 0.1);
    BAD(g, GIR_E_ATTRIBUTE, "Relu has no attribute 'alpha'");
    g = un("LeakyRelu", "float32", "[3]", &n);
    GB_INT(n, "alpha", 0);
    BAD(g, GIR_E_ATTRIBUTE, "LeakyRelu attribute 'alpha' has type int, expected float");
    /* float attributes may be NaN or infinite (legitimate values) */
    g = un("Elu", "float32", "[3]", &n);
    GB_FLOAT(n, "alpha", NAN);
    ok(g, "y", "float32", "[3]");
    g = un("Pad", "float32", "[3]", &n);
    GB_INTS(n, "pads", 1, 1);
    GB_FLOAT(n, "constant_value", -INFINITY);
    ok(g, "y", "float32", "[5]");
    /* Clip bounds may be infinite */
    g = un("Clip", "float32", "[3]", &n);
    GB_FLOAT(n, "min", -INFINITY);
    GB_FLOAT(n, "max", 6.0);
    ok(g, "y", "float32", "[3]");
    /* opaque nodes are left alone: outputs keep what the reader set */
    g = mk("opaque", "x:float32:[3]", "y,z", &n);
    GB_STR(n, "whatever", "1");
    gb_shape(g->values[n->out[1]], "[7]");
    gir_error err = GIR_ERROR_INIT;
    TU_OK(gir_infer_shapes(g, &err), &err);
    gb_expect(g, "y", "unknown", "*");
    gb_expect(g, "z", "unknown", "[7]");
    gir_graph_free(g);
    /* the output slot of a required output must be connected */
    g = mk("Relu", "x:float32:[3]", "_", &n);
    BAD(g, GIR_E_REFERENCE, "Relu output 0 (Y) is not connected");
    g = mk("Conv", "x:float32:[1,3,4,4] _", "y", &n);
    BAD(g, GIR_E_REFERENCE, "Conv input 1 (W) is required but omitted");
    g = mk("MaxPool", "x:float32:[1,3,4,4]", "a,b,c", &n);
    BAD(g, GIR_E_SCHEMA, "MaxPool has 1 to 2 outputs, found 3");
}


/* ---- robustness ---------------------------------------------------------------- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(uint32_t n)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state % n);
}

static int64_t rnd_int(void)
{
    static const int64_t special[] = { INT64_MAX, INT64_MIN, INT32_MAX, (int64_t)1 << 62, -100 };
    return rnd(12) == 0 ? special[rnd(5)] : (int64_t)rnd(13) - 3;
}

static void rnd_attr(gir_graph *g, gir_node *n, const gir_attr_schema *a)
{
    static const double fl[] = { -1.0, 0.0, 0.5, 1.0, 2.0, 1e300 };
    int64_t iv[10];
    double fv[10];
    size_t len = rnd(10);
    for (size_t i = 0; i < len; i++) {
        iv[i] = rnd_int();
        fv[i] = fl[rnd(6)];
    }
    gir_attr_type t = rnd(10) == 0 ? (gir_attr_type)rnd(GIR_ATTR_STRINGS) : a->type;
    switch (t) {
    case GIR_ATTR_INT:
    case GIR_ATTR_BOOL: gir_attrs_set_int(g, &n->attrs, a->name, rnd_int(), NULL); break;
    case GIR_ATTR_FLOAT: gir_attrs_set_float(g, &n->attrs, a->name, rnd(8) ? fl[rnd(6)] : NAN, NULL); break;
    case GIR_ATTR_STRING:
        gir_attrs_set_string(g, &n->attrs, a->name, a->choices && rnd(4) ? a->choices[0] : "bogus", NULL);
        break;
    case GIR_ATTR_INTS: gir_attrs_set_ints(g, &n->attrs, a->name, iv, len, NULL); break;
    case GIR_ATTR_FLOATS: gir_attrs_set_floats(g, &n->attrs, a->name, fv, len, NULL); break;
    default: break;
    }
}

/* Random operands and attributes for every op: inference and the passes
 * never crash (the sanitizers watch), fail only with input-error codes, and
 * always name the node. */
static void test_random_nodes(void **state)
{
    (void)state;
    static const gir_dtype dts[] = { GIR_DT_F32, GIR_DT_I64, GIR_DT_BOOL, GIR_DT_UNKNOWN, GIR_DT_I32 };
    int failures = 0, successes = 0;
    for (int op = 1; op < GIR_OP_COUNT_; op++) {
        const gir_op_info *info = gir_op_get((gir_op)op);
        for (int iter = 0; iter < 150; iter++) {
            gir_graph *g = gb_graph();
            unsigned nin = info->min_in + rnd((info->max_in == GIR_VARIADIC ? info->min_in + 3 : info->max_in) -
                                              info->min_in + 1);
            unsigned nout = info->min_out + rnd((info->max_out == GIR_VARIADIC ? info->min_out + 3 : info->max_out) -
                                                info->min_out + 1);
            gir_node *n;
            assert_int_equal(gir_graph_add_node(g, "n", (gir_op)op, nin, nout, &n, NULL), GIR_OK);
            for (unsigned i = 0; i < nin; i++) {
                char name[16];
                snprintf(name, sizeof name, "i%u", i);
                int32_t v;
                assert_int_equal(gir_graph_add_value(g, name, GIR_VALUE_INPUT, &v, NULL), GIR_OK);
                gir_value *val = g->values[v];
                val->dtype = dts[rnd(5)];
                val->shape.rank = (int)rnd(GIR_MAX_RANK + 2) - 1;
                for (int d = 0; d < val->shape.rank; d++)
                    val->shape.dims[d] = rnd(20) == 0 ? ((int64_t)1 << 61) : (int64_t)rnd(8) - 1;
                n->in[i] = rnd(15) == 0 && i >= info->min_in ? -1 : v;
            }
            for (unsigned k = 0; k < nout; k++) {
                char name[16];
                snprintf(name, sizeof name, "o%u", k);
                assert_int_equal(gir_node_make_output(g, n, k, name, NULL), GIR_OK);
            }
            for (const gir_attr_schema *a = info->attrs; a->name; a++)
                if (rnd(3))
                    rnd_attr(g, n, a);
            if (rnd(20) == 0)
                gir_attrs_set_int(g, &n->attrs, "stray", 1, NULL);
            gir_error err = GIR_ERROR_INIT;
            gir_status st = rnd(2) ? gir_graph_finish(g, &err) : gir_infer_shapes(g, &err);
            if (st == GIR_OK) {
                successes++;
                for (unsigned k = 0; k < nout; k++) {
                    const gir_value *v = g->values[n->out[k]];
                    assert_true(v->shape.rank >= -1 && v->shape.rank <= GIR_MAX_RANK);
                    for (int d = 0; d < v->shape.rank; d++)
                        assert_true(v->shape.dims[d] >= -1);
                }
            } else {
                failures++;
                assert_true(st == GIR_E_SHAPE || st == GIR_E_DTYPE || st == GIR_E_ATTRIBUTE || st == GIR_E_LIMIT ||
                            st == GIR_E_REFERENCE || st == GIR_E_SCHEMA);
                assert_non_null(err.message);
                assert_non_null(err.node);
                assert_string_equal(err.node, "n");
            }
            gir_error_clear(&err);
            gir_graph_free(g);
        }
    }
    /* both outcomes are exercised */
    assert_true(successes > 1000 && failures > 1000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_complete),
        cmocka_unit_test(test_table_details),
        cmocka_unit_test(test_unary),
        cmocka_unit_test(test_broadcast),
        cmocka_unit_test(test_conv),
        cmocka_unit_test(test_conv_transpose),
        cmocka_unit_test(test_pool),
        cmocka_unit_test(test_gemm_matmul),
        cmocka_unit_test(test_norm_dropout),
        cmocka_unit_test(test_reduce),
        cmocka_unit_test(test_reshape_flatten),
        cmocka_unit_test(test_transpose_squeeze),
        cmocka_unit_test(test_concat_split),
        cmocka_unit_test(test_slice_pad),
        cmocka_unit_test(test_tile_expand_gather),
        cmocka_unit_test(test_resize_space_shape),
        cmocka_unit_test(test_declared_outputs),
        cmocka_unit_test(test_attribute_checks),
        cmocka_unit_test(test_random_nodes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
