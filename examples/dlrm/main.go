// Command dlrm trains a small DLRM-style recommendation model on synthetic
// click data and then serves it from rowwise-quantized embedding tables.
//
// The model (Caffe2's recommendation workload, as in the DLRM paper): three
// embedding tables, each read as a bag of ids per sample through
// SparseLengthsSum; a bottom MLP over four dense features; the pairwise
// dot products of the four resulting vectors (BatchMatMul of the stacked
// vectors with themselves); a top MLP over the dense vector and those
// products, giving one logit; and the sigmoid cross-entropy of the logit
// against the click label (SigmoidCrossEntropyWithLogits, averaged over
// the batch).
//
// Training is Adagrad (brew.BuildAdagrad): the embedding tables get
// gradient slices (ids, rows), which the optimizer applies with
// SparseAdagrad to the rows the batch read; the MLPs get dense Adagrad.
// The labels depend on the ids: each id has a hidden propensity, and a
// sample is a click when the propensities of its ids and its first dense
// feature add up to more than 0.
//
// After training, each table is quantized with
// FloatToFused8BitRowwiseQuantized, and a second predict net reads it with
// SparseLengthsSumFused8BitRowwise; the program prints how far its scores
// are from the float model's on held-out samples.
//
//	go run ./examples/dlrm -steps 600
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/examples/internal/interrupt"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

const (
	denseFeatures = 4
	embDim        = 8
	hidden        = 16
)

// tableRows are the embedding tables' sizes (ids per sparse feature).
var tableRows = []int{50, 40, 30}

func main() {
	steps := flag.Int("steps", 600, "training steps")
	batch := flag.Int("batch", 64, "batch size")
	lr := flag.Float64("lr", 0.05, "Adagrad learning rate")
	rowWise := flag.Bool("rowwise", false, "update the tables with RowWiseSparseAdagrad (one moment per row) instead of SparseAdagrad")
	flag.Parse()
	ctx := interrupt.Context()
	_, err := run(ctx, os.Stdout, *steps, *batch, float32(*lr), *rowWise)
	interrupt.Exit(ctx, "dlrm", err)
}

// result is what a run measured.
type result struct {
	// firstLoss is the loss of the first step, lastLoss the mean training
	// loss over the last 50 steps.
	firstLoss, lastLoss float64
	// testLoss and testAccuracy are the float model's on held-out samples.
	testLoss, testAccuracy float64
	// maxScoreDiff is the largest |score_int8 − score_float| there.
	maxScoreDiff float64
}

// batchData is one batch: the dense features, per table the ids and the
// bag lengths, and the labels.
type batchData struct {
	dense []float32
	ids   [][]int64
	lens  [][]int32
	label []float32
}

// generator draws synthetic click samples; the propensities are fixed.
type generator struct {
	rng        *rand.Rand
	propensity [][]float64
}

func newGenerator(seed uint64) *generator {
	g := &generator{rng: rand.New(rand.NewPCG(seed, 14))}
	world := rand.New(rand.NewPCG(2, 3)) // the same propensities for every generator
	for _, n := range tableRows {
		p := make([]float64, n)
		for i := range p {
			p[i] = world.NormFloat64()
		}
		g.propensity = append(g.propensity, p)
	}
	return g
}

// next draws n samples: one to three ids per table (the mean of their
// propensities counts), four dense features.
func (g *generator) next(n int) *batchData {
	b := &batchData{ids: make([][]int64, len(tableRows)), lens: make([][]int32, len(tableRows))}
	for range n {
		score := 0.0
		for f := 0; f < denseFeatures; f++ {
			x := g.rng.Float64()*2 - 1
			b.dense = append(b.dense, float32(x))
			if f == 0 {
				score += 0.5 * x
			}
		}
		for t, rows := range tableRows {
			l := 1 + g.rng.IntN(3)
			sum := 0.0
			for range l {
				id := g.rng.IntN(rows)
				b.ids[t] = append(b.ids[t], int64(id))
				sum += g.propensity[t][id]
			}
			b.lens[t] = append(b.lens[t], int32(l))
			score += sum / float64(l)
		}
		label := float32(0)
		if score > 0 {
			label = 1
		}
		b.label = append(b.label, label)
	}
	return b
}

