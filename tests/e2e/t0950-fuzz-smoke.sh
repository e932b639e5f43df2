#!/usr/bin/env bash
# check: parallel
# The fuzz smoke (docs/FUZZ.md): every libFuzzer target of tests/fuzz replays
# its seed corpus once, no mutation (tests/fuzz/run.sh --smoke): the
# fixtures, the examples, and the crash-* inputs kept in tests/data/fuzz
# as regression tests.  make fuzz is the long run (docs/FUZZ.md).
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-build}
cd "$top" || exit 1
targets="bench config mail api patch qemu perfstat"
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){return 0;}' |
    ${FUZZ_CC:-clang} -x c -fsanitize=fuzzer -o /dev/null - 2>/dev/null; then
	for t in $targets; do
		echo "SKIP fuzz_$t: clang with libFuzzer is missing (apt-get install clang libclang-rt-dev)"
	done
	exit 0
fi
OUT=$OUT tests/fuzz/run.sh --smoke $targets
