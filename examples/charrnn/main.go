// Command charrnn trains Caffe2's char-RNN example (caffe2/python/examples/
// char_rnn.py): an LSTM (brew.LSTM, a RecurrentNetwork operator whose step
// net is FC + Sum + LSTMUnit) reads a text one-hot character by character
// and learns to predict the next one, with a softmax over the vocabulary,
// LabelCrossEntropy averaged over time and batch, and SGD at a rate of
// 0.1·seq_length decaying by 0.9999 a step. The text is split into batch
// pieces, each read by one sequence of the batch; the hidden and cell
// states carry over from one iteration to the next, as in the original.
// It prints the mean loss per sequence (summed over seq_length steps, as
// char_rnn.py reports it) every -report iterations, then a sample.
//
//	go run ./examples/charrnn -iters 2000
package main

import (
	"context"
	_ "embed"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/examples/internal/interrupt"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

// The opening paragraphs of Lewis Carroll's Alice's Adventures in
// Wonderland (1865, public domain).
//
//go:embed testdata/alice.txt
var alice string

// config is a training run's settings (char_rnn.py's arguments).
type config struct {
	seqLength, batch, hidden, iters, report int
	seed                                    uint64
}

func main() {
	var c config
	flag.IntVar(&c.seqLength, "seq_length", 25, "characters per training sequence")
	flag.IntVar(&c.batch, "batch_size", 1, "sequences per batch")
	flag.IntVar(&c.hidden, "hidden_size", 100, "LSTM hidden units")
	flag.IntVar(&c.iters, "iters", 2000, "training iterations")
	flag.IntVar(&c.report, "iters_to_report", 250, "iterations between reports")
	flag.Parse()
	c.seed = 1
	ctx := interrupt.Context()
	_, err := run(ctx, os.Stdout, alice, c)
	interrupt.Exit(ctx, "charrnn", err)
}

// charRNN is the model and its vocabulary.
type charRNN struct {
	text  []rune
	vocab []rune
	index map[rune]int
	ws    *workspace.Workspace
	train *brew.Model
	// forward is the train net's forward part (no loss), for sampling.
	forward *netdef.NetDef
	c       config
}

// run trains on text and returns the mean loss per sequence of each
// report period.
func run(ctx context.Context, out io.Writer, text string, c config) ([]float64, error) {
	r, err := build(text, c)
	if err != nil {
		return nil, err
	}
	defer r.ws.Close()
	return r.trainLoop(ctx, out)
}

func build(text string, c config) (*charRNN, error) {
	r := &charRNN{text: []rune(text), index: map[rune]int{}, c: c, ws: workspace.New("")}
	for _, ch := range r.text {
		if _, ok := r.index[ch]; !ok {
			r.index[ch] = len(r.vocab)
			r.vocab = append(r.vocab, ch)
		}
	}
	if len(r.text) < c.batch*(c.seqLength+1) {
		return nil, fmt.Errorf("charrnn: %d characters is too short for %d sequences of %d", len(r.text), c.batch, c.seqLength)
	}
	d := len(r.vocab)
	m := brew.NewModel("char_rnn")
	m.AddExternalInputs("input_blob", "seq_lengths", "hidden_init", "cell_init", "target")
	hiddenAll, hiddenLast, _, cellLast := brew.LSTM(m, "input_blob", "seq_lengths", [2]string{"hidden_init", "cell_init"},
		d, c.hidden, "LSTM", brew.LSTMOptions{})
	logits := brew.FC(m, hiddenAll, "logits", c.hidden, d, brew.Axis(2))
	brew.Softmax(m, logits, "softmax", brew.Axis(2))
	m.Op("Reshape", []string{"softmax"}, []string{"softmax_reshaped", "softmax_old_shape"}, netdef.ArgInts("shape", -1, int64(d)))
	if err := m.Err(); err != nil {
		return nil, err
	}
	// A copy: Proto returns the net's own definition, which the gradient
	// and optimizer operators extend.
	r.forward = proto.Clone(m.Net.Proto()).(*netdef.NetDef)
	r.forward.Name = ptr("char_rnn_forward")
	brew.LabelCrossEntropy(m, "softmax_reshaped", "target", "xent")
	brew.AveragedLoss(m, "xent", "loss")
	if _, err := m.AddGradientOperators("loss"); err != nil {
		return nil, err
	}
	// The loss is averaged over time too, hence a rate scaled by seq_length.
	if _, err := brew.BuildSGD(m, brew.SGDOptions{BaseLR: 0.1 * float32(c.seqLength), Policy: "step",
		LRArgs: []*netdef.Argument{netdef.ArgInt("stepsize", 1), netdef.ArgFloat("gamma", 0.9999)}}); err != nil {
		return nil, err
	}
	r.train = m
	for i, op := range m.InitNet.Proto().GetOp() {
		if op.GetType() == "XavierFill" {
			seed := uint32(c.seed) + uint32(i)
			op.DeviceOption = &netdef.DeviceOption{RandomSeed: &seed}
		}
	}
	if err := r.ws.RunNetOnce(m.InitNet); err != nil {
		return nil, err
	}
	prepare := netdef.NewNet("prepare_state")
	prepare.Op("Copy", []string{hiddenLast}, []string{"hidden_init"})
	prepare.Op("Copy", []string{cellLast}, []string{"cell_init"})
	zeros := make([]float32, c.batch*c.hidden)
	for _, name := range []string{hiddenLast, cellLast} {
		if err := r.ws.FeedBlob(name, blob.MustFromSlice(slices.Clone(zeros), 1, c.batch, c.hidden)); err != nil {
			return nil, err
		}
	}
	if err := r.ws.CreateNet(prepare, false); err != nil {
		return nil, err
	}
	return r, nil
}

func ptr[T any](v T) *T { return &v }

// feed feeds one batch: at step i, sequence e reads the character at
// pos[e] and is to predict the next one.
func (r *charRNN) feed(input []int, targets []int, seqLen int) error {
	d, n := len(r.vocab), r.c.batch
	x := make([]float32, seqLen*n*d)
	for k, ch := range input {
		x[k*d+ch] = 1
	}
	y := make([]int32, len(targets))
	for k, t := range targets {
		y[k] = int32(t)
	}
	lengths := make([]int32, n)
	for e := range lengths {
		lengths[e] = int32(seqLen)
	}
	if err := r.ws.FeedBlob("seq_lengths", blob.MustFromSlice(lengths, n)); err != nil {
		return err
	}
	if err := r.ws.RunNet("prepare_state", 1); err != nil {
		return err
	}
	if err := r.ws.FeedBlob("input_blob", blob.MustFromSlice(x, seqLen, n, d)); err != nil {
		return err
	}
	return r.ws.FeedBlob("target", blob.MustFromSlice(y, len(y)))
}

func (r *charRNN) trainLoop(ctx context.Context, out io.Writer) ([]float64, error) {
	c, n := r.c, len(r.text)
	blockSize := n / c.batch
	starts := make([]int, c.batch)
	sizes := make([]int, c.batch)
	for e := range starts {
		starts[e], sizes[e] = e*blockSize, blockSize
	}
	sizes[c.batch-1] += n % c.batch
	pos := make([]int, c.batch)
	var reports []float64
	sum, count := 0.0, 0
	created := false
	for it := 1; it <= c.iters; it++ {
		if err := ctx.Err(); err != nil {
			return reports, err
		}
		input := make([]int, c.seqLength*c.batch)
		target := make([]int, c.seqLength*c.batch)
		for e := 0; e < c.batch; e++ {
			for i := 0; i < c.seqLength; i++ {
				p := starts[e] + pos[e]
				input[i*c.batch+e] = r.index[r.text[p]]
				target[i*c.batch+e] = r.index[r.text[(p+1)%n]]
				pos[e] = (pos[e] + 1) % sizes[e]
			}
		}
		if err := r.feed(input, target, c.seqLength); err != nil {
			return reports, err
		}
		if !created {
			if err := r.ws.CreateNet(r.train.Net, false); err != nil {
				return reports, err
			}
			created = true
		}
		if err := r.ws.RunNetContext(ctx, r.train.Net.Name(), 1); err != nil {
			return reports, err
		}
		l, err := r.ws.FetchBlob("loss")
		if err != nil {
			return reports, err
		}
		sum += float64(blob.Data[float32](l)[0]) * float64(c.seqLength)
		count++
		if it%c.report == 0 {
			reports = append(reports, sum/float64(count))
			fmt.Fprintf(out, "iteration %5d  loss per sequence %.3f (uniform guess %.3f)\n", it, sum/float64(count), math.Log(float64(len(r.vocab)))*float64(c.seqLength))
			sum, count = 0, 0
		}
	}
	if c.iters >= c.report {
		text, err := r.sample(ctx, 120, r.text[0])
		if err != nil {
			return reports, err
		}
		fmt.Fprintf(out, "sample: %s\n", text)
	}
	return reports, nil
}

// sample generates n characters from first, feeding each one back as a
// sequence of length 1 through the forward net (char_rnn.py's
// GenerateText), from a fixed random source.
func (r *charRNN) sample(ctx context.Context, n int, first rune) (string, error) {
	if r.ws.GetNet(r.forward.GetName()) == nil {
		if err := r.ws.CreateNet(r.forward, false); err != nil {
			return "", err
		}
	}
	rng := rand.New(rand.NewPCG(r.c.seed, 3))
	var sb strings.Builder
	sb.WriteRune(first)
	ch := r.index[first]
	d := len(r.vocab)
	for range n {
		input := make([]int, r.c.batch)
		for e := range input {
			input[e] = ch
		}
		if err := r.feed(input, make([]int, r.c.batch), 1); err != nil {
			return "", err
		}
		if err := r.ws.RunNetContext(ctx, r.forward.GetName(), 1); err != nil {
			return "", err
		}
		p, err := r.ws.FetchBlob("softmax")
		if err != nil {
			return "", err
		}
		probs := blob.Data[float32](p)[:d]
		u, acc := rng.Float64(), 0.0
		ch = d - 1
		for k, q := range probs {
			acc += float64(q)
			if u < acc {
				ch = k
				break
			}
		}
		sb.WriteRune(r.vocab[ch])
	}
	return sb.String(), nil
}