// feed puts the batch into ws.
func (b *batchData) feed(ws *workspace.Workspace) error {
	n := len(b.label)
	feeds := map[string]*blob.Tensor{
		"dense": blob.MustFromSlice(b.dense, n, denseFeatures),
		"label": blob.MustFromSlice(b.label, n, 1),
	}
	for t := range tableRows {
		feeds[fmt.Sprintf("ids_%d", t)] = blob.MustFromSlice(b.ids[t], len(b.ids[t]))
		feeds[fmt.Sprintf("lens_%d", t)] = blob.MustFromSlice(b.lens[t], n)
	}
	for name, t := range feeds {
		if err := ws.FeedBlob(name, t); err != nil {
			return err
		}
	}
	return nil
}

// tableName is embedding table t; quantized tables have the suffix _q8.
func tableName(t int, quantized bool) string {
	if quantized {
		return fmt.Sprintf("emb_%d_q8", t)
	}
	return fmt.Sprintf("emb_%d", t)
}

// addDLRM adds the model to m, from the fed blobs to "logit", "score"
// (sigmoid of the logit) and, with loss, "loss". With quantized the
// embedding bags read the fused 8-bit tables instead of the float ones.
func addDLRM(m *brew.Model, loss, quantized bool) {
	m.AddExternalInputs("dense", "label")
	vectors := []string{}
	bottom := brew.Relu(m, brew.FC(m, "dense", "bot_fc1", denseFeatures, hidden), "bot_fc1")
	bottom = brew.Relu(m, brew.FC(m, bottom, "bot_fc2", hidden, embDim), "bot_fc2")
	vectors = append(vectors, bottom)
	for t, rows := range tableRows {
		ids, lens := fmt.Sprintf("ids_%d", t), fmt.Sprintf("lens_%d", t)
		m.AddExternalInputs(ids, lens)
		table, op := tableName(t, false), "SparseLengthsSum"
		if quantized {
			table, op = tableName(t, true), "SparseLengthsSumFused8BitRowwise"
			m.AddExternalInputs(table)
		} else {
			table = m.CreateParam(table, []int64{int64(rows), embDim},
				brew.Init("UniformFill", netdef.ArgFloat("min", -0.05), netdef.ArgFloat("max", 0.05)), brew.Weight)
		}
		bag := fmt.Sprintf("bag_%d", t)
		m.Op(op, []string{table, ids, lens}, []string{bag})
		vectors = append(vectors, bag)
	}
	// The interaction: all pairwise dot products of the four vectors.
	m.Op("Concat", vectors, []string{"stacked", "stacked_split"}, netdef.ArgInt("axis", 1), netdef.ArgInt("add_axis", 1))
	m.Op("BatchMatMul", []string{"stacked", "stacked"}, []string{"dots"}, netdef.ArgInt("trans_b", 1))
	m.Op("Flatten", []string{"dots"}, []string{"dots_flat"})
	n := len(vectors)
	m.Op("Concat", []string{bottom, "dots_flat"}, []string{"interaction", "interaction_split"}, netdef.ArgInt("axis", 1))
	top := brew.Relu(m, brew.FC(m, "interaction", "top_fc1", embDim+n*n, hidden), "top_fc1")
	logit := brew.FC(m, top, "logit", hidden, 1)
	brew.Sigmoid(m, logit, "score")
	if loss {
		m.Op("SigmoidCrossEntropyWithLogits", []string{logit, "label"}, []string{"xent"})
		brew.AveragedLoss(m, "xent", "loss")
	}
}

