/* Loads a model, runs it on seeded inputs and prints its first output. */
#include <graphir/graphir.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    gir_error err = GIR_ERROR_INIT;
    gir_graph *g = NULL;
    gir_session *s = NULL;
    if (argc != 2) {
        fprintf(stderr, "usage: run_model MODEL\n");
        return 1;
    }
    /* any format; inputs left out are filled from seed 0 */
    if (gir_load(argv[1], NULL, NULL, &g, &err) != GIR_OK || gir_session_new(g, 1, &s, &err) != GIR_OK ||
        gir_session_feed(s, 0, NULL, NULL, 0, &err) != GIR_OK || gir_session_run(s, &err) != GIR_OK) {
        char *msg = gir_error_format(&err);
        fprintf(stderr, "%s\n", msg ? msg : gir_status_name(err.code));
        free(msg);
        int status = gir_status_exit_code(err.code);
        gir_error_clear(&err);
        gir_session_free(s);
        gir_graph_free(g);
        return status;
    }
    gir_tensor *y = gir_session_output(s, 0); /* owned by the session */
    const void *data;
    char shape[64];
    if (gir_tensor_load(y, &data, &err) == GIR_OK && gir_tensor_dtype(y) == GIR_DT_F32) {
        int64_t n = gir_shape_numel(gir_tensor_shape(y));
        printf("%s %s:", gir_value_name(gir_graph_output(g, 0)),
               gir_shape_str(gir_tensor_shape(y), shape, sizeof shape));
        for (int64_t i = 0; i < n && i < 8; i++)
            printf(" %.6g", ((const float *)data)[i]);
        printf("%s\n", n > 8 ? " ..." : "");
    }
    gir_session_free(s);
    gir_graph_free(g);
    return 0;
}
