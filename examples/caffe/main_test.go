package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDigitsMLP runs the walkthrough on 2 devices: the MLP reaches more
// than 90% on the 297 held-out digits, with Caffe's lines and the final
// snapshot.
func TestDigitsMLP(t *testing.T) {
	out := t.TempDir()
	var log bytes.Buffer
	acc, err := run(context.Background(), &log, "../mlp/testdata/digits.csv.gz", out, "leveldb", 2)
	if err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if acc < 0.9 {
		t.Errorf("accuracy %.4f, want > 0.9\n%s", acc, log.String())
	}
	for _, want := range []string{"wrote 1500 rows", "wrote 297 rows", "Iteration 1500, Testing net (#0)",
		"Snapshotting to binary proto file " + filepath.Join(out, "digits_mlp_iter_1500.caffemodel"), "Optimization Done."} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, log.String())
		}
	}
	if _, err := os.Stat(filepath.Join(out, "digits_mlp_iter_1500.caffemodel")); err != nil {
		t.Error(err)
	}
	if _, err := run(context.Background(), &log, "missing.csv", out, "leveldb", 1); err == nil {
		t.Error("missing CSV: no error")
	}
}
