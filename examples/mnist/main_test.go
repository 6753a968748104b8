package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShortRun trains LeNet for 150 steps on the first 9,600 training
// images and checks that it has learnt: the full 3-epoch run's ≥ 99% is
// measured by running the example, not in CI.
func TestShortRun(t *testing.T) {
	plot := filepath.Join(t.TempDir(), "progress.svg")
	var out bytes.Buffer
	res, err := run(context.Background(), &out, config{
		dataDir: findData(), epochs: 1, iterations: 150, batch: 64, lr: 0.01, momentum: 0.9,
		weightDecay: 5e-4, policy: "inv", gamma: 1e-4, power: 0.75, validateStep: 75, trainLimit: 9600, plot: plot, seed: 1,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log(out.String())
	if res.accuracy < 0.9 {
		t.Fatalf("test accuracy %.4f after 150 steps, want ≥ 0.9", res.accuracy)
	}
	if n := len(res.history.Validation); n != 2 {
		t.Fatalf("%d validations, want 2 (every 75 of 150 steps)", n)
	}
	if first, last := res.history.Train[0].Loss, res.history.Validation[1].Loss; !(last < first/4) {
		t.Fatalf("loss went from %.3f to %.3f", first, last)
	}
	svg, err := os.ReadFile(plot)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(svg), "<svg") {
		t.Fatal("the plot is not an SVG")
	}
	if !strings.Contains(out.String(), "test accuracy") {
		t.Fatalf("the report has no test accuracy:\n%s", out.String())
	}
}

// TestUnknownPolicy checks that a misspelled learning-rate policy is an
// error, whatever gamma is, rather than a silently fixed rate.
func TestUnknownPolicy(t *testing.T) {
	for _, gamma := range []float64{0, 0.1} {
		_, err := run(context.Background(), io.Discard, config{dataDir: findData(), iterations: 1, batch: 8, lr: 0.01, policy: "stpe", gamma: gamma, trainLimit: 64, seed: 1})
		if err == nil || !strings.Contains(err.Error(), `"stpe"`) {
			t.Errorf("gamma %v: err = %v, want an unknown-policy error", gamma, err)
		}
	}
}
