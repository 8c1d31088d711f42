/* The legalization driver (see legalize.h). */
#include "legalize.h"

#include <stdlib.h>
#include <string.h>

void gir_plan_free(gir_plan *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->n_nodes; i++)
        free(p->why[i]);
    free(p->why);
    memset(p, 0, sizeof *p);
}

void gir_legal_report_free(gir_legal_report *r)
{
    if (!r)
        return;
    free(r->applied);
    free(r->tried);
    memset(r, 0, sizeof *r);
}

const gir_pattern *gir_pattern_find(const char *name)
{
    for (size_t i = 0; gir_pattern_at(i); i++)
        if (strcmp(gir_pattern_at(i)->name, name) == 0)
            return gir_pattern_at(i);
    return NULL;
}

gir_status gir_pattern_apply(gir_graph *g, const gir_pattern *p, int32_t node, gir_error *err)
{
    gir_edit *e;
    TRY(gir_edit_begin(g, &e, err));
    gir_rw rw;
    gir_edit_rewrite(e, node, &rw);
    gir_status st = p->apply(&rw, g->nodes[node], err);
    if (st) {
        gir_edit_free(e);
        return st;
    }
    return gir_edit_commit(e, err);
}

typedef struct legal {
    gir_plan_fn plan;
    void *ctx;
    size_t n_pat;
    gir_buf tried;        /* what did not help, per op (first time only) */
    bool *tried_op;       /* per op: already said */
} legal;

static size_t total(const gir_plan *p) { return p->n_bad + p->n_other; }

static const char *why_of(const gir_plan *p, const gir_graph *g, const char *name)
{
    int32_t i = gir_graph_node_index(g, name);
    return i >= 0 && (size_t)i < p->n_nodes ? p->why[i] : NULL;
}

static void remember(legal *L, gir_op op, const gir_pattern *pat, const char *left)
{
    if (L->tried_op[op])
        return;
    L->tried_op[op] = true;
    gir_buf_printf(&L->tried, "%s%s: %s (%s)", L->tried.len ? "; " : "", gir_op_name(op), pat->name, left);
}

static bool try_node(legal *L, gir_graph **gp, gir_plan *P, const char *name, int depth, const bool *used,
                     size_t *counts, gir_error *err);

/* The refused nodes of trial that the rewrite made (names not in before),
 * legalized in turn. */
static void chase(legal *L, const gir_graph *before, gir_graph **trial, gir_plan *Pt, int depth, const bool *used,
                  size_t *counts, gir_error *err)
{
    size_t n = (*trial)->n_nodes;
    char **names = calloc(n ? n : 1, sizeof *names);
    if (!names)
        return;
    size_t k = 0;
    for (size_t i = 0; i < n && i < Pt->n_nodes; i++)
        if (Pt->why[i] && gir_graph_node_index(before, (*trial)->nodes[i]->name) < 0)
            names[k++] = gir_strdupf("%s", (*trial)->nodes[i]->name);
    for (size_t i = 0; i < k; i++) {
        if (names[i] && why_of(Pt, *trial, names[i]))
            try_node(L, trial, Pt, names[i], depth + 1, used, counts, err);
        free(names[i]);
    }
    free(names);
}

/* Tries the patterns for node `name` of *gp (refused in *P); on success *gp
 * and *P are the rewritten graph and its plan, and counts has the patterns
 * used added. */
