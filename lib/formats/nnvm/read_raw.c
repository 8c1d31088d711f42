/* The graph JSON of the NNVM family, parsed into nn_raw and checked: the
 * keys and types dmlc's readers accept (plus the read-compatible legacy
 * spellings), entries in range, and a topological order (cycles refused).
 * This reads the DOM and is the specification: read_raw_fast.c reads ordinary
 * files straight from the text into the same nn_raw, and hands anything
 * else (every error among it) to this path.  The two share the graph
 * attributes (nn_raw_gattrs) and the last checks (nn_raw_finish). */
#include "nnvm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Fails err with the message already formatted into msg, at a JSON pointer. */
static gir_status fail_ptr(const nn_raw *raw, gir_error *err, const gir_json *v, gir_status code, const char *msg,
                           const char *ptr)
{
    gir_fail(err, code, "%s", msg);
    gir_json_err_at(err, raw->doc, v, "%s", ptr);
    return code;
}

static void describe(const gir_json *v, char *out, size_t n)
{
    gir_json_describe(v, out, n);
}

static const char *key_list_top = "nodes, arg_nodes, node_row_ptr, heads and attrs";
static const char *key_list_node = "op, name, inputs, attrs (or attr, param), control_deps";

/* Reads a non-negative integer that fits in uint32. */
static bool get_u32(const gir_json *v, uint32_t *out)
{
    uint64_t x;
    if (!gir_json_get_u64(v, &x) || x > UINT32_MAX)
        return false;
    *out = (uint32_t)x;
    return true;
}

/* Fails unless v, member key of node idx (of the graph when idx is
 * SIZE_MAX), is an array (of items, the message says). */
static gir_status want_array(nn_raw *raw, const gir_json *v, size_t idx, const char *key, const char *items,
                             gir_error *err)
{
    if (gir_json_is(v, GIR_JSON_ARRAY))
        return GIR_OK;
    char what[80], msg[300], ptr[64];
    describe(v, what, sizeof what);
    snprintf(msg, sizeof msg, "\"%s\" must be an array of %s, found %s", key, items, what);
    if (idx == SIZE_MAX)
        snprintf(ptr, sizeof ptr, "/%s", key);
    else
        snprintf(ptr, sizeof ptr, "/nodes/%zu/%s", idx, key);
    return fail_ptr(raw, err, v, GIR_E_SCHEMA, msg, ptr);
}

/* The pointer of input b of node a, or of head b when a is SIZE_MAX. */
static void entry_ptr(char *ptr, size_t n, size_t a, size_t b)
{
    if (a == SIZE_MAX)
        snprintf(ptr, n, "/heads/%zu", b);
    else
        snprintf(ptr, n, "/nodes/%zu/inputs/%zu", a, b);
}

/* Entry b of node a (or head b); its JSON pointer is built only for a
 * message. */
static gir_status parse_entry(nn_raw *raw, const gir_json *v, nn_entry *e, size_t a, size_t b, gir_error *err)
{
    char what[80], msg[200], ptr[128];
    if (!gir_json_is(v, GIR_JSON_ARRAY) || (v->len != 2 && v->len != 3)) {
        describe(v, what, sizeof what);
        snprintf(msg, sizeof msg, "an entry must be [node, index] or [node, index, version], found %s", what);
        entry_ptr(ptr, sizeof ptr, a, b);
        return fail_ptr(raw, err, v, GIR_E_SCHEMA, msg, ptr);
    }
    uint32_t f[3] = { 0, 0, 0 };
    for (size_t k = 0; k < v->len; k++) {
        if (!get_u32(gir_json_at(v, k), &f[k])) {
            describe(gir_json_at(v, k), what, sizeof what);
            snprintf(msg, sizeof msg, "entry %s must be a non-negative integer, found %s",
                     k == 0 ? "node id" : k == 1 ? "output index" : "version", what);
            entry_ptr(ptr, sizeof ptr, a, b);
            size_t l = strlen(ptr);
            snprintf(ptr + l, sizeof ptr - l, "/%zu", k);
            return fail_ptr(raw, err, gir_json_at(v, k), GIR_E_SCHEMA, msg, ptr);
        }
    }
    if (v->len == 2)
        raw->legacy = true;
    if (f[0] >= raw->n_nodes) {
        snprintf(msg, sizeof msg, "entry points at node %u, but the graph has %zu nodes (0..%zu)", f[0],
                 raw->n_nodes, raw->n_nodes ? raw->n_nodes - 1 : 0);
        entry_ptr(ptr, sizeof ptr, a, b);
        return fail_ptr(raw, err, v, GIR_E_REFERENCE, msg, ptr);
    }
    if (f[1] >= NN_MAX_PORTS) {
        snprintf(msg, sizeof msg, "entry takes output %u of node %u; at most 65535 outputs are supported", f[1],
                 f[0]);
        entry_ptr(ptr, sizeof ptr, a, b);
        return fail_ptr(raw, err, v, GIR_E_LIMIT, msg, ptr);
    }
    e->node = f[0];
    e->index = f[1];
    e->version = f[2];
    nn_node *src = &raw->nodes[f[0]];
    if (f[1] + 1 > src->max_index)
        src->max_index = f[1] + 1;
    return GIR_OK;
}

