package main

import (
	"bufio"
	"strings"
	"testing"
	"time"

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
