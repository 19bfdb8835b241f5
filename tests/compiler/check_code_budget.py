#!/usr/bin/python3
"""--max-code-bytes (issue 28): a budget between the smallest plan's code and
the default plan's is met by keeping Winograd layers direct (the JSON's
code_bytes within it, -v naming the layers), and a budget below the
smallest plan is refused, naming the smallest budget that fits; the same
as a ratio of the code with every Winograd layer direct (e.g. 1.2x).

  check_code_budget.py TINYRT_COMPILE MODEL TARGET OUT_DIR
"""
import json
import os
import re
import subprocess
import sys

OPEN = ["--max-weights-bytes", "5x", "--max-arena-bytes", "100000000"]  # room for every Winograd form


def compile_model(tool, model, target, out, *opts):
    r = subprocess.run([tool, model, "--target", target, "-o", out, "--name", "model", "-v"] + OPEN + list(opts),
                       capture_output=True, text=True)
    j = None
    if r.returncode == 0:
        with open(os.path.join(out, "model.json")) as f:
            j = json.load(f)
    return r, j


def main():
    tool, model, target, out = sys.argv[1:5]
    r, full = compile_model(tool, model, target, os.path.join(out, "full"))
    r_off, off = compile_model(tool, model, target, os.path.join(out, "off"), "--winograd", "off")
    assert full and off, r.stderr + r_off.stderr
    taken = sum(1 for t in full["memory_trades"] if t["kind"] == "winograd" and t["taken"] != "direct")
    assert taken >= 2, f"the model should take Winograd layers: {full['memory_trades']}"
    hi, lo = full["code_bytes"], off["code_bytes"]
    assert lo < hi, (lo, hi)
    budget = (hi + lo) // 2
    r, mid = compile_model(tool, model, target, os.path.join(out, "mid"), "--max-code-bytes", str(budget))
    assert mid, r.stderr
    assert mid["code_bytes"] <= budget, (mid["code_bytes"], budget)
    assert mid["budgets"]["code_budget_bytes"] == budget
    kept = sum(1 for t in mid["memory_trades"] if t["kind"] == "winograd" and t["taken"] != "direct")
    assert kept < taken, (kept, taken)
    assert "over the code budget" in r.stdout + r.stderr, r.stdout + r.stderr
    assert mid["model_hash"] != full["model_hash"], "the budget is not in the model hash"
    # As a ratio of the code with every Winograd layer direct (the driver
    # compiles that plan to measure it: --winograd off's code, near enough).
    ratio = budget / lo
    r, rmid = compile_model(tool, model, target, os.path.join(out, "ratio"), "--max-code-bytes", f"{ratio:.4f}x")
    assert rmid, r.stderr
    base = rmid["budgets"]["code_all_direct_bytes"]
    assert abs(base - lo) <= 0.02 * lo, (base, lo)
    assert rmid["budgets"]["code_budget_bytes"] == int(float(f"{ratio:.4f}") * base), rmid["budgets"]
    assert rmid["code_bytes"] <= rmid["budgets"]["code_budget_bytes"], rmid["budgets"]
    assert rmid["model_hash"] != mid["model_hash"], "the ratio is not in the model hash"
    r, none = compile_model(tool, model, target, os.path.join(out, "none"), "--max-code-bytes", "0.5x")
    assert r.returncode != 0, "a ratio below the smallest plan compiled"
    assert "more than the budget of" in r.stderr and "(--max-code-bytes)" in r.stderr, r.stderr
    r, none = compile_model(tool, model, target, os.path.join(out, "none"), "--max-code-bytes", str(lo // 2))
    assert r.returncode != 0 and none is None, "a budget below the smallest plan compiled"
    m = re.search(r"more than the budget of (\d+) \(--max-code-bytes\).*smallest budget that fits is (\d+) bytes",
                  r.stderr)
    assert m and int(m.group(1)) == lo // 2 and int(m.group(2)) <= lo * 1.05, r.stderr
    print(f"code: Winograd as wanted {hi} bytes ({taken} layers), budget {budget}: {mid['code_bytes']} bytes "
          f"({kept} layers); off {lo}; refused below it: {r.stderr.strip().splitlines()[-1]}")


if __name__ == "__main__":
    main()
