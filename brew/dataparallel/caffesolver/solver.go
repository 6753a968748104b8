package caffesolver

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/brew/dataparallel"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/netdef/caffe"
	"github.com/caffe2go/caffe2go/workspace"
)

// Options configure New. Zero values take the defaults given.
type Options struct {
	// Solver is the solver description (see caffe.ReadSolver). Required.
	Solver *caffe.SolverParameter
	// Dir is the folder the solver's relative paths (net, train_net,
	// test_net, snapshot_prefix) and the Data layers' sources are
	// resolved in; Caffe resolves them in its working directory, usually
	// Caffe's root. A net path that does not exist there is looked for by
	// its file name in Dir. Default: the current directory.
	Dir string
	// Net replaces the solver's net: the description of the training and
	// test nets together (a train_test prototxt).
	Net *caffe.NetParameter
	// Weights are trained blobs to start from (Caffe's -weights): the
	// layers they name start from them, the others from their fillers.
	Weights *caffe.NetParameter
	// Devices is the number of CPU devices to train on (Caffe's -gpu
	// list): each runs the training net on batch_size examples of its own,
	// and the gradients are averaged, so an iteration covers Devices ×
	// batch_size examples, as in Caffe's multi-GPU training. Default 1.
	Devices int
	// TrainData and TestData replace the data sets that the Data layers
	// of the training and test nets name (data_param source and backend;
	// see ReadDatumDB), with the same form: "data" float32 [n, …] and
	// "label" int32 [n].
	TrainData, TestData brew.Dataset
	// SnapshotPrefix replaces the solver's snapshot_prefix (resolved in Dir
	// when relative).
	SnapshotPrefix string
	// Workspace is where the nets run; its store (workspace.Workspace.Store)
	// holds the snapshots' checkpoints. Required.
	Workspace *workspace.Workspace
	// Log receives Caffe's progress lines; nil discards them.
	Log io.Writer
}

// Output is one output blob of a net averaged over a test or a display
// interval: a loss (Weight ≠ 0) or another result such as an accuracy.
type Output struct {
	// Name is the output's Caffe top.
	Name string
	// Value is its mean.
	Value float64
	// Weight is its loss weight (0 for an output that is not a loss).
	Weight float64
}

// Solver trains a Caffe net with Caffe's SGD solver, data-parallel over
// CPU devices.
type Solver struct {
	o        Options
	sp       *caffe.SolverParameter
	ws       *workspace.Workspace
	train    *dataparallel.Parallel
	test     *dataparallel.Parallel
	trainNet *caffe.Converted
	testNet  *caffe.Converted
	feed     *feeder
	testFeed *feeder
	batch    int // per device
	testBat  int
	devices  int
	iter     int
	prefix   string
	losses   []Output // the training net's outputs (losses by weight)
	testOuts []Output
	created  bool
	testMade bool
	log      io.Writer
	lastDisp time.Time
	dispIter int
}