/* The entries of JSON array v (node a's inputs, or with a SIZE_MAX the
 * heads) into a new array of the arena (NULL when v is empty). */
static gir_status parse_entries(nn_raw *raw, const gir_json *v, size_t a, nn_entry **out, gir_error *err)
{
    *out = NULL;
    if (v->len && !(*out = nn_arena_array(&raw->arena, v->len, sizeof **out)))
        return gir_nomem(err);
    for (size_t i = 0; i < v->len; i++)
        TRY(parse_entry(raw, gir_json_at(v, i), &(*out)[i], a, i, err));
    return GIR_OK;
}

/* Escapes a key for a JSON pointer ("~" -> "~0", "/" -> "~1"). */
static void ptr_key(char *out, size_t n, const char *key)
{
    size_t j = 0;
    for (const char *p = key; *p && j + 3 < n; p++) {
        if (*p == '~' || *p == '/') {
            out[j++] = '~';
            out[j++] = *p == '~' ? '0' : '1';
        } else {
            out[j++] = *p;
        }
    }
    out[j] = '\0';
}

static gir_status parse_attr_object(nn_raw *raw, nn_node *n, size_t idx, const char *which, const gir_json *obj,
                                    gir_error *err)
{
    char what[80], msg[300], ptr[400], kbuf[200];
    if (!gir_json_is(obj, GIR_JSON_OBJECT)) {
        describe(obj, what, sizeof what);
        snprintf(msg, sizeof msg, "\"%s\" must be an object of strings, found %s", which, what);
        snprintf(ptr, sizeof ptr, "/nodes/%zu/%s", idx, which);
        return fail_ptr(raw, err, obj, GIR_E_SCHEMA, msg, ptr);
    }
    if (!obj->len)
        return GIR_OK;
    nn_kv *kv = gir_arena_alloc(&raw->arena, (n->n_attrs + obj->len) * sizeof *kv);
    if (!kv)
        return gir_nomem(err);
    if (n->n_attrs)
        memcpy(kv, n->attrs, n->n_attrs * sizeof *kv);
    size_t base = n->n_attrs;
    for (size_t i = 0; i < obj->len; i++) {
        const gir_json_member *m = &obj->u.members[i];
        const char *val = gir_json_get_cstr(&m->value);
        bool key_has_nul = strlen(m->key) != m->key_len;
        if (!val || key_has_nul) {
            ptr_key(kbuf, sizeof kbuf, m->key);
            snprintf(ptr, sizeof ptr, "/nodes/%zu/%s/%s", idx, which, kbuf);
        }
        if (!val) {
            describe(&m->value, what, sizeof what);
            snprintf(msg, sizeof msg, "attribute \"%.100s\" must be a string, found %s", m->key, what);
            return fail_ptr(raw, err, &m->value, GIR_E_SCHEMA, msg, ptr);
        }
        if (key_has_nul) {
            snprintf(msg, sizeof msg, "attribute name contains a NUL byte");
            return fail_ptr(raw, err, &m->value, GIR_E_SCHEMA, msg, ptr);
        }
        /* param and attr of legacy files may both set a key: the later wins.
         * Keys within one object are distinct (the document was parsed
         * refusing duplicates), so only earlier objects' keys are looked at. */
        size_t j;
        for (j = 0; j < base; j++)
            if (strcmp(kv[j].key, m->key) == 0)
                break;
        if (j == base)
            j = n->n_attrs;
        kv[j].key = m->key;
        kv[j].value = val;
        kv[j].obj = which;
        kv[j].where = &m->value;
        if (j == n->n_attrs)
            n->n_attrs++;
    }
    n->attrs = kv;
    return GIR_OK;
}

