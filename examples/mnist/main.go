// Command mnist trains Caffe's LeNet on MNIST the way a Caffe2 user writes
// it: brew helpers for the layers, Model.AddGradientOperators, BuildSGD for
// the update, and brew.Train for the loop (shuffling every epoch,
// validation on the 10,000 test images, a progress bar and a
// training-progress plot).
//
//	go run ./examples/mnist      # 3 epochs, momentum SGD, lr 0.02 then 0.002 after 1900 steps
//	go run ./examples/mnist -iterations 200 -lr 0.1 -momentum 0 -wd 0 -policy fixed   # Caffe2's tutorial setting
//
// The MNIST files are read from data/mnist (or -data).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/examples/internal/interrupt"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/persist/mnist"
	"github.com/caffe2go/caffe2go/workspace"
)

// config is what the flags set.
type config struct {
	dataDir      string
	epochs       int
	iterations   int
	batch        int
	lr           float64
	momentum     float64
	weightDecay  float64
	policy       string
	gamma        float64
	power        float64
	stepsize     int
	validateStep int
	trainLimit   int
	plot         string
	seed         uint64
	progress     io.Writer
}

func main() {
	var c config
	flag.StringVar(&c.dataDir, "data", findData(), "folder with the MNIST idx files")
	flag.IntVar(&c.epochs, "epochs", 3, "passes over the 60,000 training images")
	flag.IntVar(&c.iterations, "iterations", 0, "stop after this many steps instead (0: run the epochs)")
	flag.IntVar(&c.batch, "batch", 64, "images per step")
	flag.Float64Var(&c.lr, "lr", 0.02, "base learning rate")
	flag.Float64Var(&c.momentum, "momentum", 0.9, "momentum (0: plain SGD)")
	flag.Float64Var(&c.weightDecay, "wd", 5e-4, "L2 weight decay (0: none)")
	flag.StringVar(&c.policy, "policy", "step", "learning-rate policy: inv (lr·(1+gamma·iter)^-power), step (lr·gamma^⌊iter/stepsize⌋) or fixed")
	flag.Float64Var(&c.gamma, "gamma", 0.1, "the policy's gamma (0: fixed rate)")
	flag.Float64Var(&c.power, "power", 0.75, "the inv policy's power")
	flag.IntVar(&c.stepsize, "stepsize", 1900, "the step policy's stepsize, in iterations (1900: the last third of 3 epochs at batch 64 runs at lr/10)")
	flag.IntVar(&c.validateStep, "validate-every", 0, "validate every this many steps (0: after every epoch)")
	flag.IntVar(&c.trainLimit, "train-limit", 0, "use only the first this many training images (0: all)")
	flag.StringVar(&c.plot, "plot", filepath.Join(os.TempDir(), "caffe2go-mnist-progress.png"), "write the training-progress plot here (.png or .svg; empty: none)")
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the shuffling and of the weight initialization")
	quiet := flag.Bool("quiet", false, "no progress bar")
	flag.Parse()
	if !*quiet {
		c.progress = os.Stderr
	}
	ctx := interrupt.Context()
	_, err := run(ctx, os.Stdout, c)
	interrupt.Exit(ctx, "mnist", err)
}

// findData returns data/mnist relative to the repository root whether the
// program runs from the root or from examples/mnist.
func findData() string {
	for _, dir := range []string{"data/mnist", "../../data/mnist"} {
		if _, err := os.Stat(filepath.Join(dir, "train-images-idx3-ubyte.gz")); err == nil {
			return dir
		}
	}
	return "data/mnist"
}

// result is what a run measured.
type result struct {
	accuracy float64
	history  *brew.History
}

