#!/usr/bin/env python3
"""Assembles every FFN module of `ffnc --emit=ptx` output with `ptxas -v`
and fails unless every kernel assembles with no spills and no stack frame
(local memory would mean registers spilled or arrays placed in memory).

    ptxas_check.py <ptxas> <arch> <file.ptx> [--per-kernel]

Prints one summary line: "<arch>: M modules, K kernels, 0 spill bytes,
0 stack bytes, max R registers"; with --per-kernel first a line for each
kernel: "<kernel> <registers> <spill bytes> <stack bytes>"
(scripts/ptxas-sweep.sh compares builds with them).
"""
import re
import subprocess
import sys
import tempfile

ptxas, arch, path = sys.argv[1:4]
per_kernel = "--per-kernel" in sys.argv[4:]
text = open(path).read()
modules = [m for m in re.split(r"^// ffn .*$", text, flags=re.M) if m.strip()]
kernels = spills = stack = 0
max_regs = 0
for module in modules:
    with tempfile.NamedTemporaryFile("w", suffix=".ptx") as f:
        f.write(module)
        f.flush()
        r = subprocess.run([ptxas, f"-arch={arch}", "-v", f.name, "-o", "/dev/null"],
                           capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr)
        sys.exit(f"ptxas failed on a module of {path}")
    kernel, kernel_spill, kernel_stack = "?", 0, 0
    for line in r.stderr.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line)
        if m:
            kernels += 1
            kernel, kernel_spill, kernel_stack = m.group(1), 0, 0
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            kernel_stack = int(m.group(1))
            kernel_spill = int(m.group(2)) + int(m.group(3))
            stack += kernel_stack
            spills += kernel_spill
        m = re.search(r"Used (\d+) registers", line)
        if m:
            max_regs = max(max_regs, int(m.group(1)))
            if per_kernel:
                print(kernel, m.group(1), kernel_spill, kernel_stack)
        if "warning" in line.lower():
            print(line)
print(f"{arch}: {len(modules)} modules, {kernels} kernels, {spills} spill bytes, "
      f"{stack} stack bytes, max {max_regs} registers")
sys.exit(0 if spills == 0 and stack == 0 and kernels > 0 else 1)
