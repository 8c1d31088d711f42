/* The graph JSON of the NNVM family read straight from the text into
 * nn_raw, without a DOM of the nodes, heads, arg_nodes and node_row_ptr:
 * the DOM of a 100k-node file costs more than the rest of reading it.  The
 * top-level object is read token by token (io/json.h's pull lexer); the
 * values of nodes, heads, arg_nodes and node_row_ptr, whose shape is
 * known, byte by byte (gir_json_lex_direct), which costs half as much as
 * the general lexer's state machine.  Only the top-level "attrs" object
 * (small, but in TVM executor files it holds the per-entry lists) is built
 * as a DOM, in the file's document with the file's offsets.
 *
 * read_raw.c (nn_raw_parse over the DOM) is the specification.  This path
 * fills the same nn_raw for the files it reads, and gives up (false) at
 * anything it is not sure of: every case in which the JSON parser or
 * nn_raw_parse would fail (syntax, duplicate keys, unknown keys, wrong
 * types, entries out of range, cycles, ...), and some it would accept
 * (strings with NUL bytes, node_row_ptr values that are not integers,
 * attribute objects of more than ATTRS_MAX members).  The caller then
 * parses the DOM and runs nn_raw_parse, which words any error.  Nothing
 * here reports an error: err is NULL throughout. */
#include "nnvm.h"

#include <stdlib.h>
#include <string.h>

/* Larger attribute objects go to the DOM path (duplicate keys are looked
 * for pairwise). */
#define ATTRS_MAX 256u

typedef struct fast {
    nn_raw *raw;
    gir_json_lexer lx;
    gir_json_doc *doc;
    /* The text and the position in it while a value is read directly
     * (gir_json_lex_direct): the top-level object is read token by token,
     * the values of its members byte by byte, at half the cost. */
    const char *t;
    size_t len, p;
    size_t cap_nodes;
    nn_entry *ent; /* the current node's inputs; the heads */
    size_t n_ent, cap_ent;
    nn_kv *kv;     /* the current node's attributes */
    size_t n_kv, cap_kv;
    uint32_t *args;
    size_t n_args, cap_args;
    int64_t *rowp;
    size_t n_rowp, cap_rowp;
} fast;

/* ---- the bytes of a value read directly ----
 * Each function accepts only what the JSON grammar allows at its place and
 * fails at anything else; whitespace before a token is skipped. */

/* The next byte that is not whitespace (f->p moves to it), '\0' at the end
 * of the text (outside strings a NUL byte is never JSON). */
static inline char peek(fast *f)
{
    f->p = gir_json_skip_space(f->t, f->len, f->p);
    return f->p < f->len ? f->t[f->p] : '\0';
}

/* The next byte is c: consumed. */
static inline bool eat(fast *f, char c)
{
    if (peek(f) != c)
        return false;
    f->p++;
    return true;
}

/* A string: its bytes in the lexer's token (str, str_len, escaped). */
static inline bool string(fast *f)
{
    return peek(f) == '"' && gir_json_lex_string(&f->lx, &f->p);
}

/* A member's key and its ':'. */
static inline bool key(fast *f)
{
    return string(f) && eat(f, ':');
}

/* A number that is a non-negative integer in plain digits (no sign,
 * fraction or exponent), at most 19 of them: no overflow.  Anything else
 * fails, valid JSON or not: what comes after the digits is checked by the
 * caller's next expectation (a ',' or a bracket), so "01", "1.5" or "1e3"
 * fail there. */
static bool digits(fast *f, uint64_t *out)
{
    if (peek(f) == '0') {
        f->p++;
        *out = 0;
        return true;
    }
    const char *t = f->t;
    size_t p = f->p, end = f->len - p > 19 ? p + 19 : f->len;
    uint64_t x = 0;
    for (; p < end && t[p] >= '0' && t[p] <= '9'; p++)
        x = x * 10 + (uint64_t)(t[p] - '0');
    if (p == f->p)
        return false;
    f->p = p;
    *out = x;
    return true;
}

static bool u32(fast *f, uint32_t *out)
{
    uint64_t x;
    if (!digits(f, &x) || x > UINT32_MAX)
        return false;
    *out = (uint32_t)x;
    return true;
}

