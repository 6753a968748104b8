package main

import (
	"bufio"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/caffe2go/caffe2go/operators/kernels/gemm"
	"github.com/caffe2go/caffe2go/workspace"
)

// TestWorkloadsRun builds every workload at an eighth of its batch size and
// times a few steps: each must build, run and print its line.
func TestWorkloadsRun(t *testing.T) {
	var out strings.Builder
	if err := run(&out, "", 50*time.Millisecond, 8, true, nil); err != nil {
		t.Fatal(err)
	}
	lines := map[string]bool{}
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for sc.Scan() {
		if name, _, ok := strings.Cut(sc.Text(), "\t"); ok {
			lines[name] = true
		}
	}
	for _, w := range []string{"mlp", "lenet", "convnet", "gemm"} {
		if !lines[w] {
			t.Errorf("no line for %s in:\n%s", w, out.String())
		}
	}
	// The GEMM paths of the FC layers and the convolutions: dot for the
	// classifier's last layer (C = X·Wᵀ with 9 or 10 columns) where the
	// machine has the dot kernel, a blocked product for the others.
	for _, want := range []string{"#   FC ", "#   FCGradient ", "#   Conv ", "#   ConvGradient "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no GEMM path line %q in:\n%s", want, out.String())
		}
	}
	if gemm.Kernel() == "avx2" && !strings.Contains(out.String(), "dot 1") {
		t.Errorf("no product took the dot path:\n%s", out.String())
	}
}

func TestThreadCounts(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []int
	}{
		{"2", []int{2}},
		{"1,2,16", []int{1, 2, 16}},
		{" 1, 4", []int{1, 4}},
		{"", nil},
		{"0", nil},
		{"1,,2", nil},
		{"two", nil},
		{"-1", nil},
	} {
		got, err := threadCounts(tc.in)
		if tc.want == nil {
			if err == nil {
				t.Errorf("threadCounts(%q) = %v, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("threadCounts(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

func TestPrintMachine(t *testing.T) {
	var out strings.Builder
	printMachine(&out)
	for _, want := range []string{"# cpu: ", "# cpu features: ", "# gemm micro-kernel: " + gemm.Kernel()} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %q in:\n%s", want, out.String())
		}
	}
}

// TestTrainingStepsDoNotAllocate checks that once warmed up, a training
// step of every workload (at an eighth of its batch) allocates nothing:
// tensors, kernel scratch and worker state are all reused.
func TestTrainingStepsDoNotAllocate(t *testing.T) {
	for _, w := range workloads {
		t.Run(w.name, func(t *testing.T) {
			ws := workspace.New("")
			net, err := w.build(ws, w.batch/8, nil)
			if err != nil {
				t.Fatal(err)
			}
			var stepErr error
			step := func() {
				if err := ws.RunNet(net, 1); err != nil && stepErr == nil {
					stepErr = err
				}
			}
			for range 3 {
				step()
			}
			if allocs := testing.AllocsPerRun(5, step); allocs != 0 {
				t.Errorf("%v allocations per step", allocs)
			}
			if stepErr != nil {
				t.Fatal(stepErr)
			}
		})
	}
}

// BenchmarkTrainingStep times one warmed-up training step of every
// workload at its full batch, with allocations reported; the same steps
// `go run ./examples/bench` times against PyTorch.
func BenchmarkTrainingStep(b *testing.B) {
	for _, w := range workloads {
		b.Run(w.name, func(b *testing.B) {
			ws := workspace.New("")
			net, err := w.build(ws, w.batch, nil)
			if err != nil {
				b.Fatal(err)
			}
			for range 2 {
				if err := ws.RunNet(net, 1); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				if err := ws.RunNet(net, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestNoGradientToData checks that no operator computes the gradient of
// the input data, which PyTorch does not compute either: the FC that reads
// it has no dX output, the Conv that reads it no_gradient_to_input.
func TestNoGradientToData(t *testing.T) {
	for _, w := range workloads {
		ws := workspace.New("")
		net, err := w.build(ws, w.batch/8, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range ws.GetNet(net).Proto().GetOp() {
			for _, out := range op.GetOutput() {
				if out == "data_grad" {
					t.Errorf("%s: %s computes %s", w.name, op.GetType(), out)
				}
			}
		}
	}
}
