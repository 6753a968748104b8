package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/brew/dataparallel"
	"github.com/caffe2go/caffe2go/examples/internal/interrupt"
	"github.com/caffe2go/caffe2go/workspace"
)

func testConfig(root string) config {
	return config{
		device: "cpu", devices: 2, epochs: 1, batch: 16, lr: 0.01, engine: "RING", root: root,
		trainImages: "../../data/mnist/train-images-idx3-ubyte.gz", trainLabels: "../../data/mnist/train-labels-idx1-ubyte.gz",
		testImages: "../../data/mnist/t10k-images-idx3-ubyte.gz", testLabels: "../../data/mnist/t10k-labels-idx1-ubyte.gz",
		trainLimit: 1024, testLimit: 400, checkpointEvery: 8,
	}
}

// TestTrainAndResume runs a shrunken version of the example (1,024
// training images, 2 devices of 16): the loss falls and the test accuracy
// is far above chance; a second run with one more epoch resumes from the
// last checkpoint and does only the new steps.
func TestTrainAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("imports MNIST and trains")
	}
	c := testConfig(t.TempDir())
	first, err := run(context.Background(), io.Discard, c)
	if err != nil {
		t.Fatal(err)
	}
	if first.resumedFrom != -1 || first.steps != 32 || first.lastStep != 32 {
		t.Errorf("first run: resumed from %d, %d steps, ends at %d; want -1, 32, 32", first.resumedFrom, first.steps, first.lastStep)
	}
	if first.lastLoss > first.firstLoss*0.8 {
		t.Errorf("loss went from %v to %v", first.firstLoss, first.lastLoss)
	}
	if first.testAccuracy < 0.5 || first.testedExamples != 400 {
		t.Errorf("test accuracy %v on %d images, want at least 0.5 on 400", first.testAccuracy, first.testedExamples)
	}
	c.epochs = 2
	second, err := run(context.Background(), io.Discard, c)
	if err != nil {
		t.Fatal(err)
	}
	if second.resumedFrom != 32 || second.steps != 32 || second.lastStep != 64 {
		t.Errorf("second run: resumed from %d, %d steps, ends at %d; want 32, 32, 64", second.resumedFrom, second.steps, second.lastStep)
	}
	if second.testAccuracy < first.testAccuracy-0.05 {
		t.Errorf("test accuracy fell from %v to %v after more training", first.testAccuracy, second.testAccuracy)
	}
}

// benchmarkLeNet measures LeNet training steps on devices CPU devices with
// perDevice examples each (random images), reporting images/s.
func benchmarkLeNet(b *testing.B, devices, perDevice int) {
	ws := workspace.New(b.TempDir())
	defer ws.Close()
	ids := make([]int, devices)
	for i := range ids {
		ids[i] = i
	}
	m := brew.NewModel("lenet_bench")
	p, err := dataparallel.Parallelize(m, dataparallel.Options{
		Devices: ids, Workspace: ws, ForwardBuilder: lenet,
		OptimizerBuilder: func(m *brew.Model) error {
			_, err := brew.BuildSGD(m, brew.SGDOptions{BaseLR: 0.01, Momentum: 0.9})
			return err
		},
	})
	if err != nil {
		b.Fatal(err)
	}
	n := devices * perDevice
	rng := rand.New(rand.NewPCG(1, 2))
	images := make([]float32, n*28*28)
	for i := range images {
		images[i] = rng.Float32()
	}
	labels := make([]int32, n)
	for i := range labels {
		labels[i] = int32(rng.IntN(10))
	}
	if err := p.Scatter(brew.Dataset{"data": blob.MustFromSlice(images, n, 1, 28, 28), "label": blob.MustFromSlice(labels, n)}); err != nil {
		b.Fatal(err)
	}
	if err := p.RunInitNet(); err != nil {
		b.Fatal(err)
	}
	if err := p.RunNet(2); err != nil { // warm up
		b.Fatal(err)
	}
	b.ResetTimer()
	if err := p.RunNet(b.N); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "images/s")
}

// BenchmarkLeNet trains LeNet on 1 and 2 CPU devices. Each device's
// kernels split their work over GOMAXPROCS/devices goroutines (the dag
// net's share per device, see workspace.KernelThreadsArg), so run it with
// -cpu to set the cores:
//
//	go test -bench LeNet -benchmem -cpu 1,2 ./examples/dataparallel
//
// Scaling: devices=1/batch=32 at -cpu 1 against devices=2/batch=32 at -cpu
// 2 (one core's worth per device, same per-device batch). Overhead:
// devices=1/batch=64 against devices=2/batch=32, both at -cpu 2 (same
// total batch).
func BenchmarkLeNet(b *testing.B) {
	for _, c := range []struct{ devices, perDevice int }{{1, 32}, {2, 32}, {1, 64}} {
		b.Run(fmt.Sprintf("devices=%d/batch=%d", c.devices, c.perDevice), func(b *testing.B) {
			benchmarkLeNet(b, c.devices, c.perDevice)
		})
	}
}