/* The index of the n bytes at k in names (count entries), else count. */
static size_t key_index(const char *const *names, size_t count, const char *k, size_t n)
{
    for (size_t i = 0; i < count; i++)
        if (n && k[0] == names[i][0] && strlen(names[i]) == n && memcmp(k, names[i], n) == 0) /* first byte first */
            return i;
    return count;
}

nn_node_key nn_node_key_of(const char *k, size_t n)
{
    static const char *const names[NN_NK_UNKNOWN] = {
        [NN_NK_OP] = "op",       [NN_NK_NAME] = "name",     [NN_NK_INPUTS] = "inputs",
        [NN_NK_ATTRS] = "attrs", [NN_NK_ATTR] = "attr",     [NN_NK_PARAM] = "param",
        [NN_NK_CONTROL_DEPS] = "control_deps", [NN_NK_SUBGRAPHS] = "subgraphs",
        [NN_NK_BACKWARD_SOURCE_ID] = "backward_source_id",
    };
    return (nn_node_key)key_index(names, NN_NK_UNKNOWN, k, n);
}

nn_graph_key nn_graph_key_of(const char *k, size_t n)
{
    static const char *const names[NN_GK_UNKNOWN] = {
        [NN_GK_NODES] = "nodes", [NN_GK_ARG_NODES] = "arg_nodes", [NN_GK_HEADS] = "heads",
        [NN_GK_NODE_ROW_PTR] = "node_row_ptr", [NN_GK_ATTRS] = "attrs",
    };
    return (nn_graph_key)key_index(names, NN_GK_UNKNOWN, k, n);
}

