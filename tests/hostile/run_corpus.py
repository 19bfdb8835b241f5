#!/usr/bin/python3
"""Compiles every model of a hostile corpus (make_cases.py) and checks the
outcome against its manifest: a documented error (exit 1 or 2, a message
naming the problem; the expected text where the manifest gives one), or,
for cases marked ok, an artifact whose header compiles as C and holds the
exact names, and whose JSON parses. Never a signal, an internal error, a
time-out or runaway memory. Prints 'N passed, N failed'.

    tests/hostile/run_corpus.py build/tinyrt-compile CORPUS_DIR [-j 2] [--address-limit-gib 8]
"""
import argparse, concurrent.futures as cf, json, os, resource, subprocess, sys, tempfile, time

import onnx


ADDRESS_LIMIT = 8 << 30


def limit_memory():
    if ADDRESS_LIMIT:
        resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_LIMIT, ADDRESS_LIMIT))


def check_ok(name, path, out, abi):
    files = os.listdir(out)
    hdr = [f for f in files if f.endswith(".h")]
    js = [f for f in files if f.endswith(".json")]
    if len(hdr) != 1 or len(js) != 1:
        return f"artifact files missing: {files}"
    with open(os.path.join(out, js[0]), "rb") as f:
        try:
            j = json.loads(f.read().decode("utf-8"))
        except Exception as e:
            return f"JSON does not parse: {e}"
    m = onnx.load(path, load_external_data=False)
    base = hdr[0][:-2].upper()
    # The header's name macros must hold the ONNX names byte for byte (names
    # that are not UTF-8 come back from protobuf as bytes). Inputs that have
    # an initializer are constants, not inputs of the artifact.
    src = f'#include <string.h>\n#include "{hdr[0]}"\nint main(void) {{\n'
    inits = {t.name for t in m.graph.initializer}
    inputs = [vi for vi in m.graph.input if vi.name not in inits]
    want = [(f"{base}_INPUT_{i}_NAME", vi.name) for i, vi in enumerate(inputs)] + \
           [(f"{base}_OUTPUT_{i}_NAME", vi.name) for i, vi in enumerate(m.graph.output)]
    for k, (macro, val) in enumerate(want):
        b = val if isinstance(val, bytes) else val.encode("utf-8")
        arr = ",".join(str(c) for c in b) or "0"
        src += f"  {{ static const unsigned char w[] = {{{arr}}}; if (sizeof({macro}) - 1 != {len(b)} || memcmp({macro}, w, {len(b)})) return {k + 1}; }}\n"
    src += "  return 0;\n}\n"
    c = os.path.join(out, "check.c")
    with open(c, "w") as f:
        f.write(src)
    r = subprocess.run(["cc", "-std=c99", "-Wall", "-Werror", "-I", abi, "-I", out, c, "-o", os.path.join(out, "check")],
                       capture_output=True, text=True)
    if r.returncode:
        return "header does not compile: " + r.stderr[:400]
    r = subprocess.run([os.path.join(out, "check")])
    if r.returncode:
        return f"header name macro {want[r.returncode - 1][0]} differs from the model's name"
    return None


def run_case(compiler, corpus, abi, name, expect, timeout):
    t0 = time.monotonic()
    name, problem = check_case(compiler, corpus, abi, name, expect, timeout)
    return name, problem, time.monotonic() - t0


def check_case(compiler, corpus, abi, name, expect, timeout):
    path = os.path.join(corpus, name + ".onnx")
    with tempfile.TemporaryDirectory(prefix="tinyrt-corpus-") as out:
        try:
            r = subprocess.run([compiler, path, "-o", out, "--target", "x86-64-avx2"], capture_output=True,
                               timeout=timeout, preexec_fn=limit_memory)
        except subprocess.TimeoutExpired:
            return name, f"no answer within {timeout} s"
        err = r.stderr.decode("utf-8", "replace")
        if r.returncode < 0 or r.returncode >= 3 or "internal error" in err:
            return name, f"exit {r.returncode}: {err.strip()[-300:]}"
        if expect == "ok":
            if r.returncode != 0:
                return name, f"should compile, got: {err.strip()[-300:]}"
            return name, check_ok(name, path, out, abi)
        if r.returncode == 0:
            return name, "compiled, expected an error"
        if "error:" not in err:
            return name, f"no error message: {err[-300:]}"
        if expect and expect not in err:
            return name, f"expected '{expect}' in: {err.strip()[-300:]}"
        return name, None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("compiler")
    ap.add_argument("corpus")
    ap.add_argument("-j", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=120)
    ap.add_argument("--abi", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "abi"))
    # 0: no limit, for a compiler built with AddressSanitizer (its shadow
    # memory reserves terabytes of address space; tests/fuzz/).
    ap.add_argument("--address-limit-gib", type=int, default=8)
    a = ap.parse_args()
    global ADDRESS_LIMIT
    ADDRESS_LIMIT = a.address_limit_gib << 30
    cases = []
    with open(os.path.join(a.corpus, "manifest.tsv")) as f:
        for line in f:
            name, expect = line.rstrip("\n").split("\t")
            cases.append((name, expect))
    failed = 0
    times = []
    with cf.ThreadPoolExecutor(a.j) as ex:
        for name, problem, secs in ex.map(lambda c: run_case(a.compiler, a.corpus, a.abi, c[0], c[1], a.timeout), cases):
            if problem:
                failed += 1
                print(f"FAIL {name}: {problem}", flush=True)
            else:
                print(f"PASS {name}", flush=True)
            times.append((secs, name))
    times.sort(reverse=True)
    print("slowest: " + ", ".join(f"{n} {t:.1f} s" for t, n in times[:8]))
    print(f"{len(cases) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