func TestDeviceFlag(t *testing.T) {
	for _, tc := range []struct {
		device, want string
	}{
		{"tpu", `-device "tpu": want cpu or cuda`},
		{"cuda", "-device cuda: no CUDA device"},
	} {
		if workspace.NumCudaDevices() > 0 && tc.device == "cuda" {
			continue // a CUDA build on a GPU machine has the device
		}
		c := testConfig(t.TempDir())
		c.device = tc.device
		if _, err := run(context.Background(), io.Discard, c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("-device %s: error %v, want one containing %q", tc.device, err, tc.want)
		}
	}
}

// TestInterruptAndResume trains in a child process, sends it SIGINT after
// step 100, and resumes: the child saves a checkpoint of its last finished
// step, names it and exits 130; the next run starts right after that step,
// so no step is lost.
func TestInterruptAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("imports MNIST and trains")
	}
	c := testConfig(os.Getenv("DATAPARALLEL_INTERRUPT_ROOT"))
	c.epochs, c.checkpointEvery = 100, 1000 // far longer than the test waits
	if c.root != "" {
		ctx := interrupt.Context()
		_, err := run(ctx, os.Stdout, c)
		interrupt.Exit(ctx, "dataparallel", err)
	}
	c.root = t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestInterruptAndResume$")
	cmd.Env = append(os.Environ(), "DATAPARALLEL_INTERRUPT_ROOT="+c.root)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewScanner(stdout)
	var output strings.Builder
	for lines.Scan() {
		output.WriteString(lines.Text() + "\n")
		if strings.HasPrefix(lines.Text(), "step   100") {
			if err := cmd.Process.Signal(os.Interrupt); err != nil {
				t.Fatal(err)
			}
		}
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != interrupt.ExitCode {
		t.Fatalf("child: %v, want exit status %d\nstdout:\n%s\nstderr:\n%s", err, interrupt.ExitCode, output.String(), stderr.String())
	}
	var last int
	var dir string
	for _, l := range strings.Split(output.String(), "\n") {
		if _, err := fmt.Sscanf(l, "interrupted after step %d: checkpoint %d is in %s", &last, &last, &dir); err == nil {
			break
		}
	}
	if last < 100 || !strings.HasPrefix(dir, c.root) {
		t.Fatalf("the child did not report its checkpoint under %s:\n%s", c.root, output.String())
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr does not say it was interrupted:\n%s", stderr.String())
	}

	c.epochs = last/32 + 1 // 32 steps per epoch: a few steps more
	res, err := run(context.Background(), io.Discard, c)
	if err != nil {
		t.Fatal(err)
	}
	if res.resumedFrom != int64(last) || res.steps != c.epochs*32-last {
		t.Errorf("resumed from %d and did %d steps; want from %d, the %d steps after it", res.resumedFrom, res.steps, last, c.epochs*32-last)
	}
}

// TestResumeOnOtherDevices: a checkpoint of 2 devices does not resume on
// 4 unless -reshard says so; then the step count goes on.
func TestResumeOnOtherDevices(t *testing.T) {
	if testing.Short() {
		t.Skip("imports MNIST and trains")
	}
	c := testConfig(t.TempDir())
	c.trainLimit, c.testLimit = 256, 100
	if _, err := run(context.Background(), io.Discard, c); err != nil { // 8 steps of 2×16
		t.Fatal(err)
	}
	c.devices, c.epochs = 4, 4 // 4 steps of 4×16 per epoch
	_, err := run(context.Background(), io.Discard, c)
	for _, want := range []string{"checkpoint 8 was trained on 2 devices, this run asks for 4", "-reshard"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("resume on 4 devices: error %v, want one saying %q", err, want)
		}
	}
	c.reshard = true
	var out strings.Builder
	res, err := run(context.Background(), &out, c)
	if err != nil {
		t.Fatal(err)
	}
	if res.resumedFrom != 8 || res.steps != 8 || !strings.Contains(out.String(), "resharding checkpoint 8 from 2 to 4 devices") {
		t.Errorf("resharded run: resumed from %d, %d steps; want 8 and 8 (steps 9 to 16)\n%s", res.resumedFrom, res.steps, out.String())
	}
}