/* Node idx: v, element idx of "nodes". */
static gir_status parse_node(nn_raw *raw, size_t idx, const gir_json *v, gir_error *err)
{
    nn_node *n = &raw->nodes[idx];
    char what[80], msg[300], ptr[300];
    n->json = v;
    n->row_outputs = -1;
    if (!gir_json_is(v, GIR_JSON_OBJECT)) {
        describe(v, what, sizeof what);
        snprintf(msg, sizeof msg, "a node must be an object, found %s", what);
        snprintf(ptr, sizeof ptr, "/nodes/%zu", idx);
        return fail_ptr(raw, err, v, GIR_E_SCHEMA, msg, ptr);
    }
    const gir_json *op = NULL, *name = NULL, *inputs = NULL, *deps = NULL, *subgraphs = NULL;
    for (size_t i = 0; i < v->len; i++) {
        const gir_json_member *m = &v->u.members[i];
        const char *k = m->key;
        gir_status st = GIR_OK;
        nn_node_key key = nn_node_key_of(k, strlen(k)); /* a key with a NUL byte counts up to it */
        if (key == NN_NK_OP)
            op = &m->value;
        else if (key == NN_NK_NAME)
            name = &m->value;
        else if (key == NN_NK_INPUTS)
            inputs = &m->value;
        else if (key == NN_NK_ATTRS || key == NN_NK_ATTR || key == NN_NK_PARAM) {
            raw->legacy = raw->legacy || key == NN_NK_PARAM;
            st = parse_attr_object(raw, n, idx, k, &m->value, err);
        } else if (key == NN_NK_CONTROL_DEPS)
            deps = &m->value;
        else if (key == NN_NK_SUBGRAPHS)
            subgraphs = &m->value;
        else if (key == NN_NK_BACKWARD_SOURCE_ID) {
            int64_t x;
            if (!gir_json_get_i64(&m->value, &x)) {
                describe(&m->value, what, sizeof what);
                snprintf(msg, sizeof msg, "\"backward_source_id\" must be an integer, found %s", what);
                snprintf(ptr, sizeof ptr, "/nodes/%zu/backward_source_id", idx);
                return fail_ptr(raw, err, &m->value, GIR_E_SCHEMA, msg, ptr);
            }
            raw->legacy = true;
        } else {
            snprintf(msg, sizeof msg, "unknown key \"%.100s\" in a node (a node has %s)", k, key_list_node);
            char kb[200];
            ptr_key(kb, sizeof kb, k);
            snprintf(ptr, sizeof ptr, "/nodes/%zu/%s", idx, kb);
            return fail_ptr(raw, err, &m->value, GIR_E_SCHEMA, msg, ptr);
        }
        if (st)
            return st;
    }
    static const char *const req[] = { "op", "name", "inputs" };
    const gir_json *got[] = { op, name, inputs };
    for (size_t k = 0; k < 3; k++) {
        if (!got[k]) {
            snprintf(msg, sizeof msg, "node has no \"%s\"", req[k]);
            snprintf(ptr, sizeof ptr, "/nodes/%zu", idx);
            return fail_ptr(raw, err, v, GIR_E_SCHEMA, msg, ptr);
        }
    }
    n->op = gir_json_get_cstr(op);
    n->name = gir_json_get_cstr(name);
    if (!n->op || !n->name) {
        const gir_json *bad = n->op ? name : op;
        describe(bad, what, sizeof what);
        snprintf(msg, sizeof msg, "\"%s\" must be a string, found %s", n->op ? "name" : "op", what);
        snprintf(ptr, sizeof ptr, "/nodes/%zu/%s", idx, n->op ? "name" : "op");
        return fail_ptr(raw, err, bad, GIR_E_SCHEMA, msg, ptr);
    }
    if (!*n->op) {
        snprintf(ptr, sizeof ptr, "/nodes/%zu/op", idx);
        return fail_ptr(raw, err, op, GIR_E_SCHEMA, "\"op\" is empty", ptr);
    }
    if (!*n->name) {
        snprintf(ptr, sizeof ptr, "/nodes/%zu/name", idx);
        return fail_ptr(raw, err, name, GIR_E_SCHEMA, "node name is empty", ptr);
    }
    if (strcmp(n->op, "tvm_op") == 0)
        raw->has_tvm_op = true;
    TRY(want_array(raw, inputs, idx, "inputs", "entries", err));
    n->n_in = inputs->len;
    if (n->n_in > NN_MAX_PORTS) {
        snprintf(ptr, sizeof ptr, "/nodes/%zu/inputs", idx);
        return fail_ptr(raw, err, inputs, GIR_E_LIMIT, "a node has more than 65535 inputs", ptr);
    }
    TRY(parse_entries(raw, inputs, idx, &n->in, err));
    n->var = strcmp(n->op, "null") == 0;
    if (n->var && n->n_in) {
        snprintf(ptr, sizeof ptr, "/nodes/%zu/inputs", idx);
        return fail_ptr(raw, err, inputs, GIR_E_SCHEMA, "a variable (op \"null\") cannot have inputs", ptr);
    }
    if (deps) {
        TRY(want_array(raw, deps, idx, "control_deps", "node ids", err));
        if (deps->len) {
            snprintf(ptr, sizeof ptr, "/nodes/%zu/control_deps", idx);
            return fail_ptr(raw, err, deps, GIR_E_UNSUPPORTED,
                            "control dependencies are not supported (they only order training updates)", ptr);
        }
    }
    if (subgraphs) {
        TRY(want_array(raw, subgraphs, idx, "subgraphs", "graphs", err));
        if (subgraphs->len) {
            snprintf(msg, sizeof msg,
                     "subgraphs of control-flow operator \"%.100s\" are not supported (export the model "
                     "without _foreach/_while_loop/_cond or subgraph backends)",
                     n->op);
            snprintf(ptr, sizeof ptr, "/nodes/%zu/subgraphs", idx);
            return fail_ptr(raw, err, subgraphs, GIR_E_UNSUPPORTED, msg, ptr);
        }
    }
    return GIR_OK;
}

