// Command dataparallel trains LeNet on MNIST on several CPU devices with
// brew/dataparallel, the way Caffe2's data_parallel_model trainers do: each
// device (cpu_0, cpu_1, …) runs a replica on its share of every batch, the
// gradients are all-reduced, and every device applies the same momentum
// SGD update. It saves checkpoints to the workspace's embedded store, resumes
// from the latest one when started again, and ends with the accuracy on
// the 10,000 test images.
//
//	go run ./examples/dataparallel                 # 2 devices, 1 epoch
//	go run ./examples/dataparallel -devices 4 -epochs 2
//	go run ./examples/dataparallel -fresh          # ignore earlier checkpoints
//
// Ctrl-C (or SIGTERM) stops it after the step in progress: it saves a
// checkpoint of that step, says where, and exits with status 130, so that
// the next run resumes with no step lost (a second Ctrl-C exits at once). A
// checkpoint records the number of devices; resuming with another
// -devices is refused unless -reshard is given, which continues the step
// count on the new devices as Caffe2 does (each step then covers devices ×
// batch examples of the new count).
//
// Several processes, on one machine or several, train together with Gloo
// (a build with -tags gloo, and libgloo-dev): each gets -shard-id, the
// same -num-shards and a -rendezvous where they meet, a directory all of
// them reach (file:///shared/dir) or a Redis server (redis://host:port).
// Each shard trains on its own part of the training set; shard 0 writes
// the checkpoints, and on a restart every shard resumes from the one shard
// 0 finds. A store refuses the keys of an earlier run: restart with a
// fresh directory or a new ?prefix= (see the README).
package main

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/brew/dataparallel"
	"github.com/caffe2go/caffe2go/examples/internal/interrupt"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/persist"
	"github.com/caffe2go/caffe2go/persist/mnist"
	"github.com/caffe2go/caffe2go/workspace"
)

// config is what the flags set.
type config struct {
	device          string // "cpu" or "cuda"
	devices         int
	epochs          int
	batch           int // per device
	lr              float64
	engine          string
	root            string
	trainImages     string
	trainLabels     string
	testImages      string
	testLabels      string
	trainLimit      int // 0: all training images
	testLimit       int // 0: all test images
	checkpointEvery int
	fresh           bool
	reshard         bool
	shardID         int
	numShards       int
	rendezvous      string // file:///dir or redis://host:port, with -num-shards > 1
	iface           string // network interface between shards
	hostname        string // address to listen on for the other shards
	timeout         time.Duration
	coalesce        bool // one all-reduce of every gradient across shards per step
	logEvery        int  // print the loss every logEvery steps (0: 100)
}

func main() {
	var c config
	flag.StringVar(&c.device, "device", "cpu", "cpu, or cuda for GPUs (needs a build with -tags cuda; more devices than GPUs share them)")
	flag.IntVar(&c.devices, "devices", 2, "number of devices (cpu_0 … cpu_N-1, or gpu_0 … gpu_N-1)")
	flag.IntVar(&c.epochs, "epochs", 1, "passes over the training set")
	flag.IntVar(&c.batch, "batch", 32, "examples per device per step (the total batch is devices × batch)")
	flag.Float64Var(&c.lr, "lr", 0.01, "learning rate (momentum 0.9, weight decay 1e-4)")
	flag.StringVar(&c.engine, "engine", "SUM_TREE", "all-reduce engine: SUM_TREE or RING")
	flag.StringVar(&c.root, "root", "examples/dataparallel/out", "workspace root: the MNIST DBs and the checkpoint store")
	flag.StringVar(&c.trainImages, "train-images", "data/mnist/train-images-idx3-ubyte.gz", "training images (idx)")
	flag.StringVar(&c.trainLabels, "train-labels", "data/mnist/train-labels-idx1-ubyte.gz", "training labels (idx)")
	flag.StringVar(&c.testImages, "test-images", "data/mnist/t10k-images-idx3-ubyte.gz", "test images (idx)")
	flag.StringVar(&c.testLabels, "test-labels", "data/mnist/t10k-labels-idx1-ubyte.gz", "test labels (idx)")
	flag.IntVar(&c.trainLimit, "train-limit", 0, "use only the first n training images (0: all)")
	flag.IntVar(&c.testLimit, "test-limit", 0, "use only the first n test images (0: all)")
	flag.IntVar(&c.checkpointEvery, "checkpoint-every", 200, "save a checkpoint every n steps (and at the end)")
	flag.BoolVar(&c.fresh, "fresh", false, "start from scratch even if the store holds a checkpoint")
	flag.BoolVar(&c.reshard, "reshard", false, "resume a checkpoint saved with another -devices count")
	flag.IntVar(&c.shardID, "shard-id", 0, "this process's shard, 0 … num-shards-1 (multi-process training, -tags gloo)")
	flag.IntVar(&c.numShards, "num-shards", 1, "processes training together; each needs -shard-id and the same -rendezvous")
	flag.StringVar(&c.rendezvous, "rendezvous", "", "where the shards meet: file:///shared/dir or redis://host:port (add ?prefix=run2 for a fresh run in the same place)")
	flag.StringVar(&c.iface, "interface", "", "network interface the shards connect through (eth0); empty: the host name's address")
	flag.StringVar(&c.hostname, "hostname", "", "address this shard listens on for the others (127.0.0.1 for shards on one machine); empty: see -interface")
	flag.DurationVar(&c.timeout, "timeout", 30*time.Second, "deadline of every collective across shards: a shard that dies or hangs stops the others within it")
	flag.IntVar(&c.logEvery, "log-every", 100, "print the loss every n steps")
	flag.BoolVar(&c.coalesce, "coalesce", true, "all-reduce the gradients across shards as one buffer per step (false: one all-reduce per gradient, as Caffe2)")
	flag.Parse()
	ctx := interrupt.Context()
	_, err := run(ctx, os.Stdout, c)
	interrupt.Exit(ctx, "dataparallel", withoutPackagePrefix(err))
}

