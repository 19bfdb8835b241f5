#!/usr/bin/python3
"""Compiles every model of a hostile corpus (make_cases.py) and checks the
outcome against its manifest: a documented error (exit 1 or 2, a message
naming the problem; the expected text where the manifest gives one), or,
for cases marked ok, an artifact whose header compiles as C and holds the
exact names, and whose JSON parses. Never a signal, an internal error, a
time-out or runaway memory. Prints 'N passed, N failed'.

    tests/hostile/run_corpus.py build/tinyrt-compile CORPUS_DIR [-j 2] [--address-limit-gib 8]
"""
import argparse, concurrent.futures as cf, json, os, resource, subprocess, sys, tempfile, threading, time

import onnx


ADDRESS_LIMIT = 8 << 30
BOUNDS = False


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


# docs/SECURITY.md: a small hostile file is refused (or compiled) within
# 10 s and 2 GiB. The time bound allows for the other ctest job sharing the
# two cores; memory is the compiler's own peak RSS (not the linker's).
BOUND_SECONDS = 20
BOUND_RSS = 2 << 30


def run_case(compiler, corpus, abi, name, expect, bounded, timeout):
    t0 = time.monotonic()
    name, problem, rss = check_case(compiler, corpus, abi, name, expect, bounded, timeout)
    return name, problem, time.monotonic() - t0, rss


def compile_limited(cmd, timeout):
    """Runs the compiler; returns (exit code or None on time-out, stderr,
    its peak RSS in bytes, seconds)."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=limit_memory)
    timed_out = threading.Event()
    def kill():
        timed_out.set()
        p.kill()
    timer = threading.Timer(timeout, kill)
    timer.start()
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    timer.cancel()
    p.returncode = os.waitstatus_to_exitcode(status)
    p.stderr.close()
    return (None if timed_out.is_set() else p.returncode), err, usage.ru_maxrss * 1024, time.monotonic() - t0


def check_case(compiler, corpus, abi, name, expect, bounded, timeout):
    path = os.path.join(corpus, name + ".onnx")
    with tempfile.TemporaryDirectory(prefix="tinyrt-corpus-") as out:
        code, err, rss, secs = compile_limited([compiler, path, "-o", out, "--target", "x86-64-avx2"], timeout)
        if code is None:
            return name, f"no answer within {timeout} s", rss
        r = subprocess.CompletedProcess([], code)
        err = err.decode("utf-8", "replace")
        if BOUNDS and bounded and (secs > BOUND_SECONDS or rss > BOUND_RSS):
            return name, f"took {secs:.1f} s and {rss >> 20} MiB, past the bounds ({BOUND_SECONDS} s, {BOUND_RSS >> 20} MiB)", rss
        problem = judge(name, path, out, abi, expect, r, err)
        return name, problem, rss


def judge(name, path, out, abi, expect, r, err):
    """What is wrong with the outcome, or None."""
    if r.returncode < 0 or r.returncode >= 3 or "internal error" in err:
        return f"exit {r.returncode}: {err.strip()[-300:]}"
    if expect == "ok":
        if r.returncode != 0:
            return f"should compile, got: {err.strip()[-300:]}"
        return check_ok(name, path, out, abi)
    if r.returncode == 0:
        return "compiled, expected an error"
    if "error:" not in err:
        return f"no error message: {err[-300:]}"
    if expect and expect not in err:
        return f"expected '{expect}' in: {err.strip()[-300:]}"
    return None


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
    # Hold the cases marked bounded to 20 s and 2 GiB (not under a sanitizer).
    ap.add_argument("--bounds", action="store_true")
    a = ap.parse_args()
    global ADDRESS_LIMIT, BOUNDS
    ADDRESS_LIMIT = a.address_limit_gib << 30
    BOUNDS = a.bounds
    cases = []
    with open(os.path.join(a.corpus, "manifest.tsv")) as f:
        for line in f:
            name, expect, bound = line.rstrip("\n").split("\t")
            cases.append((name, expect, bound == "bounded"))
    failed = 0
    times = []
    with cf.ThreadPoolExecutor(a.j) as ex:
        for name, problem, secs, rss in ex.map(lambda c: run_case(a.compiler, a.corpus, a.abi, c[0], c[1], c[2], a.timeout), cases):
            if problem:
                failed += 1
                print(f"FAIL {name}: {problem}", flush=True)
            else:
                print(f"PASS {name}", flush=True)
            times.append((secs, name, rss))
    times.sort(reverse=True)
    print("slowest: " + ", ".join(f"{n} {t:.1f} s" for t, n, _ in times[:8]))
    print("largest: " + ", ".join(f"{n} {r >> 20} MiB" for _, n, r in sorted(times, key=lambda x: -x[2])[:8]))
    print(f"{len(cases) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