/* The current token's bytes as a NUL-terminated copy in raw's arena; NULL
 * when they hold a NUL byte (nn_raw_parse refuses those) or out of memory. */
static const char *token_cstr(fast *f)
{
    const gir_json_lexer *lx = &f->lx;
    if (lx->escaped && memchr(lx->str, '\0', lx->str_len))
        return NULL;
    return gir_arena_strndup(&f->raw->arena, lx->str, lx->str_len);
}

/* ---- the members of the graph object ---- */

/* The next token of the top-level object. */
static gir_json_token next(fast *f)
{
    return gir_json_lex_next(&f->lx);
}

/* An entry [node, index] or [node, index, version] appended to f->ent;
 * the node id is checked against the node count once every node is read
 * (check_entries). */
static bool entry(fast *f)
{
    uint32_t e[3] = { 0, 0, 0 };
    if (!eat(f, '[') || !u32(f, &e[0]) || !eat(f, ',') || !u32(f, &e[1]))
        return false;
    bool legacy = !eat(f, ',');
    if ((!legacy && !u32(f, &e[2])) || !eat(f, ']') || e[1] >= NN_MAX_PORTS)
        return false;
    f->raw->legacy = f->raw->legacy || legacy;
    if (f->n_ent == f->cap_ent && !GIR_GROW(f->ent, f->cap_ent, f->n_ent + 1))
        return false;
    f->ent[f->n_ent++] = (nn_entry){ e[0], e[1], e[2] };
    return true;
}

/* A JSON array, each of its items read by item(). */
static bool array_of(fast *f, bool (*item)(fast *))
{
    if (!eat(f, '['))
        return false;
    if (eat(f, ']'))
        return true;
    do
        if (!item(f))
            return false;
    while (eat(f, ','));
    return eat(f, ']');
}

/* An array of entries into f->ent, from its start. */
static bool entries(fast *f)
{
    f->n_ent = 0;
    return array_of(f, entry);
}

static nn_entry *ent_copy(fast *f)
{
    return gir_arena_memdup(&f->raw->arena, f->ent, f->n_ent * sizeof *f->ent);
}

/* An "attrs", "attr" or "param" object of strings merged into the node's
 * attributes as parse_attr_object does: a key an earlier object of the
 * node set is overwritten in place. */
static bool attr_object(fast *f, const char *which)
{
    if (!eat(f, '{'))
        return false;
    if (eat(f, '}'))
        return true;
    size_t members = 0;
    do {
        if (++members > ATTRS_MAX || !key(f))
            return false;
        const char *k = token_cstr(f);
        if (!k || !string(f))
            return false;
        const char *val = token_cstr(f);
        if (!val)
            return false;
        /* A key set by an earlier object of the node (obj is another
         * string) is overwritten in place; one set by this object is a
         * repeated key, which fails the JSON parse. */
        size_t j;
        for (j = 0; j < f->n_kv; j++)
            if (strcmp(f->kv[j].key, k) == 0)
                break;
        if (j < f->n_kv && strcmp(f->kv[j].obj, which) == 0)
            return false;
        if (j == f->n_kv) {
            if (f->n_kv == f->cap_kv && !GIR_GROW(f->kv, f->cap_kv, f->n_kv + 1))
                return false;
            f->n_kv++;
        }
        f->kv[j] = (nn_kv){ k, val, which, NULL };
    } while (eat(f, ','));
    return eat(f, '}');
}

/* An integer literal that may be negative (backward_source_id; the
 * value is not kept). */
static bool any_int(fast *f)
{
    uint64_t x;
    if (peek(f) == '-')
        f->p++;
    return f->p < f->len && f->t[f->p] >= '0' && f->t[f->p] <= '9' && digits(f, &x);
}

