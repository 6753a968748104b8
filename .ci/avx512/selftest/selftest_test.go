//go:build amd64

package selftest

import (
	"testing"

	"golang.org/x/sys/cpu"
)

// TestAVX512Features fails, rather than skips, on a CPU without AVX-512:
// under the emulator that means the harness is not doing its job.
func TestAVX512Features(t *testing.T) {
	t.Logf("AVX2=%v AVX512F=%v AVX512CD=%v AVX512BW=%v AVX512DQ=%v AVX512VL=%v AVX512VNNI=%v",
		cpu.X86.HasAVX2, cpu.X86.HasAVX512F, cpu.X86.HasAVX512CD, cpu.X86.HasAVX512BW,
		cpu.X86.HasAVX512DQ, cpu.X86.HasAVX512VL, cpu.X86.HasAVX512VNNI)
	if !cpu.X86.HasAVX512F {
		t.Fatal("golang.org/x/sys/cpu reports no AVX512F: this CPU (or emulated CPU model) lacks AVX-512")
	}
}

// TestAVX512AddMasked runs the ZMM/opmask assembly. Without AVX-512 the
// instructions are undefined and the test binary dies with SIGILL.
func TestAVX512AddMasked(t *testing.T) {
	var a, b [16]float32
	for i := range a {
		a[i] = float32(i) + 0.5
		b[i] = float32(100 * (i + 1))
	}
	const sentinel = -7
	for _, mask := range []uint16{0xFFFF, 0x0000, 0xA5A5, 0x8001, 0x7FFE} {
		var dst [16]float32
		for i := range dst {
			dst[i] = sentinel
		}
		addMasked(&dst, &a, &b, mask)
		for i := range dst {
			want := float32(sentinel)
			if mask&(1<<i) != 0 {
				want = a[i] + b[i]
			}
			if dst[i] != want {
				t.Errorf("mask %#04x: dst[%d] = %v, want %v", mask, i, dst[i], want)
			}
		}
	}
}