gir_status nn_raw_gattrs(nn_raw *raw, const gir_json *attrs, gir_error *err)
{
    char what[80], msg[300], ptr[300], kb[200];
    if (!gir_json_is(attrs, GIR_JSON_OBJECT)) {
        describe(attrs, what, sizeof what);
        snprintf(msg, sizeof msg, "graph \"attrs\" must be an object, found %s", what);
        return fail_ptr(raw, err, attrs, GIR_E_SCHEMA, msg, "/attrs");
    }
    raw->n_gattrs = attrs->len;
    if (!(raw->gattrs = nn_arena_array(&raw->arena, attrs->len, sizeof *raw->gattrs)))
        return gir_nomem(err);
    for (size_t i = 0; i < attrs->len; i++) {
        const gir_json_member *m = &attrs->u.members[i];
        const gir_json *v = &m->value;
        ptr_key(kb, sizeof kb, m->key);
        snprintf(ptr, sizeof ptr, "/attrs/%s", kb);
        const char *type = gir_json_get_cstr(gir_json_at(v, 0));
        if (!gir_json_is(v, GIR_JSON_ARRAY) || v->len != 2 || !type) {
            describe(v, what, sizeof what);
            snprintf(msg, sizeof msg, "graph attribute \"%.100s\" must be [\"<type>\", value], found %s", m->key,
                     what);
            return fail_ptr(raw, err, v, GIR_E_SCHEMA, msg, ptr);
        }
        raw->gattrs[i].key = m->key;
        raw->gattrs[i].type = type;
        raw->gattrs[i].payload = gir_json_at(v, 1);
        raw->gattrs[i].where = v;
    }
    return GIR_OK;
}

static gir_status parse_row_ptr(nn_raw *raw, const gir_json *v, gir_error *err)
{
    char what[80], msg[300], ptr[64];
    TRY(want_array(raw, v, SIZE_MAX, "node_row_ptr", "integers", err));
    raw->has_row_ptr = true;
    raw->row_ptr_ok = v->len == raw->n_nodes + 1;
    if (!raw->row_ptr_ok)
        return GIR_OK;
    if (!(raw->row_ptr = nn_arena_array(&raw->arena, v->len, sizeof *raw->row_ptr)))
        return gir_nomem(err);
    for (size_t i = 0; i < v->len; i++) {
        const gir_json *e = gir_json_at(v, i);
        bool is_int = gir_json_get_i64(e, &raw->row_ptr[i]);
        if (is_int && raw->row_ptr[i] >= 0)
            continue;
        if (is_int) {
            snprintf(msg, sizeof msg, "\"node_row_ptr\" must hold offsets of 0 or more, found %lld",
                     (long long)raw->row_ptr[i]);
        } else {
            describe(e, what, sizeof what);
            snprintf(msg, sizeof msg, "\"node_row_ptr\" must hold integers, found %s", what);
        }
        snprintf(ptr, sizeof ptr, "/node_row_ptr/%zu", i);
        return fail_ptr(raw, err, e, GIR_E_SCHEMA, msg, ptr);
    }
    nn_raw_row_ptr_check(raw);
    return GIR_OK;
}

void nn_raw_row_ptr_check(nn_raw *raw)
{
    raw->row_ptr_ok = raw->row_ptr[0] == 0;
    for (size_t i = 1; raw->row_ptr_ok && i <= raw->n_nodes; i++)
        raw->row_ptr_ok = raw->row_ptr[i] >= raw->row_ptr[i - 1];
    if (raw->row_ptr_ok)
        for (size_t i = 0; i < raw->n_nodes; i++)
            raw->nodes[i].row_outputs = raw->row_ptr[i + 1] - raw->row_ptr[i];
}

/* Iterative depth-first post-order over inputs, starting from each node in
 * file order: a file that is already sorted keeps its order. */
static gir_status topo(nn_raw *raw, gir_error *err)
{
    size_t n = raw->n_nodes;
    raw->order = nn_arena_array(&raw->arena, n, sizeof *raw->order);
    unsigned char *mark = calloc(n ? n : 1, 1); /* 0 new, 1 on stack, 2 done */
    struct fr {
        size_t node, next;
    } *stack = malloc((n ? n : 1) * sizeof *stack);
    if (!raw->order || !mark || !stack) {
        free(mark);
        free(stack);
        return gir_nomem(err);
    }
    size_t k = 0;
    gir_status st = GIR_OK;
    for (size_t s = 0; s < n && !st; s++) {
        if (mark[s])
            continue;
        size_t sp = 0;
        stack[sp++] = (struct fr){ s, 0 };
        mark[s] = 1;
        while (sp) {
            struct fr *f = &stack[sp - 1];
            const nn_node *nd = &raw->nodes[f->node];
            if (f->next < nd->n_in) {
                uint32_t src = nd->in[f->next++].node;
                if (mark[src] == 1) {
                    char msg[300], ptr[64];
                    snprintf(msg, sizeof msg, "the graph has a cycle: node %zu ('%.100s') depends on itself through "
                             "node %u ('%.100s')", f->node, nd->name, src, raw->nodes[src].name);
                    snprintf(ptr, sizeof ptr, "/nodes/%zu/inputs/%zu", f->node, f->next - 1);
                    st = fail_ptr(raw, err, nd->json, GIR_E_CYCLE, msg, ptr);
                    gir_err_node(err, nd->name);
                    break;
                }
                if (mark[src] == 0) {
                    mark[src] = 1;
                    stack[sp++] = (struct fr){ src, 0 };
                }
                continue;
            }
            mark[f->node] = 2;
            raw->order[k++] = f->node;
            sp--;
        }
    }
    free(mark);
    free(stack);
    return st;
}

