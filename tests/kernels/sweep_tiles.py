#!/usr/bin/env python3
"""The tile sweep: every register tile a target's GEMM may use (its float
candidates and measured table, its int8 candidates: tinyrt-compile
--list-tiles) forced in turn (--gemm-tile) on the float convolution and
matrix-product kernel cases and on the int8 ones, run on the target (qemu
for ARM) against their references, the way XNNPACK's microkernel testers
run every variant. A tile that is never chosen for the zoo's shapes is
still tested on odd ones.

  sweep_tiles.py TINYRT_COMPILE TINYRT_ONNX_TEST TARGET KERNEL_CASES [--only float|int8]
                 [--unless-same-as OTHER_TARGET] [--splits]

--only: one kind of tile (aarch64-neon-dot's float code is aarch64-neon's);
--unless-same-as: nothing to do when TARGET lists the same tiles as
OTHER_TARGET, whose sweep runs them (host on an AVX2-only machine);
--splits: the task splits instead (--task-split: each order with task
counts that leave partial blocks, one and more tasks than units, and the
step on one thread), at two threads, on the same cases and the Winograd
ones (their grouped GEMMs), with the target's own tiles.
"""
import argparse
import subprocess
import sys


def list_tiles(compile_tool, target):
    listed = subprocess.run([compile_tool, "--list-tiles", "--target", target], check=True,
                            capture_output=True, text=True).stdout.split()
    return list(zip(listed[0::2], listed[1::2]))


def runs(cases):
    """Kind -> (case paths, tinyrt-onnx-test options)."""
    return {
        # Float: convolutions through the GEMM (direct: Winograd would hide
        # the tile) and products whose shapes leave partial tiles every way
        # (odd channels, prime widths, few rows, strides, dilations, pads
        # past the kernel, a transposed convolution, an epilogue).
        "float": ([f"{cases}/conv", f"{cases}/matmul"],
                  ["--winograd", "off", "--filter", "conv_one_by_one_odd", "conv_prime_width", "conv_non_square",
                   "conv_grouped", "conv_c3_7x7_s2", "conv_valid_c5_k7", "conv_conv1d_long_row", "conv_few_rows_batch2",
                   "conv_stride3", "conv_pads_beyond_kernel", "conv_dilation2", "convtranspose_3x3_s2_pad_opad",
                   "epilogue_silu", "matmul_rank3_odd", "matmul_one_row", "matmul_attention_scores"]),
        # int8: the integer convolutions and products (every signedness and
        # zero point), exactly as ONNX.
        "int8": ([f"{cases}/quant/exact"], ["--rtol", "0", "--atol", "0", "--filter", "convinteger", "matmulinteger"]),
        # Winograd: the grouped GEMMs between the transforms, float and int8.
        "winograd": ([f"{cases}/winograd"], []),
    }


def run(onnx_test, target, kind, what, paths, args):
    """One tinyrt-onnx-test run; whether every case passed."""
    r = subprocess.run([onnx_test] + paths + ["-j", "2", "--target", target] + args, capture_output=True, text=True)
    summary = (r.stdout.strip().splitlines() or ["(no output)"])[-1]
    print(f"{target} {kind} {what}: {summary}", flush=True)
    ok = r.returncode == 0 and " 0 failed" in summary and not summary.startswith("0 passed")
    if not ok:
        print(r.stdout + r.stderr)
    return ok


# Each order with one task, a count that leaves partial blocks, more tasks
# than units; and the step on the calling thread.
SPLITS = ["pixels,1", "pixels,5", "channels,3", "channels,4096", "serial"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("compile_tool")
    ap.add_argument("onnx_test")
    ap.add_argument("target")
    ap.add_argument("cases")
    ap.add_argument("--only", choices=["float", "int8"])
    ap.add_argument("--unless-same-as")
    ap.add_argument("--splits", action="store_true")
    a = ap.parse_args()
    compile_tool, onnx_test, target, cases = a.compile_tool, a.onnx_test, a.target, a.cases
    kinds = runs(cases)
    failed = []
    if a.splits:
        for split in SPLITS:
            for kind in ("float", "int8", "winograd"):
                paths, extra = kinds[kind]
                if not run(onnx_test, target, kind, "split " + split, paths,
                           ["--task-split", split, "--threads", "2", "--serial-step-ops", "0"] + extra):
                    failed.append(f"{kind} {split}")
        if failed:
            sys.exit(f"{target}: task splits failing: {', '.join(failed)}")
        print(f"{target}: {len(SPLITS)} task splits passed")
        return
    tiles = list_tiles(compile_tool, target)
    if a.unless_same_as and tiles == list_tiles(compile_tool, a.unless_same_as):
        print(f"{target}: the same tiles as {a.unless_same_as}, whose sweep runs them")
        return
    if a.only:
        tiles = [t for t in tiles if t[0] == a.only]
    if not tiles:
        sys.exit(f"{target}: --list-tiles listed no tiles")
    for kind, tile in tiles:
        paths, extra = kinds[kind]
        if not run(onnx_test, target, kind, "tile " + tile, paths, ["--gemm-tile", tile, "--serial-step-ops", "0"] + extra):
            failed.append(f"{kind} {tile}")
    if failed:
        sys.exit(f"{target}: tiles failing: {', '.join(failed)}")
    print(f"{target}: {len(tiles)} tiles passed")


if __name__ == "__main__":
    main()
