#!/usr/bin/python3
"""tinyrt-perf --profile on an emulated ARM target: one row per kernel of
the model, each with its executed instructions, and together nearly all of
the inference's instructions (the rest is the runtime between steps and
the runner restoring the inputs).

  check_perf_profile.py TINYRT_PERF MODEL TARGET
"""
import json
import subprocess
import sys

perf, model, target = sys.argv[1:4]
r = subprocess.run([perf, model, "--target", target, "--profile", "--json", "--runs", "1"], capture_output=True,
                   text=True)
if r.returncode != 0:
    sys.exit(f"tinyrt-perf failed: {r.stderr}")
j = json.loads(r.stdout)
total = j["guest_instructions"]
rows = j["profile"]
steps = sum(x["guest_instructions"] for x in rows)
print(f"{len(rows)} kernels, {steps:.0f} of {total} instructions per inference ({steps / total:.3f})")
if not rows or any(x["guest_instructions"] <= 0 for x in rows):
    sys.exit("a kernel without instructions")
# The two figures come from different sessions (the whole inference from the
# runner's own session, the steps from a second one with its own arena), so
# libc's memcpy paths and the kernels' few data-dependent branches can differ
# by a few hundred instructions: CI once saw the steps at 1.0002 of the whole.
if not 0.9 * total <= steps <= 1.005 * total:
    sys.exit("the kernels' instructions do not add up to the inference's")
gemm = [x for x in rows if "tile" in x]
if not gemm or any("flops_per_instruction" not in x for x in gemm):
    sys.exit("GEMM kernels without their tile or FLOPs per instruction")
# Threads: the plugin counts one thread's instructions; more are refused.
r = subprocess.run([perf, model, "--target", target, "--profile", "--threads", "2"], capture_output=True, text=True)
if r.returncode != 2 or "--threads 1" not in r.stderr:
    sys.exit(f"--profile --threads 2 on {target} was not refused: {r.returncode} {r.stderr}")
