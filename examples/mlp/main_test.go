package main

import (
	"context"
	"io"
	"testing"
)

// TestTrainingConverges runs the example for 12 epochs (288 steps): the
// loss must fall well below its starting value (ln 10 ≈ 2.3 for 10
// classes) and the held-out accuracy must be far above chance (0.1).
func TestTrainingConverges(t *testing.T) {
	res, err := run(context.Background(), io.Discard, 12, 64, 32, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	if res.firstLoss < 2 || res.lastLoss > 0.5 {
		t.Errorf("loss went from %v to %v, want from above 2 to below 0.5", res.firstLoss, res.lastLoss)
	}
	if res.testAccuracy < 0.9 {
		t.Errorf("held-out accuracy %v, want at least 0.9", res.testAccuracy)
	}
}
