package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/netdef/caffe"
)

const caffeUsage = `usage: caffe2go caffe convert [flags] net.prototxt weights.caffemodel [-o init_net.pb predict_net.pb]
       caffe2go caffe train -solver solver.prototxt [-weights x.caffemodel] [-devices N] [-snapshot id] [flags]
       caffe2go caffe convert-mnist [-db-type leveldb] images-idx labels-idx out_db

convert translates a Caffe net and its trained weights into a Caffe2 init
net and predict net (package netdef/caffe); train trains a net as Caffe's
solver does (package brew/dataparallel/caffesolver); convert-mnist writes MNIST as
Caffe's Datum records. Run "caffe2go caffe <subcommand> -h" for the flags.
`

func cmdCaffe(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, caffeUsage)
		return usageError("caffe: want a subcommand: convert, train or convert-mnist")
	}
	switch args[0] {
	case "convert":
		return cmdCaffeConvert(args[1:], stdout, stderr)
	case "train":
		return cmdCaffeTrain(args[1:], stdout, stderr)
	case "convert-mnist":
		return cmdCaffeConvertMNIST(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, caffeUsage)
		return flag.ErrHelp
	}
	fmt.Fprint(stderr, caffeUsage)
	return usageError(fmt.Sprintf("caffe: unknown subcommand %q (want convert, train or convert-mnist)", args[0]))
}

const caffeConvertUsage = `usage: caffe2go caffe convert [flags] net.prototxt weights.caffemodel [-o init_net.pb predict_net.pb]

Translates a Caffe net (a deploy or train_val prototxt, current or V1
format) and its trained weights (a caffemodel) into a Caffe2 init net, which
creates every parameter, and a predict net, the forward pass, as Caffe2's
caffe_translator does. The net is instantiated in Caffe's TEST phase. The
nets are written in the binary format, or as text when named .pbtxt; -o
names both files, or -init_net and -predict_net one each (default
init_net.pb and predict_net.pb in the current folder).

Data layers do not say their data's shape; layers such as Softmax, Flatten,
Reshape, Slice and padded average pooling need it: give it with -input, as
for LeNet's train_test net:

  caffe2go caffe convert -input data=100x1x28x28 lenet_train_test.prototxt lenet_iter_10000.caffemodel

Flags:
`

// stringList collects a repeated string flag.
type stringList []string

func (s *stringList) String() string     { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error { *s = append(*s, v); return nil }

// splitOutputs removes "-o init predict" (or --o) from args, the one flag
// that takes two values.
func splitOutputs(args []string) (rest []string, outputs []string, err error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			return append(rest, args[i:]...), outputs, nil
		}
		if a != "-o" && a != "--o" {
			if strings.HasPrefix(a, "-o=") || strings.HasPrefix(a, "--o=") {
				return nil, nil, usageError("caffe convert: -o takes two files: -o init_net.pb predict_net.pb")
			}
			rest = append(rest, a)
			continue
		}
		if outputs != nil {
			return nil, nil, usageError("caffe convert: -o given twice")
		}
		if i+2 >= len(args) || strings.HasPrefix(args[i+1], "-") || strings.HasPrefix(args[i+2], "-") {
			return nil, nil, usageError("caffe convert: -o takes two files: -o init_net.pb predict_net.pb")
		}
		outputs = []string{args[i+1], args[i+2]}
		i += 2
	}
	return rest, outputs, nil
}

func cmdCaffeConvert(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("caffe convert", flag.ContinueOnError)
	initPath := fs.String("init_net", "init_net.pb", "the init net to write")
	predictPath := fs.String("predict_net", "predict_net.pb", "the predict net to write")
	inputs := inputFlags{}
	fs.Var(inputs, "input", "`name=d0xd1x...`: the shape of an input blob, such as a data layer's top: data=64x3x224x224 (repeatable)")
	var stages stringList
	fs.Var(&stages, "stage", "a NetState stage for the layers' include and exclude rules (repeatable)")
	level := fs.Int("level", 0, "the NetState level for the layers' include and exclude rules")
	verbose := fs.Bool("v", false, "list each layer's operators and output shapes")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), caffeConvertUsage)
		fs.PrintDefaults()
	}
	rest, outputs, err := splitOutputs(args)
	if err != nil {
		fs.SetOutput(stderr)
		fs.Usage()
		return err
	}
	// Flags may come before, between or after the two files.
	var files []string
	for {
		if err := parseFlags(fs, rest, stdout, stderr); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(files) != 2 {
		fs.Usage()
		return usageError(fmt.Sprintf("caffe convert: want a prototxt and a caffemodel (%d files given)", len(files)))
	}
	if outputs != nil {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if set["init_net"] || set["predict_net"] {
			return usageError("caffe convert: -o and -init_net/-predict_net both name the outputs")
		}
		*initPath, *predictPath = outputs[0], outputs[1]
	}
	net, err := caffe.ReadNet(files[0])
	if err != nil {
		return err
	}
	weights, err := caffe.ReadWeights(files[1])
	if err != nil {
		return err
	}
	opts := []caffe.Option{caffe.Level(*level), caffe.Stages(stages...)}
	for name, spec := range inputs {
		opts = append(opts, caffe.InputShape(name, spec.dims...))
	}
	conv, err := caffe.Convert(net, weights, opts...)
	if err != nil {
		return err
	}
	if err := netdef.WriteNetDef(*initPath, conv.Init); err != nil {
		return err
	}
	if err := netdef.WriteNetDef(*predictPath, conv.Predict); err != nil {
		return err
	}
	return writeConversion(stdout, conv, *verbose, *initPath, *predictPath)
}

// writeConversion reports what convert made.
func writeConversion(w io.Writer, conv *caffe.Converted, verbose bool, initPath, predictPath string) error {
	values := 0
	for _, op := range conv.Init.Op {
		if a := netdef.FindArg(op.Arg, "values"); a != nil {
			values += len(a.Floats)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d Caffe layers → %d operators; %d parameters (%d trained values)\n",
		conv.Predict.GetName(), len(conv.Layers), len(conv.Predict.Op), len(conv.Init.Op), values)
	for _, l := range conv.Layers {
		if !verbose {
			break
		}
		name := l.Name
		if l.Merged != "" {
			name += " + " + l.Merged
		}
		var types []string
		for _, op := range conv.Predict.Op[l.First:l.End] {
			types = append(types, op.GetType())
		}
		var tops []string
		for i, blob := range l.Blobs {
			tops = append(tops, blob+" "+shapeText(l.Shapes[i]))
		}
		fmt.Fprintf(&b, "  %-20s %-16s → %-28s %s\n", name, l.Type, strings.Join(types, ", "), strings.Join(tops, ", "))
	}
	list := func(names []string) string {
		var parts []string
		for _, n := range names {
			parts = append(parts, n+" "+shapeText(conv.Shapes[n]))
		}
		return strings.Join(parts, ", ")
	}
	fmt.Fprintf(&b, "inputs:  %s\noutputs: %s\nwrote %s and %s\n", list(conv.Inputs), list(conv.Outputs), initPath, predictPath)
	_, err := io.WriteString(w, b.String())
	return err
}

// shapeText writes a shape as 64x3x224x224, ? for an unknown dimension,
// or "(shape unknown)".
func shapeText(s []int) string {
	if s == nil {
		return "(shape unknown)"
	}
	parts := make([]string, len(s))
	for i, d := range s {
		if d < 0 {
			parts[i] = "?"
		} else {
			parts[i] = fmt.Sprint(d)
		}
	}
	if len(parts) == 0 {
		return "(scalar)"
	}
	return strings.Join(parts, "x")
}
