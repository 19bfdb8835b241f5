#!/usr/bin/python3
"""The int8 product forms of x86 without VNNI by LLVM's scheduling models
(llvm-mca-14), per microarchitecture: a register tile's inner step of MR
pixels by NV vectors of output channels, as the GEMM emitter makes it, for

  bytes         vpmaddubsw + vpmaddwd + vpaddd      (7-bit weights; ORT's
                                                     saturating AVX2 kernels)
  signed-bytes  vpabsb per pixel, vpsignb + vpmaddubsw + vpmaddwd + vpaddd
  int16-pairs   vpmaddwd + vpaddd over int16 inputs (widened copies, Winograd)

and prints cycles per 1000 products for each: the exact forms against the
saturating one where no machine of the class is at hand (docs/QUANTIZATION.md).

  bench/mca_int8_forms.py [CPU...]     (default: znver1 znver2 znver3 skylake alderlake)
"""
import os
import re
import subprocess
import sys
import tempfile

MR, NV = 6, 2  # the AVX2 int8 tile of most layers (16 ymm registers)


def tile(form):
    s = []
    bcast = 3 if form != "int16-pairs" else 4
    for m in range(MR):
        s.append(f"vpbroadcastd {4 * m}(%rdi), %ymm{12 + m % bcast}")
    for v in range(NV):
        s.append(f"vmovdqa {32 * v}(%rsi), %ymm{14 + v}")
    for m in range(MR):
        x = f"%ymm{12 + m % bcast}"
        if form == "signed-bytes":
            s.append(f"vpabsb {x}, %ymm15")
        for v in range(NV):
            acc = f"%ymm{min(m * NV + v, 11)}"
            if form == "int16-pairs":
                s.append(f"vpmaddwd %ymm{14 + v}, {x}, %ymm0")
            elif form == "signed-bytes":
                s.append(f"vpsignb {x}, %ymm14, %ymm0")
                s.append("vpmaddubsw %ymm0, %ymm15, %ymm0")
                s.append("vpmaddwd %ymm13, %ymm0, %ymm0")
            else:
                s.append(f"vpmaddubsw %ymm{14 + v}, {x}, %ymm0")
                s.append("vpmaddwd %ymm13, %ymm0, %ymm0")
            s.append(f"vpaddd %ymm0, {acc}, {acc}")
    # products per step: a vpmaddwd lane pair is 2, a vpmaddubsw quad 4, over 8 lanes
    per = MR * NV * 8 * (2 if form == "int16-pairs" else 4)
    return "\n".join(s) + "\n", per


def main():
    cpus = sys.argv[1:] or ["znver1", "znver2", "znver3", "skylake", "alderlake"]
    forms = ["bytes", "signed-bytes", "int16-pairs"]
    print(f"| CPU model (llvm-mca-14) | " + " | ".join(f"{f} cycles / 1000 products" for f in forms)
          + " | int16 pairs / bytes |")
    print("|---|" + "---|" * (len(forms) + 1))
    with tempfile.TemporaryDirectory() as d:
        for cpu in cpus:
            row = []
            for f in forms:
                text, per = tile(f)
                path = os.path.join(d, f + ".s")
                with open(path, "w") as fh:
                    fh.write(text)
                out = subprocess.run(["llvm-mca-14", f"-mcpu={cpu}", "-iterations=200", path], capture_output=True,
                                     text=True, check=True).stdout
                cycles = int(re.search(r"Total Cycles:\s+(\d+)", out).group(1)) / 200
                row.append(1000 * cycles / per)
            print(f"| {cpu} | " + " | ".join(f"{c:.1f}" for c in row) + f" | {row[2] / row[0]:.2f} |")


if __name__ == "__main__":
    main()