/* A node object appended to raw's nodes. */
static bool node(fast *f)
{
    nn_raw *raw = f->raw;
    if (raw->n_nodes >= NN_MAX_NODES ||
        (raw->n_nodes == f->cap_nodes && !GIR_GROW(raw->nodes_heap, f->cap_nodes, raw->n_nodes + 1)))
        return false;
    raw->nodes = raw->nodes_heap;
    nn_node n = { .row_outputs = -1 };
    unsigned seen = 0;
    f->n_kv = 0;
    if (!eat(f, '{'))
        return false;
    do {
        if (!key(f))
            return false;
        nn_node_key k = nn_node_key_of(f->lx.str, f->lx.str_len);
        unsigned bit = 1u << k;
        if (k == NN_NK_UNKNOWN || (seen & bit))
            return false; /* unknown or repeated key */
        seen |= bit;
        switch (k) {
        case NN_NK_OP:
        case NN_NK_NAME: {
            if (!string(f) || f->lx.str_len == 0)
                return false;
            const char *s = token_cstr(f);
            if (!s)
                return false;
            *(k == NN_NK_OP ? &n.op : &n.name) = s;
            break;
        }
        case NN_NK_INPUTS:
            if (!entries(f) || f->n_ent > NN_MAX_PORTS)
                return false;
            n.n_in = f->n_ent;
            if (n.n_in && !(n.in = ent_copy(f)))
                return false;
            break;
        case NN_NK_ATTRS:
        case NN_NK_ATTR:
        case NN_NK_PARAM:
            if (!attr_object(f, k == NN_NK_ATTRS ? "attrs" : k == NN_NK_ATTR ? "attr" : "param"))
                return false;
            raw->legacy = raw->legacy || k == NN_NK_PARAM;
            break;
        case NN_NK_CONTROL_DEPS:
        case NN_NK_SUBGRAPHS: /* only empty ones are read */
            if (!eat(f, '[') || !eat(f, ']'))
                return false;
            break;
        case NN_NK_BACKWARD_SOURCE_ID:
            if (!any_int(f))
                return false;
            raw->legacy = true;
            break;
        case NN_NK_UNKNOWN:
            break;
        }
    } while (eat(f, ','));
    const unsigned required = 1u << NN_NK_OP | 1u << NN_NK_NAME | 1u << NN_NK_INPUTS;
    if (!eat(f, '}') || (seen & required) != required)
        return false;
    n.var = strcmp(n.op, "null") == 0;
    if (n.var && n.n_in)
        return false;
    if (strcmp(n.op, "tvm_op") == 0)
        raw->has_tvm_op = true;
    if (f->n_kv) {
        if (!(n.attrs = gir_arena_memdup(&raw->arena, f->kv, f->n_kv * sizeof *n.attrs)))
            return false;
        n.n_attrs = f->n_kv;
    }
    raw->nodes[raw->n_nodes++] = n;
    return true;
}

static bool nodes(fast *f)
{
    return array_of(f, node);
}

static bool arg_node(fast *f)
{
    if ((f->n_args == f->cap_args && !GIR_GROW(f->args, f->cap_args, f->n_args + 1)) ||
        !u32(f, &f->args[f->n_args]))
        return false;
    f->n_args++;
    return true;
}

static bool arg_nodes(fast *f)
{
    return array_of(f, arg_node);
}

static bool heads(fast *f)
{
    nn_raw *raw = f->raw;
    if (!entries(f))
        return false;
    raw->n_heads = f->n_ent;
    return !raw->n_heads || (raw->heads = ent_copy(f)) != NULL;
}

/* node_row_ptr: non-negative integers only (nn_raw_parse reads the values
 * only when there is one per node and one more; this path wants them
 * anyway). */
static bool row_ptr_value(fast *f)
{
    uint64_t x;
    if (!digits(f, &x) || x > INT64_MAX ||
        (f->n_rowp == f->cap_rowp && !GIR_GROW(f->rowp, f->cap_rowp, f->n_rowp + 1)))
        return false;
    f->rowp[f->n_rowp++] = (int64_t)x;
    return true;
}

static bool row_ptr(fast *f)
{
    f->raw->has_row_ptr = true; /* on false the raw graph is dropped */
    return array_of(f, row_ptr_value);
}

/* The value of the graph member just keyed, read directly by read(), with
 * at most `levels` containers nested in it. */
static bool direct(fast *f, unsigned levels, bool (*read)(fast *))
{
    if (!gir_json_lex_direct(&f->lx, levels, &f->t, &f->len, &f->p) || !read(f))
        return false;
    gir_json_lex_resume(&f->lx, f->p);
    return true;
}

