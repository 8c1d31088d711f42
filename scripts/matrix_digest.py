#!/usr/bin/env python3
"""Fingerprint of every output of the conversion matrix, to prove that a
change (a refactoring, say) does not alter a byte of what graphconv writes.

Converts every model of each corpus to every target with `graphconv batch`
(the same conversions as ../shared/tools/matrix.py, without --check, which
does not change what is written), then records, per conversion, the outcome
(status, exit code, error code, message, rewrite notes) and the SHA-256 of
every file written.  Paths are recorded relative to the corpus and to the
output folder, so two runs into different folders compare equal.

Usage:
  scripts/matrix_digest.py GRAPHCONV MANIFEST CORPUS... [--targets a,b]
      write the manifest (one JSON object per line, sorted)
  scripts/matrix_digest.py GRAPHCONV MANIFEST CORPUS... --compare
      convert again and compare with MANIFEST; exit 1 and list every
      difference if anything changed, exit 0 if all is byte-identical

e.g. (before and after a change, each build in its own folder)
  scripts/matrix_digest.py build-rel/tools/graphconv /tmp/before.jsonl \\
      ../shared/realworld ../shared/models /work/tv
  scripts/matrix_digest.py build-rel/tools/graphconv /tmp/before.jsonl \\
      ../shared/realworld ../shared/models /work/tv --compare
"""
import hashlib, json, os, shutil, subprocess, sys, tempfile

TARGETS = ["nnabla", "onnx", "nnvm", "mxnet", "relayviz", "lightnet"]
# Report fields that describe the outcome; timings and memory are left out.
KEPT = ("from", "to", "status", "code", "exit", "message", "nodes",
        "opaque_nodes", "ops", "parameters", "parameter_elements",
        "parameter_bytes", "notes")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def relabel(value, subs):
    """Replaces run-specific folders inside reported strings."""
    if isinstance(value, str):
        for old, new in subs:
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [relabel(v, subs) for v in value]
    if isinstance(value, dict):
        return {k: relabel(v, subs) for k, v in value.items()}
    return value


def run(gc, corpora, targets, work):
    rows = []
    for t in targets:
        for k, corpus in enumerate(corpora):
            outdir = os.path.join(work, f"{k}-{t}")
            rep = os.path.join(work, f"{k}-{t}.jsonl")
            proc = subprocess.run([gc, "batch", corpus, "--to", t, "-o", outdir,
                                   "--report", rep, "-q", "-j", "2", "--force"],
                                  capture_output=True, text=True)
            if not os.path.exists(rep):
                sys.exit(f"matrix_digest: graphconv batch wrote no report for {corpus} -> {t} "
                         f"(exit {proc.returncode}): {proc.stderr.strip()[:500]}")
            croot = os.path.normpath(corpus)
            subs = [(os.path.abspath(outdir), "OUT"), (outdir, "OUT"),
                    (os.path.abspath(croot), f"CORPUS{k}"), (croot, f"CORPUS{k}")]
            for line in open(rep):
                r = json.loads(line)
                row = {"key": f"{t}:{k}:{os.path.relpath(os.path.normpath(r['input']), croot)}"}
                row.update({f: relabel(r[f], subs) for f in KEPT if f in r})
                rows.append(row)
            files = []
            for d, _, names in os.walk(outdir):
                for n in names:
                    p = os.path.join(d, n)
                    files.append((os.path.relpath(p, outdir), sha256(p)))
            rows.append({"key": f"{t}:{k}:#files", "files": sorted(files)})
    rows.sort(key=lambda r: r["key"])
    return rows


def main():
    args = sys.argv[1:]
    compare = "--compare" in args
    if compare:
        args.remove("--compare")
    targets = TARGETS
    if "--targets" in args:
        i = args.index("--targets")
        targets = args[i + 1].split(",")
        del args[i:i + 2]
    if len(args) < 3:
        sys.exit(__doc__)
    gc, manifest, corpora = args[0], args[1], args[2:]
    work = tempfile.mkdtemp(prefix="gc-digest-")
    try:
        rows = run(gc, corpora, targets, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if not compare:
        with open(manifest, "w") as f:
            for r in rows:
                f.write(json.dumps(r, sort_keys=True) + "\n")
        nfiles = sum(len(r["files"]) for r in rows if "files" in r)
        print(f"{len(rows) - len(targets) * len(corpora)} conversions, {nfiles} files -> {manifest}")
        return 0
    old = {}
    for line in open(manifest):
        r = json.loads(line)
        old[r["key"]] = r
    new = {r["key"]: json.loads(json.dumps(r)) for r in rows}
    diffs = 0
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        diffs += 1
        if a is None or b is None:
            print(f"{key}: only {'after' if a is None else 'before'}")
        elif "files" in a:
            fa, fb = dict(map(tuple, a["files"])), dict(map(tuple, b["files"]))
            for f in sorted(set(fa) | set(fb)):
                if fa.get(f) != fb.get(f):
                    print(f"{key}: {f}: {fa.get(f, 'absent')[:12]} -> {fb.get(f, 'absent')[:12]}")
        else:
            for f in sorted(set(a) | set(b)):
                if a.get(f) != b.get(f):
                    print(f"{key}: {f}: {json.dumps(a.get(f))[:200]} -> {json.dumps(b.get(f))[:200]}")
    print(f"{len(new) - len(targets) * len(corpora)} conversions compared: "
          f"{'byte-identical' if not diffs else f'{diffs} differ'}")
    return 1 if diffs else 0


if __name__ == "__main__":
    sys.exit(main())
