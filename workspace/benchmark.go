package workspace

import (
	"fmt"
	"time"

	"github.com/caffe2go/caffe2go/operators"
)

// BenchmarkNet runs a created net warmup times untimed, then runs times
// timed, and returns the mean milliseconds per run. With perOp it then runs
// the operators one by one, runs times, and appends each operator's mean
// milliseconds, in net order.
func (w *Workspace) BenchmarkNet(name string, warmup, runs int, perOp bool) ([]float64, error) {
	n := w.GetNet(name)
	if n == nil {
		return nil, fmt.Errorf("workspace: %w %q", ErrNetNotFound, name)
	}
	if runs < 1 {
		return nil, fmt.Errorf("workspace: BenchmarkNet %q: runs must be at least 1, got %d", name, runs)
	}
	for i := 0; i < warmup; i++ {
		if err := n.Run(); err != nil {
			return nil, err
		}
	}
	start := time.Now()
	for i := 0; i < runs; i++ {
		if err := n.Run(); err != nil {
			return nil, err
		}
	}
	res := []float64{ms(time.Since(start)) / float64(runs)}
	if !perOp {
		return res, nil
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	per := make([]time.Duration, len(n.ops))
	for r := 0; r < runs; r++ {
		for i := range n.ops {
			t := time.Now()
			if err := operators.RunSafely(n.ops[i]); err != nil {
				return nil, fmt.Errorf("net %q: %w", name, &operators.OpError{Index: i, Type: n.ops[i].OpBase().Type(), Err: err})
			}
			per[i] += time.Since(t)
		}
	}
	for _, d := range per {
		res = append(res, ms(d)/float64(runs))
	}
	return res, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
