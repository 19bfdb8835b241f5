#!/usr/bin/env python3
"""The tile sweep: every register tile a target's GEMM may use (its float
candidates and measured table, its int8 candidates: tinyrt-compile
--list-tiles) forced in turn (--gemm-tile) on the float convolution and
matrix-product kernel cases and on the int8 ones, run on the target (qemu
for ARM) against their references, the way XNNPACK's microkernel testers
run every variant. A tile that is never chosen for the zoo's shapes is
still tested on odd ones.

  sweep_tiles.py TINYRT_COMPILE TINYRT_ONNX_TEST TARGET KERNEL_CASES
"""
import subprocess
import sys


def main():
    compile_tool, onnx_test, target, cases = sys.argv[1:5]
    listed = subprocess.run([compile_tool, "--list-tiles", "--target", target], check=True,
                            capture_output=True, text=True).stdout.split()
    tiles = list(zip(listed[0::2], listed[1::2]))
    if not tiles:
        sys.exit(f"{target}: --list-tiles listed no tiles")
    runs = {
        # Float: every convolution (direct: Winograd would hide the tile)
        # and matrix product.
        "float": ([f"{cases}/conv", f"{cases}/matmul"], ["--winograd", "off"]),
        # int8: the integer convolutions and products, exactly as ONNX.
        "int8": ([f"{cases}/quant/exact"], ["--rtol", "0", "--atol", "0", "--filter", "convinteger", "matmulinteger",
                                             "qlinearconv", "qlinearmatmul"]),
    }
    failed = []
    for kind, tile in tiles:
        paths, extra = runs[kind]
        cmd = [onnx_test] + paths + ["-j", "2", "--target", target, "--gemm-tile", tile, "--serial-step-ops", "0"] + extra
        r = subprocess.run(cmd, capture_output=True, text=True)
        summary = (r.stdout.strip().splitlines() or ["(no output)"])[-1]
        print(f"{target} {kind} tile {tile}: {summary}", flush=True)
        if r.returncode != 0 or " 0 failed" not in summary or summary.startswith("0 passed"):
            failed.append(f"{kind} {tile}")
            print(r.stdout + r.stderr)
    if failed:
        sys.exit(f"{target}: tiles failing: {', '.join(failed)}")
    print(f"{target}: {len(tiles)} tiles passed")


if __name__ == "__main__":
    main()