// withoutPackagePrefix drops the "dataparallel: " that brew/dataparallel's
// errors begin with, as this command has the same name and
// interrupt.Exit writes it before the error already.
func withoutPackagePrefix(err error) error {
	if err == nil || !strings.HasPrefix(err.Error(), packagePrefix) {
		return err
	}
	return prefixless{err}
}

const packagePrefix = "dataparallel: "

// prefixless is an error whose message lacks the package prefix; it
// unwraps to the error it shortens.
type prefixless struct{ err error }

func (e prefixless) Error() string { return strings.TrimPrefix(e.err.Error(), packagePrefix) }
func (e prefixless) Unwrap() error { return e.err }

// devicesBlob is the blob, saved with every checkpoint, that records the
// number of devices the checkpoint was trained on.
const devicesBlob = "dataparallel_example/num_devices"

// result is what a run did.
type result struct {
	resumedFrom    int64 // checkpoint id resumed from; -1 for none
	steps          int   // steps done by this run
	lastStep       int   // the step count at the end
	firstLoss      float64
	lastLoss       float64
	testAccuracy   float64
	imagesPerSec   float64
	testedExamples int
}

// run trains and evaluates as c says, writing progress to out, until done
// or ctx ends (then it checkpoints the last finished step).
func run(ctx context.Context, out io.Writer, c config) (res result, err error) {
	if c.devices < 1 || c.batch < 1 || c.epochs < 1 {
		return res, fmt.Errorf("devices, batch and epochs must be positive")
	}
	devType, err := deviceType(c)
	if err != nil {
		return res, err
	}
	if err := os.MkdirAll(c.root, 0o755); err != nil {
		return res, err
	}
	train, err := loadMNIST(out, c.root, "mnist-train", c.trainImages, c.trainLabels, c.trainLimit)
	if err != nil {
		return res, err
	}
	test, err := loadMNIST(out, c.root, "mnist-test", c.testImages, c.testLabels, c.testLimit)
	if err != nil {
		return res, err
	}
	var rdv *dataparallel.Rendezvous
	if c.numShards > 1 {
		if rdv, err = rendezvous(c); err != nil {
			return res, err
		}
		train = shardRows(train, c.shardID, c.numShards)
	}
	devices := make([]int, c.devices)
	for i := range devices {
		devices[i] = i
	}
	ws := workspace.New(c.root)
	defer func() {
		if cerr := ws.Close(); err == nil {
			err = cerr
		}
	}()

	m := brew.NewModel("lenet_train")
	p, err := dataparallel.Parallelize(m, dataparallel.Options{
		DeviceType:      devType,
		Devices:         devices,
		Workspace:       ws,
		AllreduceEngine: c.engine,
		Rendezvous:      rdv,
		ForwardBuilder:  lenet,
		OptimizerBuilder: func(m *brew.Model) error {
			if err := brew.AddWeightDecay(m, 1e-4); err != nil {
				return err
			}
			_, err := brew.BuildSGD(m, brew.SGDOptions{BaseLR: float32(c.lr), Momentum: 0.9})
			return err
		},
	})
	if err != nil {
		return res, err
	}
	loader, err := dataparallel.NewLoader(p, train, dataparallel.LoaderOptions{BatchSize: c.devices * c.batch, Shuffle: true, Seed: 1})
	if err != nil {
		return res, err
	}
	if err := loader.Next(); err != nil { // CreateNet needs the inputs
		return res, err
	}
	if err := p.RunInitNet(); err != nil {
		return res, err
	}

	// Resume: load the master's blobs, copy them to the other devices and
	// replay the data order up to the checkpoint.
	start := 0
	res.resumedFrom = -1
	id, ok, err := latestCheckpoint(out, ws, p, c)
	if err != nil {
		return res, err
	}
	if ok {
		if err := p.FinalizeAfterCheckpoint(); err != nil {
			return res, err
		}
		res.resumedFrom, start = id, int(id)
		for range start {
			if err := loader.Next(); err != nil {
				return res, err
			}
		}
		fmt.Fprintf(out, "resumed from checkpoint %d\n", id)
	}

	total := c.epochs * loader.BatchesPerEpoch()
	if err := ws.FeedBlob(devicesBlob, int64(c.devices)); err != nil {
		return res, err
	}
	saved := start
	save := func(step int) error {
		blobs := append(p.CheckpointParams(), devicesBlob)
		if err := ws.SaveCheckpoint(int64(step), blobs, persist.Iteration(int64(step))); err != nil {
			return err
		}
		store, err := ws.Store()
		if err != nil {
			return err
		}
		saved = step
		return store.KeepLast(3)
	}
	if start >= total {
		fmt.Fprintf(out, "the checkpoint at step %d already covers the %d steps asked for: raise -epochs to train on, or pass -fresh to start over\n", start, total)
	} else {
		fmt.Fprintf(out, "training LeNet on %d %v devices, %d examples per step, steps %d to %d\n",
			c.devices, devType, c.devices*c.batch, start+1, total)
	}
	logEvery := c.logEvery
	if logEvery <= 0 {
		logEvery = 100
	}
	begin, beginCPU := time.Now(), cpuTime()
	for step := start + 1; step <= total; step++ {
		if ctx.Err() != nil {
			return res, interrupted(ctx, out, ws, step-1, saved, save)
		}
		if step > start+1 {
			if err := loader.Next(); err != nil {
				return res, err
			}
		}
		if err := p.RunNet(1); err != nil {
			return res, fmt.Errorf("step %d: %w", step, err)
		}
		res.steps++
		loss, err := meanOverDevices(ws, p, "loss")
		if err != nil {
			return res, err
		}
		if res.steps == 1 {
			res.firstLoss = loss
		}
		res.lastLoss = loss
		if step%logEvery == 0 || step == total {
			acc, err := meanOverDevices(ws, p, "accuracy")
			if err != nil {
				return res, err
			}
			fmt.Fprintf(out, "step %5d  loss %.4f  batch accuracy %.3f\n", step, loss, acc)
		}
		if (step%c.checkpointEvery == 0 || step == total) && p.IsCheckpointWriter() {
			if err := save(step); err != nil {
				return res, fmt.Errorf("checkpoint at step %d: %w", step, err)
			}
		}
	}
	res.lastStep = max(total, start)
	if res.steps > 0 {
		elapsed := time.Since(begin)
		res.imagesPerSec = float64(res.steps*c.devices*c.batch) / elapsed.Seconds()
		fmt.Fprintf(out, "%d steps in %v: %.0f images/s, %.2f s of CPU\n", res.steps, elapsed.Round(time.Millisecond), res.imagesPerSec,
			(cpuTime() - beginCPU).Seconds())
	}
	if res.testAccuracy, res.testedExamples, err = evaluate(ctx, ws, devType, devices, test); err != nil {
		return res, err
	}
	fmt.Fprintf(out, "test accuracy %.4f on %d images\n", res.testAccuracy, res.testedExamples)
	return res, nil
}

