#!/usr/bin/env python3
"""Section-3 man pages for every GIR_API function, from the public headers.

Each page takes the function's prototype and the comment above it in its
header (the comment over a group of declarations serves each of them), and
says who owns what the function returns (OWNERSHIP below, or a rule for its
return type).  A GIR_API function without a comment, or returning a pointer
whose owner is not said here, stops the build: every public function is
documented.

Usage: apiman.py --list HEADER...        the function names, one a line
       apiman.py OUTDIR HEADER...        writes OUTDIR/NAME.3 for each
       apiman.py --page TEMPLATE OUT EXAMPLE HEADER...   libgraphir(3): @INDEX@ becomes the
                 list of every page, @EXAMPLE@ the program EXAMPLE
"""
import os
import re
import sys

DATE = "2026-11-26"
VERSION = "libgraphir 0.1.0"

GRAPH = "owned by the graph: valid until gir_graph_free(3); do not free it"
GRAPH_STR = "a string owned by the graph: valid until gir_graph_free(3); do not free it"
STATIC = "a static string of the library: never free it"
# Who owns what a pointer-returning function returns.
OWNERSHIP = {
    "gir_graph_find_node_edit": GRAPH + " (it may be edited with gir_node_set_int(3) and the other setters)",
    "gir_graph_name": GRAPH_STR,
    "gir_graph_node": GRAPH,
    "gir_graph_value": GRAPH,
    "gir_graph_find_value": GRAPH + "; NULL when there is no such value",
    "gir_graph_input": GRAPH,
    "gir_graph_output": GRAPH,
    "gir_graph_meta": GRAPH,
    "gir_node_name": GRAPH_STR,
    "gir_node_op": GRAPH_STR + " (or static for canonical operators)",
    "gir_node_opaque_format": GRAPH_STR,
    "gir_node_input": GRAPH,
    "gir_node_output": GRAPH,
    "gir_node_attr": GRAPH,
    "gir_node_find_attr": GRAPH + "; NULL when the node has no such attribute",
    "gir_value_name": GRAPH_STR,
    "gir_value_shape": GRAPH,
    "gir_value_dim_name": GRAPH_STR,
    "gir_value_tensor": "a borrowed reference: the graph holds it until gir_graph_free(3); "
                        "call gir_tensor_ref(3) to keep the tensor longer, and gir_tensor_unref(3) then",
    "gir_attr_name": GRAPH_STR,
    "gir_attr_string": GRAPH_STR,
    "gir_attr_ints": GRAPH,
    "gir_attr_floats": GRAPH,
    "gir_attr_strings": GRAPH,
    "gir_attr_tensor": "a borrowed reference held by the attribute's graph; gir_tensor_ref(3) to keep it",
    "gir_tensor_shape": "owned by the tensor: valid while a reference to it is held",
    "gir_tensor_ref": "the same tensor, with one more reference that the caller drops with gir_tensor_unref(3)",
    "gir_version": STATIC,
    "gir_options_new": "a new object the caller frees with gir_options_free(3); NULL when out of memory",
    "gir_options_dup": "a new object the caller frees with gir_options_free(3); NULL when out of memory",
    "gir_options_get": "owned by the options: valid until the key is set again or gir_options_free(3)",
    "gir_options_key": "owned by the options: valid until gir_options_free(3)",
    "gir_format_name": STATIC,
    "gir_format_description": STATIC,
    "gir_format_for_extension": STATIC + "; NULL when no format takes the extension",
    "gir_session_input": "owned by the session's graph: valid until gir_graph_free(3)",
    "gir_session_output": "owned by the session: valid until the next gir_session_run(3) or "
                          "gir_session_free(3); gir_tensor_ref(3) to keep it",
    "gir_session_value": "a new reference the caller drops with gir_tensor_unref(3); NULL when there is none",
    "gir_session_warning": "owned by the session: valid until the next run",
    "gir_status_name": STATIC,
    "gir_status_describe": STATIC,
    "gir_error_format": "malloc'd: the caller frees it with free(3); NULL only when memory is exhausted",
    "gir_dtype_name": STATIC,
    "gir_shape_str": "the caller's buffer out, filled and returned",
}

DECL = re.compile(r"GIR_API\s+(.+?)\b(gir_\w+)\s*\((.*?)\)\s*;", re.S)