static bool try_node(legal *L, gir_graph **gp, gir_plan *P, const char *name, int depth, const bool *used,
                     size_t *counts, gir_error *err)
{
    if (depth >= GIR_LEGAL_DEPTH)
        return false;
    int32_t idx = gir_graph_node_index(*gp, name);
    if (idx < 0)
        return false;
    gir_op op = (*gp)->nodes[idx]->op;
    if (op == GIR_OP_OPAQUE)
        return false;
    bool *used2 = malloc(L->n_pat * sizeof *used2);
    size_t *cnt = malloc(L->n_pat * sizeof *cnt);
    if (!used2 || !cnt) {
        free(used2);
        free(cnt);
        return false;
    }
    /* every pattern for the op is tried; the one leaving the fewest
     * refusals (the first of equals) wins.  Taking the first that helps
     * would let a pattern that helps a little (folding a constant operand
     * into a constant output the target refuses too) hide one that helps
     * fully (a form the target writes). */
    gir_graph *best = NULL;
    gir_plan Pbest = { 0 };
    size_t *best_cnt = calloc(L->n_pat, sizeof *best_cnt);
    if (!best_cnt) {
        free(used2);
        free(cnt);
        return false;
    }
    for (size_t pi = 0; pi < L->n_pat; pi++) {
        const gir_pattern *pat = gir_pattern_at(pi);
        if (used[pi] || (pat->op != op && pat->op != GIR_OP_COUNT_))
            continue;
        gir_graph *trial = NULL;
        gir_error e2 = GIR_ERROR_INIT;
        gir_plan Pt = { 0 };
        gir_status st = gir_graph_clone(*gp, &trial, &e2);
        if (!st)
            st = gir_pattern_apply(trial, pat, idx, &e2);
        if (!st)
            st = L->plan(L->ctx, trial, &Pt, &e2);
        if (st) {
            /* does not apply here; a pattern made for this op says why */
            if (st != GIR_E_UNSUPPORTED && pat->op == op)
                remember(L, op, pat, e2.message ? e2.message : gir_status_name(st));
            gir_error_clear(&e2);
            gir_graph_free(trial);
            gir_plan_free(&Pt);
            continue;
        }
        memcpy(used2, used, L->n_pat * sizeof *used2);
        used2[pi] = true;
        memset(cnt, 0, L->n_pat * sizeof *cnt);
        cnt[pi] = 1;
        chase(L, *gp, &trial, &Pt, depth, used2, cnt, err);
        if (total(&Pt) < total(P) && (!best || total(&Pt) < total(&Pbest))) {
            gir_graph_free(best);
            gir_plan_free(&Pbest);
            best = trial;
            Pbest = Pt;
            memcpy(best_cnt, cnt, L->n_pat * sizeof *cnt);
        } else {
            if (pat->op == op && total(&Pt) >= total(P)) {
                const char *left = NULL;
                for (size_t i = 0; i < Pt.n_nodes && !left; i++)
                    if (Pt.why[i] && gir_graph_node_index(*gp, trial->nodes[i]->name) < 0)
                        left = Pt.why[i];
                remember(L, op, pat, left ? left : "the target refuses as much as before");
            }
            gir_graph_free(trial);
            gir_plan_free(&Pt);
        }
        if (best && total(&Pbest) == 0)
            break; /* nothing left to do better */
    }
    bool done = best != NULL;
    if (done) {
        gir_graph_free(*gp);
        *gp = best;
        gir_plan_free(P);
        *P = Pbest;
        for (size_t j = 0; j < L->n_pat; j++)
            counts[j] += best_cnt[j];
    }
    free(best_cnt);
    free(used2);
    free(cnt);
    return done;
}

gir_status gir_legalize(gir_graph **g, gir_plan_fn plan, void *ctx, gir_legal_report *rep, gir_error *err)
{
    legal L = { .plan = plan, .ctx = ctx, .n_pat = gir_pattern_count(), .tried = GIR_BUF_INIT };
    rep->applied = calloc(L.n_pat ? L.n_pat : 1, sizeof *rep->applied);
    bool *used = calloc(L.n_pat ? L.n_pat : 1, sizeof *used);
    L.tried_op = calloc(GIR_OP_COUNT_ + 1, sizeof *L.tried_op);
    gir_plan P = { 0 };
    gir_status st = GIR_OK;
    if (!rep->applied || !used || !L.tried_op)
        st = gir_nomem(err);
    if (!st)
        st = plan(ctx, *g, &P, err);
    /* rounds: a rewrite may make another node expressible or not */
    for (int round = 0; !st && round < GIR_LEGAL_DEPTH && P.n_bad; round++) {
        size_t n = (*g)->n_nodes, k = 0;
        char **names = calloc(n ? n : 1, sizeof *names);
        if (!names) {
            st = gir_nomem(err);
            break;
        }
        for (size_t i = 0; i < n && i < P.n_nodes; i++)
            if (P.why[i] && !(names[k++] = gir_strdupf("%s", (*g)->nodes[i]->name)))
                st = gir_nomem(err);
        bool changed = false;
        for (size_t i = 0; !st && i < k; i++)
            if (why_of(&P, *g, names[i]) && try_node(&L, g, &P, names[i], 0, used, rep->applied, err))
                changed = true;
        for (size_t i = 0; i < k; i++)
            free(names[i]);
        free(names);
        if (!changed)
            break;
    }
    gir_plan_free(&P);
    free(used);
    free(L.tried_op);
    if (L.tried.len && !st)
        rep->tried = gir_buf_take(&L.tried);
    gir_buf_free(&L.tried);
    return st;
}