// interrupted ends a run whose context is done after step last: it saves a
// checkpoint of that step unless one exists, says where, and returns the
// context's error.
func interrupted(ctx context.Context, out io.Writer, ws *workspace.Workspace, last, saved int, save func(int) error) error {
	if last > saved {
		if err := save(last); err != nil {
			return fmt.Errorf("interrupted after step %d, and its checkpoint failed: %w", last, err)
		}
	}
	dir, err := ws.StoreDir()
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "interrupted after step %d: checkpoint %d is in %s; run again to resume\n", last, last, dir)
	return fmt.Errorf("training stopped after step %d: %w", last, ctx.Err())
}

// latestCheckpoint loads the latest checkpoint unless c.fresh, and
// reports its id. Across shards, shard 0 loads its own and sends its id
// and blobs to the others, so that every shard resumes from it.
func latestCheckpoint(out io.Writer, ws *workspace.Workspace, p *dataparallel.Parallel, c config) (int64, bool, error) {
	id, ok := int64(-1), false
	if p.IsCheckpointWriter() && !c.fresh {
		latest, found, err := ws.LatestCheckpoint()
		if err != nil {
			return 0, false, err
		}
		if found {
			if err := ws.LoadCheckpoint(latest); err != nil {
				return 0, false, err
			}
			if err := checkDevices(out, ws, latest, c); err != nil {
				return 0, false, err
			}
			id, ok = latest, true
		}
	}
	if p.NumShards() == 1 {
		return id, ok, nil
	}
	if err := ws.FeedBlob(resumeBlob, id); err != nil {
		return 0, false, err
	}
	if err := p.BroadcastAcrossShards(resumeBlob); err != nil {
		return 0, false, err
	}
	t, err := ws.FetchBlob(resumeBlob)
	if err != nil {
		return 0, false, err
	}
	if id = blob.Data[int64](t)[0]; id < 0 {
		return id, false, nil
	}
	return id, true, p.BroadcastAcrossShards(p.CheckpointParams()...)
}

