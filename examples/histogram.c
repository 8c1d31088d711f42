#include <graphir/graphir.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Opens a model in any format graphconv knows and prints its op histogram. */
int main(int argc, char **argv)
{
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g = NULL;
    if (argc != 2) {
        fprintf(stderr, "usage: histogram MODEL\n");
        return 1;
    }
    if (gir_load(argv[1], NULL, NULL, &g, &err) != GIR_OK) {
        char *msg = gir_error_format(&err);
        fprintf(stderr, "%s\n", msg ? msg : gir_status_name(err.code));
        free(msg);
        int status = gir_status_exit_code(err.code);
        gir_error_clear(&err);
        return status;
    }
    size_t n = gir_graph_node_count(g), distinct = 0;
    const char **ops = calloc(n + 1, sizeof *ops);
    size_t *counts = calloc(n + 1, sizeof *counts);
    for (size_t i = 0; i < n; i++) {
        const char *op = gir_node_op(gir_graph_node(g, i));
        size_t j = 0;
        while (j < distinct && strcmp(ops[j], op) != 0)
            j++;
        if (j == distinct)
            ops[distinct++] = op;
        counts[j]++;
    }
    for (size_t j = 0; j < distinct; j++)
        printf("%-20s %zu\n", ops[j], counts[j]);
    free(ops);
    free(counts);
    gir_graph_free(g);
    return 0;
}
