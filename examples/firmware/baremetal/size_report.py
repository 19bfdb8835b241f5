#!/usr/bin/python3
"""Where the firmware's bytes go: reads the GNU ld map of firmware.elf and
sums the sizes of the input sections kept in each output section by
component (runtime, model, C library, startup and app).

Usage: size_report.py firmware.map"""
import re
import sys

SECTIONS = (".text", ".rodata", ".data.rel.ro", ".ARM.exidx", ".data", ".bss")


def component(path):
    base = path.replace("\\", "/")
    if "libtinyrt" in base:
        return "runtime (libtinyrt.a)"
    if re.search(r"(^|/)demo\.o$", base) or base.endswith("/demo.o") or base == "demo.o":
        return "model (demo.o)"
    if "picolibc" in base or "libgcc" in base or "libsemihost" in base or "/libc.a" in base:
        return "C library + libgcc"
    return "startup + board + app"


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    lines = open(sys.argv[1]).read().split("\n")
    try:
        start = lines.index("Linker script and memory map")
    except ValueError:
        sys.exit("size_report.py: not a GNU ld map")
    out = None
    pending = None  # an input-section name whose numbers are on the next line
    sizes = {}
    stack = 0
    for line in lines[start:]:
        m = re.match(r"^(\.\S+)\s", line) or re.match(r"^(\.\S+)$", line)
        if m:
            out = m.group(1)
            m = re.match(r"^\.stack\s+0x[0-9a-f]+\s+0x([0-9a-f]+)", line)
            if m:
                stack = int(m.group(1), 16)
            pending = None
            continue
        if out not in SECTIONS:
            continue
        m = re.match(r"^ (\S+)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
        if m:
            size, path = int(m.group(3), 16), m.group(4)
        else:
            m = re.match(r"^ (\S+)$", line)
            if m and not m.group(1).startswith("*"):
                pending = m.group(1)
                continue
            m = re.match(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$", line)
            if not (m and pending):
                continue
            size, path = int(m.group(2), 16), m.group(3)
            pending = None
        if "(size before relaxing)" in path or path.startswith("*"):
            continue
        key = (component(path), out)
        sizes[key] = sizes.get(key, 0) + size
    comps = ["runtime (libtinyrt.a)", "model (demo.o)", "C library + libgcc", "startup + board + app"]
    print("firmware.elf, linked (after --gc-sections); flash = .text + read-only, RAM = .data + .bss")
    print("%-24s %8s %9s %8s %8s" % ("bytes", ".text", "read-only", ".data", ".bss"))
    total = [0, 0, 0, 0]
    for c in comps:
        row = [sizes.get((c, ".text"), 0), sum(sizes.get((c, s), 0) for s in (".rodata", ".data.rel.ro", ".ARM.exidx")),
               sizes.get((c, ".data"), 0), sizes.get((c, ".bss"), 0)]
        total = [a + b for a, b in zip(total, row)]
        print("%-24s %8d %9d %8d %8d" % (c, *row))
    print("%-24s %8d %9d %8d %8d" % ("total", *total))
    print("%-24s %8s %9s %8s %8d" % ("stack (.stack)", "", "", "", stack))


if __name__ == "__main__":
    main()
