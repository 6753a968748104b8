package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCaffeTrainLeNet converts the MNIST test set to a LevelDB of Datum
// records, trains Caffe's LeNet for 4 iterations on 2 devices with a
// shortened copy of Caffe's solver (its net found by file name beside
// it), then resumes a second run from the snapshot at iteration 2: it ends
// with the uninterrupted run's .caffemodel, byte for byte.
func TestCaffeTrainLeNet(t *testing.T) {
	dir := isolate(t)
	code, out, errOut := runMain(t, "", "caffe", "convert-mnist",
		filepath.Join(mnistDir, "t10k-images-idx3-ubyte.gz"), filepath.Join(mnistDir, "t10k-labels-idx1-ubyte.gz"), "mnist_leveldb")
	if code != 0 || !strings.Contains(out, "wrote 10000 records to mnist_leveldb (leveldb)") {
		t.Fatalf("convert-mnist: code %d, %s%s", code, out, errOut)
	}
	solver, err := os.ReadFile(filepath.Join(lenetDir, "lenet_solver.prototxt"))
	if err != nil {
		t.Fatal(err)
	}
	short := strings.NewReplacer("max_iter: 10000", "max_iter: 4", "test_iter: 100", "test_iter: 2", "test_interval: 500", "test_interval: 2",
		"display: 100", "display: 2", "snapshot: 5000", "snapshot: 2").Replace(string(solver))
	net, err := os.ReadFile(filepath.Join(lenetDir, "lenet_train_test.prototxt"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"solver.prototxt": short, "lenet_train_test.prototxt": string(net)} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	train := func(prefix string, extra ...string) string {
		t.Helper()
		args := append([]string{"caffe", "train", "-solver", "solver.prototxt", "-devices", "2",
			"-train-db", "mnist_leveldb", "-test-db", "mnist_leveldb", "-snapshot-prefix", prefix}, extra...)
		code, out, errOut := runMain(t, "", args...)
		if code != 0 || errOut != "" {
			t.Fatalf("caffe train %v: code %d\n%s%s", extra, code, out, errOut)
		}
		return out
	}
	out = train("run/lenet")
	for _, want := range []string{
		"Solving LeNet on 2 CPU device(s), 128 examples per iteration", "Iteration 0, Testing net (#0)",
		"    Test net output #0: accuracy = ", "    Test net output #1: loss = ", "Iteration 2 (",
		"    Train net output #0: loss = ", "Iteration 2, lr = 0.0099985",
		"Snapshotting to binary proto file run/lenet_iter_2.caffemodel", "Snapshotting solver state to checkpoint 2 in ",
		"Iteration 4, Testing net (#0)", "Optimization Done.", "4 iterations on 2 device(s) in ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	uninterrupted, err := os.ReadFile("run/lenet_iter_4.caffemodel")
	if err != nil {
		t.Fatal(err)
	}
	out = train("run/lenet", "-snapshot", "2")
	if !strings.Contains(out, "Restored snapshot 2 (iteration 2)") || strings.Contains(out, "Iteration 0,") {
		t.Errorf("resumed run:\n%s", out)
	}
	resumed, err := os.ReadFile("run/lenet_iter_4.caffemodel")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(resumed, uninterrupted) {
		t.Error("the resumed run's caffemodel at iteration 4 differs from the uninterrupted run's")
	}
	// net weights draws conv1 from the store's latest checkpoint.
	if code, out, errOut := runMain(t, "", "net", "weights", "-blob", "conv1_w", "run", "-o", "conv1.png"); code != 0 ||
		!strings.Contains(out, "20 filters × 1 channels of 5×5") {
		t.Errorf("net weights from the checkpoint: code %d: %s%s", code, out, errOut)
	}
	if code, _, errOut := runMain(t, "", "caffe", "train", "-solver", "solver.prototxt", "-snapshot", "3",
		"-train-db", "mnist_leveldb", "-test-db", "mnist_leveldb", "-snapshot-prefix", "run/lenet"); code == 0 || !strings.Contains(errOut, "snapshot 3") {
		t.Errorf("missing snapshot: code %d, stderr %s", code, errOut)
	}
}
