package brew

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sort"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/workspace"
)

// Dataset is a set of examples held in memory: each entry maps a blob a
// net reads (for example "data" and "label") to a tensor whose first
// dimension indexes the examples. All entries have the same number of
// examples.
type Dataset map[string]*blob.Tensor

// Len returns the number of examples, or an error if the entries
// disagree.
func (d Dataset) Len() (int, error) {
	n := -1
	for _, name := range d.names() {
		t := d[name]
		if t.NumDims() == 0 {
			return 0, fmt.Errorf("brew: dataset blob %q is a scalar; its first dimension must index the examples", name)
		}
		if n >= 0 && t.Dim(0) != n {
			return 0, fmt.Errorf("brew: dataset blob %q has %d examples, others have %d", name, t.Dim(0), n)
		}
		n = t.Dim(0)
	}
	if n < 0 {
		return 0, errors.New("brew: empty dataset: no blobs")
	}
	return n, nil
}

func (d Dataset) names() []string {
	names := make([]string, 0, len(d))
	for name := range d {
		names = append(names, name)
	}
	sort.Strings(names)
	return names
}

// TrainOptions configure Train. Zero values take the defaults given.
type TrainOptions struct {
	// Workspace holds the nets and parameters; nil means the current
	// workspace.
	Workspace *workspace.Workspace
	// TrainNet is the created net that does one training step (forward,
	// backward and update) on the batch fed into the dataset's blobs.
	TrainNet string
	// TestNet, if set, is a created forward-only net (is_test) sharing the
	// parameters, run over the validation set.
	TestNet string
	// Loss and Accuracy are the blobs the nets write the batch loss and
	// accuracy into. Loss defaults to "loss"; Accuracy may be empty.
	Loss, Accuracy string
	// BatchSize is the number of examples per step (default 64).
	BatchSize int
	// Epochs is the number of passes over the training set (default 1).
	// Iterations, when positive, stops training after that many steps
	// instead.
	Epochs, Iterations int
	// NoShuffle keeps the training set in order; by default it is
	// shuffled at the start of every epoch with a generator seeded by Seed.
	NoShuffle bool
	Seed      uint64
	// ValidateEvery runs the validation set every that many iterations; 0
	// means at the end of every epoch.
	ValidateEvery int
	// Progress, if set, receives a progress bar (a terminal, typically
	// os.Stderr).
	Progress io.Writer
	// LRInjection, if set, is the blob of an optimizer built with
	// allow_lr_injection (brew's "lr_injection"); Train sets it to
	// BatchSize / ReferenceBatchSize before the first step, scaling the
	// learning rate linearly with the batch size.
	LRInjection        string
	ReferenceBatchSize int
}

// Point is one entry of a training history.
type Point struct {
	// Iteration is the number of training steps done (1-based).
	Iteration int
	// Epoch is the fractional number of passes over the training set.
	Epoch float64
	// Loss and Accuracy are the batch's (training) or the whole validation
	// set's (validation); Accuracy is 0 without an accuracy blob.
	Loss, Accuracy float64
}

// History records a training run.
type History struct {
	// Train has one point per step; Validation one per validation run.
	Train, Validation []Point
	// EpochTimes are the wall times of the completed epochs.
	EpochTimes []time.Duration
}

