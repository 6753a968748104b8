package main

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

// benchUsage describes bench; the flags follow it.
const benchUsage = `usage: caffe2go bench [flags] predict_net.pb

Runs the init net (-init, or init_net.pb beside the net), fills the inputs
named by -input and value_info.json (beside the net, or -value-info) with
random data, makes up the parameters still missing with -random-weights, then
times the whole net and each operator. Nets are binary, or text when named
.pbtxt or .prototxt.

A model-zoo predict net without its init net, given its input's shape:

  caffe2go bench -input data=1x3x224x224 -random-weights -width 64 predict_net.pb

-random-weights shapes each parameter after the data its operator reads
(shape inference from the inputs); a predict net does not record the output
channels of its Conv and FC layers, so -width gives them (or -input gives a
parameter's whole shape), and timings are those of a net of that width.

Flags:
`

func cmdBench(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	initPath := fs.String("init", "", "init net run once first, binary or text as the net (default: init_net.pb beside the net, if there is one)")
	valueInfo := fs.String("value-info", "", "value_info.json giving input types (numbers or names) and shapes (default: the one beside the net, if any)")
	randomWeights := fs.Bool("random-weights", false, "make up every parameter that neither the init net nor -input gives, shaped by shape inference from the inputs")
	width := fs.Int("width", 0, "with -random-weights, the output channels of every Conv and FC whose weights are made up (a predict net does not record them)")
	warmup := fs.Int("warmup", 2, "untimed runs before timing")
	runs := fs.Int("runs", 10, "timed runs")
	seed := fs.Uint64("seed", 1, "seed of the random data and weights")
	inputs := inputFlags{}
	fs.Var(inputs, "input", "`name=d0xd1x...[:dtype]`: fill the blob with random data of this shape and dtype ("+dataTypeNames+"; default float), e.g. data=1x3x224x224:uint8 (repeatable)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), benchUsage)
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usageError("bench: want one net file")
	}
	if *runs < 1 || *warmup < 0 {
		return usageError("bench: -runs must be at least 1 and -warmup at least 0")
	}
	if *width < 0 || *width > 0 && !*randomWeights {
		return usageError(fmt.Sprintf("bench: -width %d: want a positive width, with -random-weights", *width))
	}
	netPath := fs.Arg(0)
	def, err := readNet(netPath, stderr)
	if err != nil {
		return err
	}
	if def.GetName() == "" {
		def.Name = proto.String(strings.TrimSuffix(filepath.Base(netPath), filepath.Ext(netPath)))
	}
	dir := filepath.Dir(netPath)
	specs := map[string]inputSpec{}
	viPath := *valueInfo
	if viPath == "" {
		if _, err := os.Stat(filepath.Join(dir, "value_info.json")); err == nil {
			viPath = filepath.Join(dir, "value_info.json")
		}
	}
	if viPath != "" {
		if specs, err = readValueInfo(viPath); err != nil {
			return err
		}
	}
	for _, name := range slices.Sorted(maps.Keys(inputs)) {
		if !readsBlob(def, name) {
			return fmt.Errorf("-input %s=%v: no operator of the net reads %q", name, inputs[name], name)
		}
		specs[name] = inputs[name]
	}

	ws := workspace.New(dir)
	defer ws.Close()
	init := *initPath
	if init == "" {
		if p := filepath.Join(dir, "init_net.pb"); p != netPath {
			if _, err := os.Stat(p); err == nil {
				init = p
			}
		}
	}
	if init != "" {
		initDef, err := readNet(init, stderr)
		if err != nil {
			return err
		}
		if err := ws.RunNetOnce(initDef); err != nil {
			return fmt.Errorf("init net %s: %w", init, err)
		}
	}
	rng := rand.New(rand.NewPCG(*seed, 0))
	for _, name := range slices.Sorted(maps.Keys(specs)) {
		t, err := randomTensor(specs[name], rng)
		if err != nil {
			return fmt.Errorf("input %q: %w", name, err)
		}
		if err := ws.FeedBlob(name, t); err != nil {
			return err
		}
	}
	var made madeWeights
	if *randomWeights {
		if made, err = fillRandomWeights(ws, def, *width, rng); err != nil {
			return err
		}
	}
	if missing := unfedInputs(def, ws); len(missing) > 0 {
		names := strings.Join(missing, ", ")
		if len(missing) > 5 {
			names = fmt.Sprintf("%s and %d more", strings.Join(missing[:5], ", "), len(missing)-5)
		}
		return fmt.Errorf("no data for the inputs %s: give their shapes with -input name=d0xd1x...[:dtype] or value_info.json, their values with an init net (-init), or make up the parameters with -random-weights", names)
	}
	if err := ws.CreateNet(def, true); err != nil {
		return err
	}
	times, err := ws.BenchmarkNet(def.GetName(), *warmup, *runs, true)
	if err != nil {
		return err
	}
	if made.count > 0 {
		fmt.Fprintf(stdout, "random weights: %d parameters made up", made.count)
		if made.usedWidth {
			fmt.Fprintf(stdout, "; made-up Conv and FC layers have %d output channels (-width), not necessarily the trained model's", *width)
		}
		fmt.Fprintln(stdout)
	}
	writeBenchTable(stdout, def, *warmup, *runs, times)
	return nil
}

