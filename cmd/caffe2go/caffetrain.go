package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/brew/dataparallel/caffesolver"
	"github.com/caffe2go/caffe2go/netdef/caffe"
	"github.com/caffe2go/caffe2go/persist/mnist"
	"github.com/caffe2go/caffe2go/workspace"
)

const caffeTrainUsage = `usage: caffe2go caffe train -solver solver.prototxt [flags]

Trains a Caffe net as Caffe's "caffe train" did (package brew/dataparallel/caffesolver):
the solver's net is built with brew in the TRAIN and TEST phases, trained
data-parallel on -devices CPU devices with Caffe's SGD solver, tested every
test_interval iterations and snapshotted every snapshot iterations (a
.caffemodel at snapshot_prefix and a checkpoint of the workspace store),
with Caffe's progress lines. Relative paths in the solver and the net
(net, snapshot_prefix, the Data layers' sources) are resolved in the
solver's folder (a net not found there by its path is looked for by its
file name); the flags override them. -snapshot resumes from a checkpoint
(an iteration snapshotted before, in place of Caffe's .solverstate); Ctrl-C
stops after the iteration in progress and snapshots it.

  caffe2go caffe convert-mnist data/mnist/train-images-idx3-ubyte.gz data/mnist/train-labels-idx1-ubyte.gz mnist_train_leveldb
  caffe2go caffe convert-mnist data/mnist/t10k-images-idx3-ubyte.gz data/mnist/t10k-labels-idx1-ubyte.gz mnist_test_leveldb
  caffe2go caffe train -solver lenet_solver.prototxt -train-db mnist_train_leveldb -test-db mnist_test_leveldb -devices 2

Flags:
`

func cmdCaffeTrain(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("caffe train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, caffeTrainUsage); fs.PrintDefaults() }
	solverPath := fs.String("solver", "", "the solver prototxt (required)")
	netPath := fs.String("net", "", "the train/test net prototxt, replacing the solver's net")
	weights := fs.String("weights", "", "a .caffemodel to start from (layers it lacks start from their fillers)")
	devices := fs.Int("devices", 1, "number of CPU devices; each runs batch_size examples per iteration")
	snapshot := fs.Int64("snapshot", -1, "resume from this checkpoint (an iteration snapshotted earlier) of the store")
	trainDB := fs.String("train-db", "", "the training data set (Datum records), replacing the TRAIN Data layer's source")
	testDB := fs.String("test-db", "", "the test data set, replacing the TEST Data layer's source")
	dbType := fs.String("db-type", "leveldb", "the DB type of -train-db and -test-db: leveldb, or lmdb (in builds with -tags lmdb)")
	prefix := fs.String("snapshot-prefix", "", "replaces the solver's snapshot_prefix")
	root := fs.String("root", "", "workspace root, whose store holds the checkpoints (default: the snapshot prefix's folder)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *solverPath == "" || fs.NArg() > 0 {
		fs.Usage()
		return usageError("caffe train: want -solver solver.prototxt and no arguments")
	}
	sp, err := caffe.ReadSolver(*solverPath)
	if err != nil {
		return err
	}
	o := caffesolver.Options{Solver: sp, Dir: filepath.Dir(*solverPath), Devices: *devices, SnapshotPrefix: *prefix, Log: stdout}
	if *netPath != "" {
		if o.Net, err = caffe.ReadNet(*netPath); err != nil {
			return err
		}
	}
	if *weights != "" {
		if o.Weights, err = caffe.ReadWeights(*weights); err != nil {
			return err
		}
	}
	for _, d := range []struct {
		path string
		ds   *brew.Dataset
	}{{*trainDB, &o.TrainData}, {*testDB, &o.TestData}} {
		if d.path == "" {
			continue
		}
		if *d.ds, err = caffesolver.ReadDatumDB(*dbType, d.path, 0); err != nil {
			return err
		}
	}
	if *root == "" {
		p := o.SnapshotPrefix
		if p == "" {
			p = sp.GetSnapshotPrefix()
		}
		*root = filepath.Dir(p)
		if !filepath.IsAbs(*root) && o.SnapshotPrefix == "" {
			*root = filepath.Join(o.Dir, *root)
		}
	}
	o.Workspace = workspace.New(*root)
	defer o.Workspace.Close()
	s, err := caffesolver.New(o)
	if err != nil {
		return err
	}
	if *snapshot >= 0 {
		if err := s.Restore(*snapshot); err != nil {
			return err
		}
	}
	ctx, stop := interruptible()
	defer stop()
	begin, start := time.Now(), s.Iter()
	if _, err := s.Solve(ctx); err != nil {
		if !errors.Is(context.Cause(ctx), errInterrupted) {
			return err
		}
		// Caffe snapshots when a SIGINT stops it.
		if serr := s.Snapshot(); serr != nil {
			return fmt.Errorf("%w; the snapshot at iteration %d failed: %v", err, s.Iter(), serr)
		}
		fmt.Fprintf(stdout, "Optimization stopped early: resume with -snapshot %d\n", s.Iter())
		return err
	}
	fmt.Fprintf(stdout, "%d iterations on %d device(s) in %v\n", s.Iter()-start, s.Devices(), time.Since(begin).Round(time.Millisecond))
	return nil
}

const caffeConvertMNISTUsage = `usage: caffe2go caffe convert-mnist [-db-type leveldb] images-idx labels-idx out_db

Writes the MNIST idx files (gzip-compressed or not) into a new DB of Caffe
Datum records keyed %08d, as Caffe's convert_mnist_data does, for the Data
layers of "caffe train".

Flags:
`

func cmdCaffeConvertMNIST(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("caffe convert-mnist", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, caffeConvertMNISTUsage); fs.PrintDefaults() }
	dbType := fs.String("db-type", "leveldb", "DB type: leveldb, or lmdb (in builds with -tags lmdb)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() != 3 {
		fs.Usage()
		return usageError("caffe convert-mnist: want images-idx labels-idx out_db")
	}
	images, labels, err := mnist.Read(fs.Arg(0), fs.Arg(1))
	if err != nil {
		return err
	}
	n, err := caffesolver.WriteDatumDB(*dbType, fs.Arg(2), images, labels)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "wrote %d records to %s (%s)\n", n, fs.Arg(2), *dbType)
	return nil
}