// Train runs the training loop over train, validating on validation (nil
// for none), as TrainOptions say, and returns what it saw. It stops at the
// first error, which names the net and the iteration.
//
// Once ctx is done Train starts no further step: the step in progress
// finishes (so the parameters are never left half-updated), a validation
// in progress stops, and Train returns the history of the finished steps
// (len(History.Train) of them) with an error wrapping ctx.Err(). A program
// that stops on a signal can save a checkpoint of the last finished step.
func Train(ctx context.Context, train, validation Dataset, o TrainOptions) (*History, error) {
	ws := o.Workspace
	if ws == nil {
		ws = workspace.Current()
	}
	if o.TrainNet == "" {
		return nil, errors.New("brew: Train needs TrainOptions.TrainNet")
	}
	if ws.GetNet(o.TrainNet) == nil {
		return nil, fmt.Errorf("brew: Train: net %q is not created in the workspace", o.TrainNet)
	}
	if o.TestNet != "" && ws.GetNet(o.TestNet) == nil {
		return nil, fmt.Errorf("brew: Train: test net %q is not created in the workspace", o.TestNet)
	}
	if o.Loss == "" {
		o.Loss = "loss"
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 64
	}
	if o.Epochs <= 0 {
		o.Epochs = 1
	}
	n, err := train.Len()
	if err != nil {
		return nil, err
	}
	if n < o.BatchSize {
		return nil, fmt.Errorf("brew: Train: %d training examples, fewer than one batch of %d", n, o.BatchSize)
	}
	if validation != nil {
		if _, err := validation.Len(); err != nil {
			return nil, err
		}
	}
	if o.LRInjection != "" {
		if o.ReferenceBatchSize <= 0 {
			return nil, errors.New("brew: Train: LRInjection needs ReferenceBatchSize")
		}
		scale := float32(o.BatchSize) / float32(o.ReferenceBatchSize)
		if err := ws.FeedBlob(o.LRInjection, blob.MustFromSlice([]float32{scale}, 1)); err != nil {
			return nil, err
		}
	}
	stepsPerEpoch := n / o.BatchSize
	total := o.Epochs * stepsPerEpoch
	if o.Iterations > 0 {
		total = o.Iterations
	}
	var bar *progressbar.ProgressBar
	if o.Progress != nil {
		bar = progressbar.NewOptions(total,
			progressbar.OptionSetWriter(o.Progress),
			progressbar.OptionSetDescription("training"),
			progressbar.OptionShowCount(),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(o.Progress) }),
		)
	}

	feeder := newFeeder(ws, train)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	rng := rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))
	h := &History{}
	validate := func(it int) error {
		if validation == nil || o.TestNet == "" {
			return nil
		}
		loss, acc, err := Evaluate(ctx, ws, o.TestNet, validation, o.BatchSize, o.Loss, o.Accuracy)
		if err != nil {
			return fmt.Errorf("brew: validation after iteration %d: %w", it, err)
		}
		h.Validation = append(h.Validation, Point{Iteration: it, Epoch: float64(it) / float64(stepsPerEpoch), Loss: loss, Accuracy: acc})
		if bar != nil {
			bar.Describe(fmt.Sprintf("training (validation accuracy %.4f)", acc))
		}
		return nil
	}
	it := 0
	for it < total {
		start := time.Now()
		if !o.NoShuffle {
			rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		for s := 0; s < stepsPerEpoch && it < total; s++ {
			if err := ctx.Err(); err != nil {
				return h, fmt.Errorf("brew: training stopped after %d iterations: %w", it, err)
			}
			if err := feeder.feed(order[s*o.BatchSize : (s+1)*o.BatchSize]); err != nil {
				return h, err
			}
			if err := ws.RunNet(o.TrainNet, 1); err != nil {
				return h, fmt.Errorf("brew: training iteration %d: %w", it+1, err)
			}
			it++
			p := Point{Iteration: it, Epoch: float64(it) / float64(stepsPerEpoch)}
			if p.Loss, err = scalar(ws, o.Loss); err != nil {
				return h, err
			}
			if o.Accuracy != "" {
				if p.Accuracy, err = scalar(ws, o.Accuracy); err != nil {
					return h, err
				}
			}
			h.Train = append(h.Train, p)
			if bar != nil {
				bar.Add(1)
			}
			if o.ValidateEvery > 0 && it%o.ValidateEvery == 0 {
				if err := validate(it); err != nil {
					return h, err
				}
			}
		}
		h.EpochTimes = append(h.EpochTimes, time.Since(start))
		if o.ValidateEvery == 0 {
			if err := validate(it); err != nil {
				return h, err
			}
		}
	}
	return h, nil
}