// New builds the training and test nets of the solver o.Solver with
// brew: the training net is instantiated in Caffe's TRAIN phase with
// parameters from o.Weights or the layers' fillers, replicated over
// o.Devices devices with dataparallel, and given Caffe's SGD update
// (momentum, weight_decay, per-parameter lr_mult and decay_mult); the
// test net (the TEST phase, on the first device) reads the same
// parameters. Only the SGD solver type is supported. Errors name the
// solver field, the net file or the layer that failed.
func New(o Options) (*Solver, error) {
	sp := o.Solver
	if sp == nil {
		return nil, errors.New("caffesolver: no solver")
	}
	if o.Workspace == nil {
		return nil, errors.New("caffesolver: no workspace")
	}
	if t := sp.GetType(); t != "SGD" {
		return nil, fmt.Errorf("caffesolver: solver type %q is not supported (SGD is)", t)
	}
	if sp.SolverType != nil && sp.GetSolverType() != caffe.SolverParameter_SGD {
		return nil, fmt.Errorf("caffesolver: solver_type %v is not supported (SGD is)", sp.GetSolverType())
	}
	if sp.GetIterSize() != 1 {
		return nil, fmt.Errorf("caffesolver: iter_size %d is not supported (1 is)", sp.GetIterSize())
	}
	if sp.GetRegularizationType() != "L2" {
		return nil, fmt.Errorf("caffesolver: regularization_type %q is not supported (L2 is)", sp.GetRegularizationType())
	}
	if _, err := LearningRate(sp, 0); err != nil {
		return nil, err
	}
	if o.Devices == 0 {
		o.Devices = 1
	}
	if o.Devices < 0 {
		return nil, fmt.Errorf("caffesolver: %d devices", o.Devices)
	}
	s := &Solver{o: o, sp: sp, ws: o.Workspace, devices: o.Devices, log: o.Log}
	if s.log == nil {
		s.log = io.Discard
	}
	s.prefix = o.SnapshotPrefix
	if s.prefix == "" {
		s.prefix = sp.GetSnapshotPrefix()
	}
	if s.prefix != "" && !filepath.IsAbs(s.prefix) {
		s.prefix = filepath.Join(o.Dir, s.prefix)
	}
	trainDef, testDef, err := s.nets()
	if err != nil {
		return nil, err
	}
	if err := s.buildTrain(trainDef); err != nil {
		return nil, err
	}
	if testDef != nil {
		if err := s.buildTest(testDef); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// nets returns the training and test net descriptions (test nil when the
// solver does no testing).
func (s *Solver) nets() (train, test *caffe.NetParameter, err error) {
	sp := s.sp
	read := func(field, path string) (*caffe.NetParameter, error) {
		p := path
		if !filepath.IsAbs(p) {
			p = filepath.Join(s.o.Dir, path)
			if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
				if alt := filepath.Join(s.o.Dir, filepath.Base(path)); alt != p {
					if _, err := os.Stat(alt); err == nil {
						p = alt
					}
				}
			}
		}
		n, err := caffe.ReadNet(p)
		if err != nil {
			return nil, fmt.Errorf("caffesolver: solver %s %q: %w", field, path, err)
		}
		return n, nil
	}
	switch {
	case s.o.Net != nil:
		train, test = s.o.Net, s.o.Net
	case sp.NetParam != nil:
		train, test = sp.NetParam, sp.NetParam
	case sp.Net != nil:
		if train, err = read("net", sp.GetNet()); err != nil {
			return nil, nil, err
		}
		test = train
	default:
		switch {
		case sp.TrainNetParam != nil:
			train = sp.TrainNetParam
		case sp.TrainNet != nil:
			if train, err = read("train_net", sp.GetTrainNet()); err != nil {
				return nil, nil, err
			}
		default:
			return nil, nil, errors.New("caffesolver: the solver names no net (net, net_param, train_net or train_net_param)")
		}
		switch {
		case len(sp.TestNetParam) > 0:
			test = sp.TestNetParam[0]
		case len(sp.TestNet) > 0:
			if test, err = read("test_net", sp.TestNet[0]); err != nil {
				return nil, nil, err
			}
		}
	}
	if len(sp.TestNet)+len(sp.TestNetParam) > 1 || len(sp.TestState) > 1 {
		return nil, nil, errors.New("caffesolver: more than one test net is not supported")
	}
	if len(sp.TestIter) == 0 || sp.GetTestInterval() <= 0 {
		test = nil
	}
	return train, test, nil
}

// dataLayer finds the net's one Data layer in the phase and returns it.
func dataLayer(net *caffe.NetParameter, phase caffe.Phase) (*caffe.LayerParameter, error) {
	var found *caffe.LayerParameter
	for _, l := range net.Layer {
		if l.GetType() != "Data" || !inPhase(l, phase) {
			continue
		}
		if found != nil {
			return nil, fmt.Errorf("caffesolver: the %v net has two Data layers (%q and %q); one is supported", phase, found.GetName(), l.GetName())
		}
		found = l
	}
	if found == nil {
		return nil, fmt.Errorf("caffesolver: the %v net has no Data layer", phase)
	}
	if len(found.Top) != 2 {
		return nil, fmt.Errorf("caffesolver: Data layer %q has %d tops, want 2 (data and label)", found.GetName(), len(found.Top))
	}
	return found, nil
}

// inPhase reports whether layer l's rules let it into a net of phase p
// (phase rules only; Convert applies the full rules).
func inPhase(l *caffe.LayerParameter, p caffe.Phase) bool {
	if len(l.Include) > 0 {
		for _, r := range l.Include {
			if r.Phase == nil || r.GetPhase() == p {
				return true
			}
		}
		return false
	}
	for _, r := range l.Exclude {
		if r.Phase != nil && r.GetPhase() == p {
			return false
		}
	}
	return true
}

// dataset returns the data set of the net's Data layer in phase: given,
// or read from its source.
func (s *Solver) dataset(net *caffe.NetParameter, phase caffe.Phase, given brew.Dataset) (*caffe.LayerParameter, brew.Dataset, error) {
	l, err := dataLayer(net, phase)
	if err != nil {
		return nil, nil, err
	}
	if given != nil {
		return l, given, nil
	}
	dp := l.GetDataParam()
	if dp.GetSource() == "" {
		return nil, nil, fmt.Errorf("caffesolver: Data layer %q has no data_param source", l.GetName())
	}
	src := dp.GetSource()
	if !filepath.IsAbs(src) {
		src = filepath.Join(s.o.Dir, src)
	}
	ds, err := ReadDatumDB(DBType(dp.GetBackend()), src, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("caffesolver: Data layer %q: %w", l.GetName(), err)
	}
	return l, ds, nil
}

// convert translates the net in phase with a batch of batch examples.
func (s *Solver) convert(net *caffe.NetParameter, phase caffe.Phase, data *caffe.LayerParameter, ds brew.Dataset, batch int) (*caffe.Converted, error) {
	dims := ds["data"].Dims()
	opts := []caffe.Option{caffe.InPhase(phase), caffe.FromFillers(),
		caffe.InputShape(data.Top[0], append([]int{batch}, dims[1:]...)...), caffe.InputShape(data.Top[1], batch)}
	if st := s.sp.GetTrainState(); phase == caffe.Phase_TRAIN && st != nil {
		opts = append(opts, caffe.Level(int(st.GetLevel())), caffe.Stages(st.Stage...))
	}
	if len(s.sp.TestState) == 1 && phase == caffe.Phase_TEST {
		st := s.sp.TestState[0]
		opts = append(opts, caffe.Level(int(st.GetLevel())), caffe.Stages(st.Stage...))
	}
	c, err := caffe.Convert(net, s.o.Weights, opts...)
	if err != nil {
		return nil, fmt.Errorf("caffesolver: %v net: %w", phase, err)
	}
	return c, nil
}

// batchSize returns the Data layer's batch_size.
func batchSize(l *caffe.LayerParameter) (int, error) {
	b := int(l.GetDataParam().GetBatchSize())
	if b <= 0 {
		return 0, fmt.Errorf("caffesolver: Data layer %q has batch_size %d", l.GetName(), b)
	}
	return b, nil
}

// outputs returns the net's outputs with their loss weights: a top of a
// loss layer (a type ending in Loss) weighs 1 unless loss_weight says
// otherwise, another top weighs its loss_weight (0 when unset).
func outputs(c *caffe.Converted, net *caffe.NetParameter) []Output {
	weights := map[string]float64{}
	for _, l := range net.Layer {
		for i, t := range l.Top {
			w := 0.0
			if strings.HasSuffix(l.GetType(), "Loss") && i == 0 {
				w = 1
			}
			if i < len(l.LossWeight) {
				w = float64(l.LossWeight[i])
			}
			if w != 0 {
				weights[t] = w
			}
		}
	}
	var outs []Output
	for _, l := range c.Layers {
		for i, t := range l.Tops {
			if slices.Contains(c.Outputs, l.Blobs[i]) {
				outs = append(outs, Output{Name: t, Weight: weights[t]})
			}
		}
	}
	return outs
}

// blobOf returns the Caffe2 blob holding Caffe top name.
func blobOf(c *caffe.Converted, top string) string {
	b := top
	for _, l := range c.Layers {
		for i, t := range l.Tops {
			if t == top {
				b = l.Blobs[i]
			}
		}
	}
	return b
}

// forward returns a dataparallel forward builder adding the converted
// net: its parameters (created from the init net's fills unless the model
// shares them), then its operators; it returns the weighted losses scaled
// by lossScale.
func forward(c *caffe.Converted, losses []Output) func(m *brew.Model, lossScale float32) ([]string, error) {
	learned := map[string]bool{}
	for _, l := range c.Layers {
		for _, p := range l.Learned {
			learned[p] = true
		}
	}
	return func(m *brew.Model, lossScale float32) ([]string, error) {
		m.AddExternalInputs(c.Inputs...)
		for _, op := range c.Init.Op {
			var shape []int64
			var args []*netdef.Argument
			for _, a := range op.Arg {
				if a.GetName() == "shape" {
					shape = a.Ints
				} else {
					args = append(args, a)
				}
			}
			name := op.Output[0]
			tags := []brew.Tag{brew.ComputedParam}
			if learned[name] {
				tags = []brew.Tag{brew.Weight}
			}
			m.CreateParam(name, shape, brew.Init(op.GetType(), args...), tags...)
		}
		for _, op := range c.Predict.Op {
			m.Op(op.GetType(), op.Input, op.Output, op.Arg...)
		}
		var out []string
		for _, l := range losses {
			if l.Weight == 0 {
				continue
			}
			b := blobOf(c, l.Name)
			op := m.Op("Scale", []string{b}, []string{b + "_scaled"}, netdef.ArgFloat("scale", lossScale*float32(l.Weight)))
			if op != nil {
				out = append(out, op.Output[0])
			}
		}
		return out, m.Err()
	}
}

func (s *Solver) buildTrain(net *caffe.NetParameter) error {
	data, ds, err := s.dataset(net, caffe.Phase_TRAIN, s.o.TrainData)
	if err != nil {
		return err
	}
	if s.batch, err = batchSize(data); err != nil {
		return err
	}
	if s.feed, err = newFeeder(ds, "training"); err != nil {
		return err
	}
	if s.trainNet, err = s.convert(net, caffe.Phase_TRAIN, data, ds, s.batch); err != nil {
		return err
	}
	s.losses = outputs(s.trainNet, net)
	if !slices.ContainsFunc(s.losses, func(o Output) bool { return o.Weight != 0 }) {
		return errors.New("caffesolver: the training net has no loss among its outputs (a top of a layer whose type ends in Loss, or one with a loss_weight)")
	}
	devices := make([]int, s.devices)
	for i := range devices {
		devices[i] = i
	}
	m := brew.NewModel(nameOr(net.GetName(), "caffe") + "_train")
	s.train, err = dataparallel.Parallelize(m, dataparallel.Options{
		Devices:            devices,
		Workspace:          s.ws,
		ForwardBuilder:     forward(s.trainNet, s.losses),
		ParamUpdateBuilder: s.update,
	})
	if err != nil {
		return fmt.Errorf("caffesolver: training net: %w", err)
	}
	return nil
}

func (s *Solver) buildTest(net *caffe.NetParameter) error {
	data, ds, err := s.dataset(net, caffe.Phase_TEST, s.o.TestData)
	if err != nil {
		return err
	}
	if s.testBat, err = batchSize(data); err != nil {
		return err
	}
	if s.testFeed, err = newFeeder(ds, "test"); err != nil {
		return err
	}
	if s.testNet, err = s.convert(net, caffe.Phase_TEST, data, ds, s.testBat); err != nil {
		return err
	}
	s.testOuts = outputs(s.testNet, net)
	m, err := brew.NewModelWith(nameOr(net.GetName(), "caffe")+"_test", brew.ModelOptions{NoInitParams: true})
	if err != nil {
		return err
	}
	// The test net runs on the first device, reading its parameters.
	s.test, err = dataparallel.Parallelize(m, dataparallel.Options{
		Devices:   []int{0},
		Workspace: s.ws,
		ForwardBuilder: func(m *brew.Model, _ float32) ([]string, error) {
			return forward(s.testNet, nil)(m, 1)
		},
	})
	if err != nil {
		return fmt.Errorf("caffesolver: test net: %w", err)
	}
	return nil
}

// update adds one device's SGD update, Caffe's SGDSolver::ApplyUpdate:
// for each learned parameter, diff += weight_decay·decay_mult·data, then
// history = momentum·history + lr·lr_mult·diff, data −= history. The
// learning rate is fed as the blob "lr" before each iteration.
func (s *Solver) update(m *brew.Model) error {
	grads := m.ParamToGrad()
	scope := devicescope.Current()
	for _, l := range s.trainNet.Layers {
		for i, p := range l.Learned {
			full := scope.Name() + p
			g, ok := grads[full]
			if !ok {
				return fmt.Errorf("caffesolver: layer %q: parameter %s has no gradient", l.Name, full)
			}
			lrMult, decay := l.LRMult[i], float32(s.sp.GetWeightDecay())*l.DecayMult[i]
			if lrMult == 0 {
				continue
			}
			if decay != 0 {
				m.Op("Scale", []string{full}, []string{full + "_decay"}, netdef.ArgFloat("scale", decay))
				m.Op("Add", []string{g, full + "_decay"}, []string{g})
			}
			lr := lrBlob(m, lrMult)
			mom := full + "_momentum"
			scope.WithNameReset("").Op(m.InitNet, "ConstantFill", []string{full}, []string{mom}, netdef.ArgFloat("value", 0))
			m.Op("MomentumSGDUpdate", []string{g, mom, lr, full}, []string{g, mom, full},
				netdef.ArgFloat("momentum", s.sp.GetMomentum()), netdef.ArgInt("nesterov", 0))
		}
	}
	return m.Err()
}

// lrBlob returns the blob holding lr·mult on the current device.
func lrBlob(m *brew.Model, mult float32) string {
	if mult == 1 {
		return "lr"
	}
	name := fmt.Sprintf("lr_x%g", mult)
	if !m.Net.BlobIsDefined(devicescope.Current().Name() + name) {
		m.Op("Scale", []string{"lr"}, []string{name}, netdef.ArgFloat("scale", mult))
	}
	return name
}

func nameOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// Iter returns the number of iterations done.
func (s *Solver) Iter() int { return s.iter }

// Devices returns the number of devices the training net runs on.
func (s *Solver) Devices() int { return s.devices }

// feedTrain feeds the next iteration's examples and learning rate to every
// device: device d gets examples d, d+N, d+2N, … of the iteration's
// N·batch_size, as Caffe's Data layer deals records to N solvers.
func (s *Solver) feedTrain(rate float64) error {
	lr, err := blob.FromSlice([]float32{float32(rate)}, 1)
	if err != nil {
		return err
	}
	in := s.trainNet.Inputs
	for d := range s.devices {
		data, label, err := s.feed.batch(s.batch, d, s.devices)
		if err != nil {
			return err
		}
		for name, v := range map[string]*blob.Tensor{in[0]: data, in[1]: label, "lr": lr} {
			if err := s.train.FeedDevice(d, name, v); err != nil {
				return err
			}
		}
	}
	s.feed.advance(s.batch * s.devices)
	return nil
}