gir_status nn_raw_parse(const gir_json_doc *doc, nn_raw *raw, gir_error *err)
{
    memset(raw, 0, sizeof *raw);
    raw->doc = doc;
    const gir_json *root = gir_json_root(doc);
    char what[80], msg[300];
    if (!gir_json_is(root, GIR_JSON_OBJECT)) {
        describe(root, what, sizeof what);
        snprintf(msg, sizeof msg, "expected a graph object with nodes, arg_nodes and heads, found %s", what);
        return fail_ptr(raw, err, root, GIR_E_SCHEMA, msg, "");
    }
    const gir_json *nodes = NULL, *args = NULL, *heads = NULL, *rowp = NULL, *attrs = NULL;
    size_t heads_pos = 0, rowp_pos = 0;
    for (size_t i = 0; i < root->len; i++) {
        const gir_json_member *m = &root->u.members[i];
        nn_graph_key key = nn_graph_key_of(m->key, strlen(m->key));
        if (key == NN_GK_NODES)
            nodes = &m->value;
        else if (key == NN_GK_ARG_NODES)
            args = &m->value;
        else if (key == NN_GK_HEADS) {
            heads = &m->value;
            heads_pos = i;
        } else if (key == NN_GK_NODE_ROW_PTR) {
            rowp = &m->value;
            rowp_pos = i;
        } else if (key == NN_GK_ATTRS)
            attrs = &m->value;
        else {
            char kb[200], ptr[220];
            ptr_key(kb, sizeof kb, m->key);
            snprintf(ptr, sizeof ptr, "/%s", kb);
            snprintf(msg, sizeof msg, "unknown key \"%.100s\" (a graph has %s)", m->key, key_list_top);
            return fail_ptr(raw, err, &m->value, GIR_E_SCHEMA, msg, ptr);
        }
    }
    static const char *const req[] = { "nodes", "arg_nodes", "heads" };
    const gir_json *got[] = { nodes, args, heads };
    for (size_t k = 0; k < 3; k++) {
        if (!got[k]) {
            snprintf(msg, sizeof msg, "the graph has no \"%s\"", req[k]);
            return fail_ptr(raw, err, root, GIR_E_SCHEMA, msg, "");
        }
    }
    raw->relay_layout = rowp && rowp_pos > heads_pos;
    TRY(want_array(raw, nodes, SIZE_MAX, "nodes", "nodes", err));
    if (nodes->len > NN_MAX_NODES)
        return fail_ptr(raw, err, nodes, GIR_E_LIMIT, "too many nodes", "/nodes");
    raw->n_nodes = nodes->len;
    raw->nodes = nn_arena_array(&raw->arena, raw->n_nodes, sizeof *raw->nodes);
    if (!raw->nodes)
        return gir_nomem(err);
    /* Entries are checked against the node count, so every node's header is
     * read before any entry's target is looked at. */
    for (size_t i = 0; i < raw->n_nodes; i++) {
        gir_status st = parse_node(raw, i, gir_json_at(nodes, i), err);
        if (st)
            return st;
    }
    TRY(want_array(raw, args, SIZE_MAX, "arg_nodes", "node ids", err));
    for (size_t i = 0; i < args->len; i++) {
        uint32_t id;
        char ptr[64];
        if (!get_u32(gir_json_at(args, i), &id) || id >= raw->n_nodes || !raw->nodes[id].var)
            snprintf(ptr, sizeof ptr, "/arg_nodes/%zu", i);
        if (!get_u32(gir_json_at(args, i), &id)) {
            describe(gir_json_at(args, i), what, sizeof what);
            snprintf(msg, sizeof msg, "arg_nodes must hold node ids, found %s", what);
            return fail_ptr(raw, err, gir_json_at(args, i), GIR_E_SCHEMA, msg, ptr);
        }
        if (id >= raw->n_nodes) {
            snprintf(msg, sizeof msg, "arg_nodes lists node %u, but the graph has %zu nodes", id, raw->n_nodes);
            return fail_ptr(raw, err, gir_json_at(args, i), GIR_E_REFERENCE, msg, ptr);
        }
        if (!raw->nodes[id].var) {
            snprintf(msg, sizeof msg, "arg_nodes lists node %u ('%.100s'), which is not a variable (op \"%.60s\")",
                     id, raw->nodes[id].name, raw->nodes[id].op);
            return fail_ptr(raw, err, gir_json_at(args, i), GIR_E_REFERENCE, msg, ptr);
        }
    }
    TRY(want_array(raw, heads, SIZE_MAX, "heads", "entries", err));
    raw->heads_json = heads;
    raw->n_heads = heads->len;
    TRY(parse_entries(raw, heads, SIZE_MAX, &raw->heads, err));
    if (rowp) {
        gir_status st = parse_row_ptr(raw, rowp, err);
        if (st)
            return st;
    }
    if (attrs) {
        gir_status st = nn_raw_gattrs(raw, attrs, err);
        if (st)
            return st;
    }
    return nn_raw_finish(raw, err);
}