// Evaluate runs the forward net over data in batches of batchSize (the last
// one smaller) and returns the example-weighted mean of the loss and
// accuracy blobs (accuracy 0 when accuracyBlob is empty; the loss 0 when
// lossBlob is empty or the net does not write it). It stops, with an error
// wrapping ctx.Err(), once ctx is done.
func Evaluate(ctx context.Context, ws *workspace.Workspace, net string, data Dataset, batchSize int, lossBlob, accuracyBlob string) (loss, accuracy float64, err error) {
	if ws == nil {
		ws = workspace.Current()
	}
	n, err := data.Len()
	if err != nil {
		return 0, 0, err
	}
	if batchSize <= 0 {
		return 0, 0, fmt.Errorf("brew: Evaluate: batch size %d", batchSize)
	}
	f := newFeeder(ws, data)
	rows := make([]int, 0, batchSize)
	for start := 0; start < n; start += batchSize {
		rows = rows[:0]
		for i := start; i < min(start+batchSize, n); i++ {
			rows = append(rows, i)
		}
		if err := f.feed(rows); err != nil {
			return 0, 0, err
		}
		if err := ws.RunNetContext(ctx, net, 1); err != nil {
			return 0, 0, fmt.Errorf("brew: evaluating examples %d–%d: %w", start, start+len(rows)-1, err)
		}
		w := float64(len(rows)) / float64(n)
		if lossBlob != "" && ws.HasBlob(lossBlob) {
			v, err := scalar(ws, lossBlob)
			if err != nil {
				return 0, 0, err
			}
			loss += w * v
		}
		if accuracyBlob != "" {
			v, err := scalar(ws, accuracyBlob)
			if err != nil {
				return 0, 0, err
			}
			accuracy += w * v
		}
	}
	return loss, accuracy, nil
}

// scalar reads a one-element float blob.
func scalar(ws *workspace.Workspace, name string) (float64, error) {
	b := ws.GetBlob(name)
	if b == nil || !b.IsTensor() {
		return 0, fmt.Errorf("brew: blob %q does not exist or is not a tensor", name)
	}
	t := b.Tensor()
	if t.Size() != 1 {
		return 0, fmt.Errorf("brew: blob %q has shape %v, want one element", name, t.Dims())
	}
	return t.AsFloat64s()[0], nil
}

// feeder copies rows of a dataset into the workspace's blobs in place, so
// a training step in steady state allocates nothing.
type feeder struct {
	ws    *workspace.Workspace
	data  Dataset
	names []string
	dims  []int // scratch: the batch's shape
}

func newFeeder(ws *workspace.Workspace, data Dataset) *feeder {
	return &feeder{ws: ws, data: data, names: data.names()}
}

func (f *feeder) feed(rows []int) error {
	for _, name := range f.names {
		src := f.data[name]
		dst := f.ws.CreateBlob(name).MutableTensor()
		f.dims = append(f.dims[:0], src.Dims()...)
		f.dims[0] = len(rows)
		if dst.DataType() != src.DataType() || !slices.Equal(dst.Dims(), f.dims) {
			if err := dst.Init(src.DataType(), f.dims...); err != nil {
				return fmt.Errorf("brew: feeding %q: %w", name, err)
			}
		}
		width := src.SizeFromDim(1)
		switch src.DataType() {
		case blob.Float32:
			gatherRows(blob.Data[float32](src), blob.Data[float32](dst), rows, width)
		case blob.Float64:
			gatherRows(blob.Data[float64](src), blob.Data[float64](dst), rows, width)
		case blob.Int32:
			gatherRows(blob.Data[int32](src), blob.Data[int32](dst), rows, width)
		case blob.Int64:
			gatherRows(blob.Data[int64](src), blob.Data[int64](dst), rows, width)
		case blob.Uint8:
			gatherRows(blob.Data[uint8](src), blob.Data[uint8](dst), rows, width)
		default:
			return fmt.Errorf("brew: feeding %q: dtype %v is not supported in datasets", name, src.DataType())
		}
	}
	return nil
}

func gatherRows[T any](src, dst []T, rows []int, width int) {
	for i, r := range rows {
		copy(dst[i*width:(i+1)*width], src[r*width:(r+1)*width])
	}
}