func run(ctx context.Context, out io.Writer, c config) (*result, error) {
	if c.policy != "fixed" && c.policy != "inv" && c.policy != "step" {
		return nil, fmt.Errorf("unknown learning-rate policy %q (want inv, step or fixed)", c.policy)
	}
	train, err := loadMNIST(c.dataDir, "train", c.trainLimit)
	if err != nil {
		return nil, err
	}
	test, err := loadMNIST(c.dataDir, "t10k", 0)
	if err != nil {
		return nil, err
	}
	ws := workspace.New("")
	defer ws.Close()

	model := brew.NewModel("lenet_train")
	loss, err := addLeNet(model, true)
	if err != nil {
		return nil, err
	}
	if _, err := model.AddGradientOperators(loss); err != nil {
		return nil, err
	}
	if c.weightDecay > 0 {
		if err := brew.AddWeightDecay(model, float32(c.weightDecay)); err != nil {
			return nil, err
		}
	}
	sgd := brew.SGDOptions{BaseLR: float32(c.lr), Momentum: float32(c.momentum), Policy: "fixed"}
	switch {
	case c.policy == "fixed" || c.gamma == 0:
	case c.policy == "inv":
		sgd.Policy = "inv"
		sgd.LRArgs = []*netdef.Argument{netdef.ArgFloat("gamma", float32(c.gamma)), netdef.ArgFloat("power", float32(c.power))}
	case c.policy == "step":
		sgd.Policy = "step"
		sgd.LRArgs = []*netdef.Argument{netdef.ArgFloat("gamma", float32(c.gamma)), netdef.ArgInt("stepsize", int64(c.stepsize))}
	}
	if _, err := brew.BuildSGD(model, sgd); err != nil {
		return nil, err
	}
	testModel, err := brew.NewModelWith("lenet_test", brew.ModelOptions{ParamModel: model, NoInitParams: true})
	if err != nil {
		return nil, err
	}
	if _, err := addLeNet(testModel, false); err != nil {
		return nil, err
	}

	seedFills(model.InitNet.Proto(), c.seed)
	if err := ws.RunNetOnce(model.InitNet); err != nil {
		return nil, err
	}
	// CreateNet needs the inputs to exist: feed one batch's worth.
	if err := feedFirst(ws, train, c.batch); err != nil {
		return nil, err
	}
	for _, net := range []*netdef.Net{model.Net, testModel.Net} {
		if err := ws.CreateNet(net, false); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(out, "LeNet on MNIST: %d training and %d test images, batch %d, %d threads\n",
		train["data"].Dim(0), test["data"].Dim(0), c.batch, runtime.GOMAXPROCS(0))
	h, err := brew.Train(ctx, train, test, brew.TrainOptions{
		Workspace: ws, TrainNet: model.Net.Name(), TestNet: testModel.Net.Name(),
		Loss: "loss", Accuracy: "accuracy", BatchSize: c.batch, Epochs: c.epochs, Iterations: c.iterations,
		ValidateEvery: c.validateStep, Seed: c.seed, Progress: c.progress,
	})
	if err != nil {
		return nil, err
	}
	for i, d := range h.EpochTimes {
		fmt.Fprintf(out, "epoch %d: %.1f s\n", i+1, d.Seconds())
	}
	if len(h.Validation) == 0 {
		return nil, errors.New("no validation ran")
	}
	last := h.Validation[len(h.Validation)-1]
	fmt.Fprintf(out, "after %d iterations: test accuracy %.4f, test loss %.4f\n", last.Iteration, last.Accuracy, last.Loss)
	if c.plot != "" {
		if err := h.Plot(c.plot); err != nil {
			return nil, err
		}
		fmt.Fprintf(out, "training progress plot: %s\n", c.plot)
	}
	return &result{accuracy: last.Accuracy, history: h}, nil
}

// addLeNet adds Caffe2's MNIST LeNet (brew.LeNet) to m and returns the
// loss blob.
func addLeNet(m *brew.Model, train bool) (string, error) {
	// The images and labels are fed, not produced by an operator.
	m.AddExternalInputs("data", "label")
	_, loss := brew.LeNet(m, "data", "label")
	if err := m.Err(); err != nil {
		return "", fmt.Errorf("building LeNet (train %v): %w", train, err)
	}
	return loss, nil
}

// seedFills gives every random fill of the init net a seed derived from
// seed, so that runs are reproducible.
func seedFills(init *netdef.NetDef, seed uint64) {
	for i, op := range init.GetOp() {
		switch op.GetType() {
		case "XavierFill", "GaussianFill", "UniformFill", "MSRAFill":
			if op.DeviceOption == nil {
				op.DeviceOption = &netdef.DeviceOption{}
			}
			s := uint32(seed*1000003) + uint32(i)
			op.DeviceOption.RandomSeed = &s
		}
	}
}

// loadMNIST reads set ("train" or "t10k") as a dataset of float32 images
// scaled to [0, 1) (Caffe's LeNet scale, 1/256) and int32 labels, keeping
// the first limit images when limit > 0.
func loadMNIST(dir, set string, limit int) (brew.Dataset, error) {
	images, labels, err := mnist.Read(filepath.Join(dir, set+"-images-idx3-ubyte.gz"), filepath.Join(dir, set+"-labels-idx1-ubyte.gz"))
	if err != nil {
		return nil, err
	}
	n := images.Dim(0)
	if limit > 0 && limit < n {
		n = limit
	}
	pixels := blob.Data[uint8](images)[:n*28*28]
	x := make([]float32, len(pixels))
	for i, p := range pixels {
		x[i] = float32(p) / 256
	}
	return brew.Dataset{
		"data":  blob.MustFromSlice(x, n, 1, 28, 28),
		"label": blob.MustFromSlice(blob.Data[int32](labels)[:n], n),
	}, nil
}

// feedFirst feeds the first batch of d so that the nets can be created.
func feedFirst(ws *workspace.Workspace, d brew.Dataset, batch int) error {
	for name, t := range d {
		dims := append([]int{batch}, t.Dims()[1:]...)
		first, err := blob.New(t.DataType(), dims...)
		if err != nil {
			return err
		}
		if err := ws.FeedBlob(name, first); err != nil {
			return err
		}
	}
	return nil
}