// unfedInputs lists the blobs that an operator of def reads before any
// operator writes them and that ws lacks. An external input that no
// operator reads (the zoo's resnet50 lists its training queue) needs no
// data.
func unfedInputs(def *netdef.NetDef, ws *workspace.Workspace) []string {
	var missing []string
	written := map[string]bool{}
	for _, op := range def.GetOp() {
		for _, in := range op.GetInput() {
			if !written[in] && !ws.HasBlob(in) && !slices.Contains(missing, in) {
				missing = append(missing, in)
			}
		}
		for _, out := range op.GetOutput() {
			written[out] = true
		}
	}
	return missing
}

// readsBlob reports whether an operator of def reads the blob name.
func readsBlob(def *netdef.NetDef, name string) bool {
	for _, op := range def.GetOp() {
		if slices.Contains(op.GetInput(), name) {
			return true
		}
	}
	return false
}

// writeBenchTable prints the whole-net time, then each operator's time and
// share of the operators' total, then the totals per operator type.
func writeBenchTable(w io.Writer, def *netdef.NetDef, warmup, runs int, times []float64) {
	ops := def.GetOp()
	fmt.Fprintf(w, "net %s: %d operators, %d timed runs after %d warm-up runs\n", def.GetName(), len(ops), runs, warmup)
	fmt.Fprintf(w, "whole net: %.4f ms/run\n\n", times[0])
	perOp := times[1:]
	total := 0.0
	for _, t := range perOp {
		total += t
	}
	share := func(t float64) float64 {
		if total == 0 {
			return 0
		}
		return 100 * t / total
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "   #\ttype\toutput\t   ms/run\t    %")
	byType := map[string]float64{}
	counts := map[string]int{}
	for i, op := range ops {
		if i >= len(perOp) {
			break
		}
		out := ""
		if len(op.GetOutput()) > 0 {
			out = op.GetOutput()[0]
		}
		fmt.Fprintf(tw, "%4d\t%s\t%s\t%9.4f\t%5.1f\n", i, op.GetType(), out, perOp[i], share(perOp[i]))
		byType[op.GetType()] += perOp[i]
		counts[op.GetType()]++
	}
	tw.Flush()
	types := make([]string, 0, len(byType))
	for t := range byType {
		types = append(types, t)
	}
	sort.Slice(types, func(a, b int) bool {
		if byType[types[a]] != byType[types[b]] {
			return byType[types[a]] > byType[types[b]]
		}
		return types[a] < types[b]
	})
	fmt.Fprintln(w, "\nper operator type:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "type\tcount\t   ms/run\t    %")
	for _, t := range types {
		fmt.Fprintf(tw, "%s\t%5d\t%9.4f\t%5.1f\n", t, counts[t], byType[t], share(byType[t]))
	}
	tw.Flush()
}
