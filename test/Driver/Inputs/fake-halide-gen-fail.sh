#!/bin/sh
# A stand-in for ffnc-halide-gen (test/Driver/halide-errors.test). It
# answers --version as the real generator does, so that ffnc takes it for a
# working Halide back end, and fails every compile as the real one does when
# Halide throws: exit 2, the kernel named on the first line of stderr.
# FAKE_HALIDE_AUTOSCHEDULERS replaces the autoschedulers it claims to ship.
for arg in "$@"; do
  if [ "$arg" = "--version" ]; then
    echo "ffnc-halide-gen protocol 1, Halide 14.0.0 (LLVM 14); autoschedulers: ${FAKE_HALIDE_AUTOSCHEDULERS-adams2019 li2018 mullapudi2016}"
    exit 0
  fi
done
echo "ffnc-halide-gen: kernel 'small': Error: boom" >&2
echo "(what Halide printed before throwing)" >&2
exit 2
