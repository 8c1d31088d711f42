/* The RelayViz JSON format: registration, content probe and options (the
 * operator mapping table is in ops.c). */
#include "relayviz.h"

#include <string.h>

/* A RelayViz file says so in its root object; a node list with node_kind
 * keys is the next best sign (the root's keys may come after the nodes). */
static int probe(const unsigned char *head, size_t n, const char *path)
{
    (void)path;
    if (!head || n == 0)
        return 0;
    size_t i = 0;
    while (i < n && (head[i] == ' ' || head[i] == '\t' || head[i] == '\n' || head[i] == '\r'))
        i++;
    if (i == n || (head[i] != '{' && head[i] != '['))
        return 0;
    const char *h = (const char *)head;
    if (head[i] == '{' && memmem(h, n, "\"relayviz\"", 10) && memmem(h, n, "\"format\"", 8))
        return 95;
    /* A bare node list is no RelayViz document, but it is one's contents:
     * the reader explains what is missing. */
    if (memmem(h, n, "\"node_kind\"", 11))
        return head[i] == '{' ? 70 : 60;
    return 0;
}

static const char *const extensions[] = { ".relayviz.json", ".relayviz", NULL };

static const gir_option_doc read_options[] = {
    { NULL, NULL },
};

static const gir_option_doc write_options[] = {
    { "embed-weights", "1: weights inline as Const nodes (one file); default: Var params and a TVM .params file" },
    { "nonfinite", "error (default): refuse NaN and infinite constants; string: write them as \"NaN\", "
                   "\"Infinity\", \"-Infinity\"" },
    { NULL, NULL },
};

const gir_format gir_format_relayviz = GIR_FORMAT_PLUGIN(
    "relayviz",
    "RelayViz JSON: a Relay program as a node list (TVM's visualisation proposal), with a TVM "
    ".params companion or embedded Const weights",
    gir_relayviz);