// resumeBlob carries the checkpoint id shard 0 resumes from to the others.
const resumeBlob = "resume_checkpoint_id"

// checkDevices refuses to resume checkpoint id, trained on another number
// of devices, unless c.reshard says to.
func checkDevices(out io.Writer, ws *workspace.Workspace, id int64, c config) error {
	t, err := ws.FetchBlob(devicesBlob)
	if err != nil {
		return fmt.Errorf("checkpoint %d does not record its number of devices (%w): pass -fresh to start over", id, err)
	}
	saved := int(blob.Data[int64](t)[0])
	switch {
	case saved == c.devices:
		return nil
	case !c.reshard:
		return fmt.Errorf("checkpoint %d was trained on %d devices, this run asks for %d: a step would cover %d examples instead of %d; pass -devices %d, or -reshard to continue on %d devices, or -fresh to start over",
			id, saved, c.devices, c.devices*c.batch, saved*c.batch, saved, c.devices)
	}
	fmt.Fprintf(out, "resharding checkpoint %d from %d to %d devices: the step count goes on, each step now covers %d examples instead of %d\n",
		id, saved, c.devices, c.devices*c.batch, saved*c.batch)
	return nil
}

// lenet builds Caffe2's MNIST LeNet (brew.LeNet) on the current device and
// returns its loss scaled by lossScale.
func lenet(m *brew.Model, lossScale float32) ([]string, error) {
	m.AddExternalInputs("data", "label")
	_, loss := brew.LeNet(m, "data", "label")
	op := m.Op("Scale", []string{loss}, []string{"loss_scaled"}, netdef.ArgFloat("scale", lossScale))
	return op.GetOutput(), m.Err()
}

// evaluate runs a forward-only replica per device on the trained
// parameters (which are the same on every device) over the test set and
// returns the accuracy and the number of examples it covered (whole
// batches of 100 per device).
func evaluate(ctx context.Context, ws *workspace.Workspace, devType netdef.DeviceType, devices []int, test brew.Dataset) (float64, int, error) {
	m, err := brew.NewModelWith("lenet_test", brew.ModelOptions{NoInitParams: true})
	if err != nil {
		return 0, 0, err
	}
	p, err := dataparallel.Parallelize(m, dataparallel.Options{
		DeviceType: devType, Devices: devices, Workspace: ws,
		ForwardBuilder: lenet,
	})
	if err != nil {
		return 0, 0, err
	}
	n, err := test.Len()
	if err != nil {
		return 0, 0, err
	}
	batch := min(100*len(devices), n-n%len(devices))
	loader, err := dataparallel.NewLoader(p, test, dataparallel.LoaderOptions{BatchSize: batch})
	if err != nil {
		return 0, 0, err
	}
	var sum float64
	for i := range loader.BatchesPerEpoch() {
		if err := loader.Next(); err != nil {
			return 0, 0, err
		}
		if i == 0 {
			if err := p.RunInitNet(); err != nil {
				return 0, 0, err
			}
		}
		if err := p.RunNetContext(ctx, 1); err != nil {
			return 0, 0, err
		}
		acc, err := meanOverDevices(ws, p, "accuracy")
		if err != nil {
			return 0, 0, err
		}
		sum += acc
	}
	return sum / float64(loader.BatchesPerEpoch()), loader.BatchesPerEpoch() * batch, nil
}