// run trains for steps batches, then evaluates the float and the
// quantized predict nets on held-out samples, writing progress to out.
// With rowWise the tables train with RowWiseSparseAdagrad (the MLPs keep
// dense Adagrad).
func run(ctx context.Context, out io.Writer, steps, batch int, lr float32, rowWise bool) (res result, err error) {
	ws := workspace.New("")
	defer ws.Close()

	train := brew.NewModel("dlrm_train")
	addDLRM(train, true, false)
	if _, err := train.AddGradientOperators("loss"); err != nil {
		return res, err
	}
	opts := brew.AdagradOptions{BaseLR: lr}
	if rowWise {
		// The tables get their own optimizer (Caffe2's per-parameter
		// optimizers); the learning rate is the same.
		rows, err := brew.NewAdagrad(brew.AdagradOptions{BaseLR: lr, RowWise: true})
		if err != nil {
			return res, err
		}
		opts.ParamOptimizers = map[string]*brew.Optimizer{}
		for t := range tableRows {
			opts.ParamOptimizers[tableName(t, false)] = rows
		}
	}
	if _, err := brew.BuildAdagrad(train, opts); err != nil {
		return res, err
	}
	predict, err := brew.NewModelWith("dlrm_predict", brew.ModelOptions{ParamModel: train, NoInitParams: true})
	if err != nil {
		return res, err
	}
	addDLRM(predict, true, false)
	quant := brew.NewModel("dlrm_predict_int8")
	addDLRM(quant, false, true)
	for _, m := range []*brew.Model{predict, quant} {
		if err := m.Err(); err != nil {
			return res, err
		}
	}
	for i, op := range train.InitNet.Proto().GetOp() {
		seed := uint32(i + 1)
		op.DeviceOption = &netdef.DeviceOption{RandomSeed: &seed}
	}
	if err := ws.RunNetOnce(train.InitNet); err != nil {
		return res, err
	}
	gen := newGenerator(1)
	if err := gen.next(batch).feed(ws); err != nil {
		return res, err
	}
	for _, n := range []*netdef.Net{train.Net, predict.Net} {
		if err := ws.CreateNet(n, false); err != nil {
			return res, err
		}
	}
	var losses []float64
	for step := 0; step < steps; step++ {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		if err := gen.next(batch).feed(ws); err != nil {
			return res, err
		}
		if err := ws.RunNet(train.Net.Name(), 1); err != nil {
			return res, err
		}
		l, err := ws.FetchBlob("loss")
		if err != nil {
			return res, err
		}
		losses = append(losses, float64(blob.Data[float32](l)[0]))
		if (step+1)%100 == 0 {
			fmt.Fprintf(out, "step %4d  mean loss of the last 100 steps %.4f\n", step+1, mean(losses[step-99:]))
		}
	}
	if len(losses) == 0 {
		return res, fmt.Errorf("dlrm: no training steps")
	}
	w := min(50, len(losses))
	res.firstLoss, res.lastLoss = losses[0], mean(losses[len(losses)-w:])

	// Held-out samples, scored by the float and the int8 predict nets.
	test := newGenerator(99).next(1000)
	if err := test.feed(ws); err != nil {
		return res, err
	}
	if err := ws.RunNet(predict.Net.Name(), 1); err != nil {
		return res, err
	}
	scores, err := ws.FetchBlob("score")
	if err != nil {
		return res, err
	}
	l, err := ws.FetchBlob("loss")
	if err != nil {
		return res, err
	}
	res.testLoss = float64(blob.Data[float32](l)[0])
	correct := 0
	for i, s := range blob.Data[float32](scores) {
		if (s > 0.5) == (test.label[i] == 1) {
			correct++
		}
	}
	res.testAccuracy = float64(correct) / float64(len(test.label))

	quantize := netdef.NewNet("quantize_tables")
	for t := range tableRows {
		quantize.Op("FloatToFused8BitRowwiseQuantized", []string{tableName(t, false)}, []string{tableName(t, true)})
	}
	if err := ws.RunNetOnce(quantize); err != nil {
		return res, err
	}
	if err := ws.RunNetOnce(quant.Net); err != nil {
		return res, err
	}
	qscores, err := ws.FetchBlob("score")
	if err != nil {
		return res, err
	}
	for i, s := range blob.Data[float32](qscores) {
		res.maxScoreDiff = math.Max(res.maxScoreDiff, math.Abs(float64(s-blob.Data[float32](scores)[i])))
	}
	fmt.Fprintf(out, "training loss: first step %.4f, mean of the last 50 steps %.4f\n", res.firstLoss, res.lastLoss)
	fmt.Fprintf(out, "held-out (%d samples): loss %.4f, accuracy %.3f\n", len(test.label), res.testLoss, res.testAccuracy)
	fmt.Fprintf(out, "int8 rowwise tables (SparseLengthsSumFused8BitRowwise): max |score − float score| = %.2e\n", res.maxScoreDiff)
	return res, nil
}

func mean(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}
