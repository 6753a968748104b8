// Package selftest proves that the AVX-512 emulator harness runs code on
// a CPU with AVX-512: its tests check that golang.org/x/sys/cpu reports
// AVX512F and that an assembly function using ZMM registers and an
// opmask register computes the right result. On a CPU without AVX-512
// (this repository's AMD Zen 1 build machine, or Bochs's Haswell model)
// they fail: the feature check reports the missing feature and the
// assembly function dies with SIGILL. Run them with
//
//	.ci/avx512/emulate.sh .ci/avx512/selftest -test.v
package selftest