def parse(path):
    """(name, return type, params, comment, header) for each GIR_API function."""
    text = open(path, encoding="utf-8").read()
    out = []
    pos = 0
    last_comment, last_comment_end = None, -1
    for m in re.finditer(r"/\*(.*?)\*/|GIR_API\s+(.+?)\b(gir_\w+)\s*\((.*?)\)\s*;", text, re.S):
        if m.group(1) is not None:
            last_comment, last_comment_end = m.group(1), m.end()
            continue
        if "#define" in text[text.rfind("\n", 0, m.start()):m.start()]:
            continue
        between = text[last_comment_end:m.start()] if last_comment_end >= 0 else None
        # the comment above, directly or over a group of declarations (no
        # blank line and nothing but declarations between)
        comment = None
        if between is not None and "\n\n" not in between.replace("\r", "") and \
                all(l.strip().startswith("GIR_API") or l.strip() == "" or not l.strip().startswith(("#", "typedef", "}", "struct"))
                    for l in between.splitlines()):
            comment = last_comment
        # a comment at the end of the declaration's line
        rest = text[m.end():text.find("\n", m.end())]
        tail = re.match(r"\s*/\*(.*?)\*/", rest)
        if tail:
            comment = (comment + "\n" if comment else "") + tail.group(1)
        ret = " ".join(m.group(2).split())
        params = " ".join(m.group(4).split())
        out.append((m.group(3), ret, params, comment, os.path.basename(path)))
        pos = m.end()
    return out


def clean(comment):
    lines = []
    for l in comment.splitlines():
        l = l.strip()
        if l.startswith("*"):
            l = l[1:].strip() if not l.startswith("*/") else ""
        lines.append(l)
    return "\n".join(lines).strip()


def troff(s):
    s = s.replace("\\", "\\e").replace("-", "\\-")
    return "\n".join(("\\&" + l) if l.startswith((".", "'")) else l for l in s.split("\n"))


def summary(desc):
    """The first sentence of a description, on one line."""
    one = " ".join(desc.split())
    m = re.search(r"[.;:](\s|$)", one)
    return (one[:m.start()] if m else one)[:100]


def ownership(name, ret):
    r = ret.replace(" ", "")
    if name in OWNERSHIP:
        return OWNERSHIP[name]
    if r == "gir_status":
        return ("nothing is returned but the status: GIR_OK, or the code of the failure, which err (when not "
                "NULL) describes; the caller releases err with gir_error_clear(3).  What the function hands out "
                "through pointer arguments is said in DESCRIPTION")
    if r == "void":
        return "nothing is returned"
    if "*" not in r:
        return "a plain value: nothing to free"
    return None


def page(fn, ret, params, comment, header):
    own = ownership(fn, ret)
    desc = clean(comment)
    sig = "%s%s%s(%s);" % (ret, "" if ret.endswith("*") else " ", fn, params)
    return "\n".join([
        '.TH %s 3 "%s" "%s" "Library Functions"' % (fn.upper(), DATE, VERSION),
        ".SH NAME",
        "%s \\- %s" % (fn, troff(summary(desc) or fn)),
        ".SH SYNOPSIS",
        ".nf",
        ".B #include <graphir/graphir.h>",
        ".PP",
        troff(sig),
        ".fi",
        ".PP",
        "Link with \\fI$(pkg\\-config \\-\\-libs libgraphir)\\fP.",
        ".SH DESCRIPTION",
        ".nf",
        troff(desc),
        ".fi",
        ".PP",
        "Declared in \\fIgraphir/%s\\fP." % header,
        ".SH OWNERSHIP",
        troff(own[0].upper() + own[1:]) + ".",
        ".SH SEE ALSO",
        ".BR libgraphir (3)",
        "",
    ])


def main():
    args = sys.argv[1:]
    mode = args.pop(0)
    if mode == "--page":
        template, outpath, example = args[:3]
        args = args[3:]
    funcs = []
    for h in args:
        funcs += parse(h)
    problems = []
    for fn, ret, params, comment, header in funcs:
        if not comment or not clean(comment):
            problems.append("%s (%s): no comment says what it does" % (fn, header))
        elif ownership(fn, ret) is None:
            problems.append("%s (%s): returns %s; say who owns it in man/apiman.py" % (fn, header, ret))
    if problems:
        sys.stderr.write("apiman.py: undocumented public functions:\n  " + "\n  ".join(problems) + "\n")
        sys.exit(1)
    if mode == "--list":
        for f in funcs:
            print(f[0])
    elif mode == "--page":
        index = ",\n".join(".BR %s (3)" % f[0] for f in sorted(funcs))
        code = "\n".join(troff(l) for l in open(example, encoding="utf-8").read().rstrip("\n").split("\n"))
        text = open(template, encoding="utf-8").read().replace("@INDEX@", index).replace("@EXAMPLE@", code)
        with open(outpath, "w", encoding="utf-8") as out:
            out.write(text)
    else:
        os.makedirs(mode, exist_ok=True)
        for f in funcs:
            with open(os.path.join(mode, f[0] + ".3"), "w", encoding="utf-8") as out:
                out.write(page(*f))


if __name__ == "__main__":
    main()