/* An entry's node in range; it raises its source's max_index. */
static bool check_entry(nn_raw *raw, const nn_entry *e)
{
    if (e->node >= raw->n_nodes)
        return false;
    nn_node *src = &raw->nodes[e->node];
    if (e->index + 1 > src->max_index)
        src->max_index = e->index + 1;
    return true;
}

/* The checks that need the node count, in nn_raw_parse's terms. */
static bool finish(fast *f, const gir_json *attrs)
{
    nn_raw *raw = f->raw;
    if (!raw->nodes) {
        if (!GIR_GROW(raw->nodes_heap, f->cap_nodes, 1))
            return false;
        memset(raw->nodes_heap, 0, sizeof *raw->nodes_heap);
        raw->nodes = raw->nodes_heap;
    }
    for (size_t i = 0; i < raw->n_nodes; i++)
        for (size_t j = 0; j < raw->nodes[i].n_in; j++)
            if (!check_entry(raw, &raw->nodes[i].in[j]))
                return false;
    for (size_t i = 0; i < f->n_args; i++)
        if (f->args[i] >= raw->n_nodes || !raw->nodes[f->args[i]].var)
            return false;
    for (size_t i = 0; i < raw->n_heads; i++)
        if (!check_entry(raw, &raw->heads[i]))
            return false;
    if (raw->has_row_ptr && f->n_rowp == raw->n_nodes + 1) {
        if (!(raw->row_ptr = gir_arena_memdup(&raw->arena, f->rowp, f->n_rowp * sizeof *raw->row_ptr)))
            return false;
        nn_raw_row_ptr_check(raw);
    }
    if (attrs && nn_raw_gattrs(raw, attrs, NULL))
        return false;
    return nn_raw_finish(raw, NULL) == GIR_OK;
}

static bool graph(fast *f)
{
    nn_raw *raw = f->raw;
    if (next(f) != GIR_JT_OBJECT)
        return false;
    unsigned seen = 0;
    size_t pos = 0, heads_pos = 0, rowp_pos = 0;
    const gir_json *attrs = NULL;
    gir_json_token t;
    for (; (t = next(f)) != GIR_JT_OBJECT_END; pos++) {
        if (t != GIR_JT_KEY)
            return false;
        nn_graph_key key = nn_graph_key_of(f->lx.str, f->lx.str_len);
        unsigned bit = 1u << key;
        if (key == NN_GK_UNKNOWN || (seen & bit))
            return false;
        seen |= bit;
        bool ok = false;
        switch (key) {
        case NN_GK_NODES: ok = direct(f, 4, nodes); break; /* nodes, node, inputs, entry */
        case NN_GK_ARG_NODES: ok = direct(f, 1, arg_nodes); break;
        case NN_GK_HEADS:
            heads_pos = pos;
            ok = direct(f, 2, heads);
            break;
        case NN_GK_NODE_ROW_PTR:
            rowp_pos = pos;
            ok = direct(f, 1, row_ptr);
            break;
        case NN_GK_ATTRS: ok = gir_json_lex_dom(&f->lx, f->doc, &attrs); break;
        case NN_GK_UNKNOWN: break;
        }
        if (!ok)
            return false;
    }
    const unsigned required = 1u << NN_GK_NODES | 1u << NN_GK_ARG_NODES | 1u << NN_GK_HEADS;
    if (next(f) != GIR_JT_END || (seen & required) != required)
        return false;
    raw->relay_layout = (seen & 1u << NN_GK_NODE_ROW_PTR) && rowp_pos > heads_pos;
    return finish(f, attrs);
}

bool nn_raw_parse_fast(gir_json_doc *doc, const gir_json_options *jo, nn_raw *raw)
{
    memset(raw, 0, sizeof *raw);
    raw->doc = doc;
    fast f = { .raw = raw, .doc = doc };
    size_t len;
    const char *text = gir_json_text(doc, &len);
    gir_json_lex_init(&f.lx, text, len, jo);
    bool ok = graph(&f);
    gir_json_lex_free(&f.lx);
    free(f.ent);
    free(f.kv);
    free(f.args);
    free(f.rowp);
    if (!ok)
        nn_raw_free(raw);
    return ok;
}