// meanOverDevices averages a scalar blob over the devices' copies.
func meanOverDevices(ws *workspace.Workspace, p *dataparallel.Parallel, name string) (float64, error) {
	var sum float64
	for _, d := range p.Devices() {
		v, err := ws.FetchBlob(p.DeviceBlob(d, name))
		if err != nil {
			return 0, err
		}
		sum += v.AsFloat64s()[0]
	}
	return sum / float64(len(p.Devices())), nil
}

// loadMNIST imports the idx files into a dataset DB under root (once;
// mnist.Import), reads the first limit records (0: all) back
// through CreateDB and TensorProtosDBInput, and returns them as a dataset:
// "data" float32 [n, 1, 28, 28] scaled to [0, 1) and "label" int32 [n].
func loadMNIST(out io.Writer, root, name, images, labels string, limit int) (brew.Dataset, error) {
	db := filepath.Join(root, name)
	if _, err := os.Stat(db); os.IsNotExist(err) {
		n, err := mnist.Import(images, labels, persist.DefaultDBType, db)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(out, "imported %d records into %s\n", n, db)
	}
	count, err := countMNIST(images)
	if err != nil {
		return nil, err
	}
	if limit > 0 {
		count = min(count, limit)
	}
	ws := workspace.New(root)
	defer ws.Close()
	if err := ws.RunOperatorOnce(netdef.NewOperator("CreateDB", nil, []string{"reader"},
		netdef.ArgString("db", name), netdef.ArgString("db_type", persist.DefaultDBType))); err != nil {
		return nil, err
	}
	if err := ws.RunOperatorOnce(netdef.NewOperator("TensorProtosDBInput", []string{"reader"}, []string{"bytes", "label"},
		netdef.ArgInt("batch_size", int64(count)))); err != nil {
		return nil, err
	}
	raw, err := ws.FetchBlob("bytes")
	if err != nil {
		return nil, err
	}
	label, err := ws.FetchBlob("label")
	if err != nil {
		return nil, err
	}
	pixels := blob.Data[uint8](raw)
	data := make([]float32, len(pixels))
	for i, v := range pixels {
		data[i] = float32(v) / 256
	}
	images32, err := blob.FromSlice(data, count, 1, 28, 28)
	if err != nil {
		return nil, err
	}
	return brew.Dataset{"data": images32, "label": label}, nil
}

// countMNIST reads the number of images from the header of an idx file,
// gzipped or not (magic number, then the count, both big-endian).
func countMNIST(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	br := bufio.NewReader(f)
	var r io.Reader = br
	if magic, err := br.Peek(2); err == nil && magic[0] == 0x1f && magic[1] == 0x8b {
		if r, err = gzip.NewReader(br); err != nil {
			return 0, fmt.Errorf("%s: %w", path, err)
		}
	}
	var header [8]byte
	if _, err := io.ReadFull(r, header[:]); err != nil {
		return 0, fmt.Errorf("%s: reading the idx header: %w", path, err)
	}
	return int(binary.BigEndian.Uint32(header[4:])), nil
}

// shareGPUs lays logical devices over the machine's GPUs
// (devicescope/cuda.ShareGPUs); nil in builds without the cuda tag.
var shareGPUs func(n int)

// deviceType reads -device: for cuda it checks that the build has CUDA and
// lays -devices logical devices over fewer GPUs when it must.
func deviceType(c config) (netdef.DeviceType, error) {
	switch c.device {
	case "cpu":
		return netdef.CPU, nil
	case "cuda":
		n := workspace.NumCudaDevices()
		if n == 0 || shareGPUs == nil {
			return 0, fmt.Errorf("-device cuda: no CUDA device (build with -tags cuda and run on a machine with an NVIDIA GPU; see the README)")
		}
		if c.devices > n {
			shareGPUs(c.devices)
		}
		return netdef.CUDA, nil
	}
	return 0, fmt.Errorf("-device %q: want cpu or cuda", c.device)
}
