package main

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

func cmdBench(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	initPath := fs.String("init", "", "init net run once before (default: init_net.pb beside the net, if there is one)")
	valueInfo := fs.String("value-info", "", "value_info.json giving input types (numbers or names) and shapes (default: the one beside the net, if any)")
	warmup := fs.Int("warmup", 2, "untimed runs before timing")
	runs := fs.Int("runs", 10, "timed runs")
	seed := fs.Uint64("seed", 1, "seed of the random input data")
	inputs := inputFlags{}
	fs.Var(inputs, "input", "`name=d0xd1x...[:dtype]`: fill the external input name with random data of this shape and dtype ("+dataTypeNames+"; default float), e.g. data=1x3x224x224:uint8 (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: caffe2go bench [flags] predict_net.pb\n\n"+
			"Runs the init net, fills the net's remaining external inputs with random data\n"+
			"(types and shapes from -input or value_info.json), then times the whole net and each operator.")
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
	maps.Copy(specs, inputs)

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
	var missing []string
	for _, in := range def.GetExternalInput() {
		spec, ok := specs[in]
		if !ok {
			if !ws.HasBlob(in) {
				missing = append(missing, in)
			}
			continue
		}
		t, err := randomTensor(spec, rng)
		if err != nil {
			return fmt.Errorf("input %q: %w", in, err)
		}
		if err := ws.FeedBlob(in, t); err != nil {
			return err
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("no data for the external inputs %s: give their shapes with -input name=d0xd1x...[:dtype] or value_info.json, or their values with an init net (-init)", strings.Join(missing, ", "))
	}
	if err := ws.CreateNet(def, true); err != nil {
		return err
	}
	times, err := ws.BenchmarkNet(def.GetName(), *warmup, *runs, true)
	if err != nil {
		return err
	}
	writeBenchTable(stdout, def, *warmup, *runs, times)
	return nil
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