gir_status nn_raw_finish(nn_raw *raw, gir_error *err)
{
    char msg[300];
    /* Variables have exactly one output. */
    for (size_t i = 0; i < raw->n_nodes; i++) {
        const nn_node *n = &raw->nodes[i];
        for (size_t j = 0; j < n->n_in; j++) {
            const nn_node *src = &raw->nodes[n->in[j].node];
            if (src->var && n->in[j].index != 0) {
                char ptr[64];
                snprintf(ptr, sizeof ptr, "/nodes/%zu/inputs/%zu", i, j);
                snprintf(msg, sizeof msg, "entry takes output %u of variable '%.100s', which has only output 0",
                         n->in[j].index, src->name);
                return fail_ptr(raw, err, gir_json_at(gir_json_get(n->json, "inputs"), j), GIR_E_REFERENCE, msg,
                                ptr);
            }
        }
    }
    for (size_t i = 0; i < raw->n_heads; i++) {
        const nn_node *src = &raw->nodes[raw->heads[i].node];
        if (src->var && raw->heads[i].index != 0) {
            char ptr[64];
            snprintf(ptr, sizeof ptr, "/heads/%zu", i);
            snprintf(msg, sizeof msg, "entry takes output %u of variable '%.100s', which has only output 0",
                     raw->heads[i].index, src->name);
            return fail_ptr(raw, err, gir_json_at(raw->heads_json, i), GIR_E_REFERENCE, msg, ptr);
        }
    }
    return topo(raw, err);
}

void nn_raw_free(nn_raw *raw)
{
    gir_arena_free(&raw->arena);
    free(raw->nodes_heap);
    memset(raw, 0, sizeof *raw);
}

const nn_gattr *nn_raw_gattr(const nn_raw *raw, const char *key)
{
    for (size_t i = 0; i < raw->n_gattrs; i++)
        if (strcmp(raw->gattrs[i].key, key) == 0)
            return &raw->gattrs[i];
    return NULL;
}

const char *nn_node_attr(const nn_node *n, const char *key)
{
    for (size_t i = 0; i < n->n_attrs; i++)
        if (strcmp(n->attrs[i].key, key) == 0)
            return n->attrs[i].value;
    return NULL;
}

const char *const *nn_meta_pairs(const gir_attrs *meta, const char *list_key, size_t *n)
{
    const gir_attr *a = gir_attrs_find(meta, list_key);
    if (!a || a->type != GIR_ATTR_STRINGS || a->u.strs.n % 2) {
        *n = 0;
        return NULL;
    }
    *n = a->u.strs.n;
    return a->u.strs.v;
}

const char *nn_meta_attr(const gir_attrs *meta, const char *list_key, const char *key)
{
    size_t n;
    const char *const *p = nn_meta_pairs(meta, list_key, &n);
    for (size_t i = 0; i + 1 < n; i += 2)
        if (strcmp(p[i], key) == 0)
            return p[i + 1];
    return NULL;
}
