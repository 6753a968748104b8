package main

import (
	"context"
	"io"
	"testing"
)

// TestDLRM trains the model for 600 steps of 64 samples: the training
// loss must fall from about ln 2 ≈ 0.69 (a model that knows nothing) at
// the first step to below 0.25 over the last 50 steps, the held-out
// accuracy must pass 0.9, and the int8 rowwise-quantized tables must score
// every held-out sample within 1e-2 of the float model.
func TestDLRM(t *testing.T) {
	res, err := run(context.Background(), io.Discard, 600, 64, 0.05, false)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loss %.4f -> %.4f; held-out loss %.4f, accuracy %.3f; int8 max score diff %.2e",
		res.firstLoss, res.lastLoss, res.testLoss, res.testAccuracy, res.maxScoreDiff)
	if res.firstLoss < 0.6 || res.lastLoss > 0.25 {
		t.Errorf("training loss went from %.4f to %.4f, want from above 0.6 to below 0.25", res.firstLoss, res.lastLoss)
	}
	if res.testAccuracy < 0.9 {
		t.Errorf("held-out accuracy %.3f, want at least 0.9", res.testAccuracy)
	}
	if res.maxScoreDiff > 1e-2 || res.maxScoreDiff == 0 {
		t.Errorf("int8 scores differ from the float ones by up to %.2e, want within 1e-2 (and not 0: the int8 net must run)", res.maxScoreDiff)
	}
}

// TestDLRMRowWise trains the tables with RowWiseSparseAdagrad instead (one
// moment per row), which learns the tables a little slower at the same
// rate: the loss must still fall below 0.3 and the accuracy pass 0.88.
func TestDLRMRowWise(t *testing.T) {
	res, err := run(context.Background(), io.Discard, 600, 64, 0.05, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("loss %.4f -> %.4f; held-out loss %.4f, accuracy %.3f; int8 max score diff %.2e",
		res.firstLoss, res.lastLoss, res.testLoss, res.testAccuracy, res.maxScoreDiff)
	if res.firstLoss < 0.6 || res.lastLoss > 0.3 || res.testAccuracy < 0.88 || res.maxScoreDiff > 1e-2 {
		t.Errorf("row-wise: training loss %.4f -> %.4f (want from above 0.6 to below 0.3), held-out accuracy %.3f (want >= 0.88), int8 score difference %.2e (want <= 1e-2)",
			res.firstLoss,
			res.lastLoss, res.testAccuracy, res.maxScoreDiff)
	}
}
