package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/caffe2go/caffe2go/netdef"
)

const netUsage = `usage: caffe2go net show net.pb
       caffe2go net draw [-format dot|svg] [-o out.dot|out.svg] net.pb
       caffe2go net weights -blob NAME [-o grid.png] CHECKPOINT_OR_INIT_NET

show prints a NetDef in the protobuf text format; draw draws it; weights
draws a filter blob as a PNG grid. Run
"caffe2go net <subcommand> -h" for a subcommand's flags.
`

func cmdNet(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, netUsage)
		return usageError("net: want a subcommand: show, draw or weights")
	}
	switch args[0] {
	case "show":
		return cmdNetShow(args[1:], stdout, stderr)
	case "draw":
		return cmdNetDraw(args[1:], stdout, stderr)
	case "weights":
		return cmdNetWeights(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, netUsage)
		return flag.ErrHelp
	}
	fmt.Fprint(stderr, netUsage)
	return usageError(fmt.Sprintf("net: unknown subcommand %q (want show, draw or weights)", args[0]))
}

func cmdNetShow(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("net show", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: caffe2go net show net.pb\n\nPrints the NetDef in the protobuf text format (.pbtxt).")
	}
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usageError("net show: want one net file")
	}
	def, err := readNet(fs.Arg(0), stderr)
	if err != nil {
		return err
	}
	text, err := netdef.MarshalText(def)
	if err != nil {
		return err
	}
	_, err = stdout.Write(text)
	return err
}

// drawFormats maps the file extensions net draw writes to their formats.
var drawFormats = map[string]string{".dot": "dot", ".gv": "dot", ".svg": "svg"}

// drawFormat chooses net draw's format: the -format flag, else the -o
// file's extension, else DOT on standard output. An extension that names
// another format than -format, or that names none when -format is not
// given (net.png), is a usage error that says which formats there are.
func drawFormat(format, outPath string) (string, error) {
	if format != "" && format != "dot" && format != "svg" {
		return "", usageError(fmt.Sprintf("net draw: unknown -format %q (want dot or svg)", format))
	}
	if outPath == "" {
		if format == "" {
			return "dot", nil
		}
		return format, nil
	}
	ext := strings.ToLower(filepath.Ext(outPath))
	fromExt, known := drawFormats[ext]
	switch {
	case known && format != "" && format != fromExt:
		return "", usageError(fmt.Sprintf("net draw: -format %s disagrees with -o %s (%s means %s)", format, outPath, ext, fromExt))
	case known:
		return fromExt, nil
	case format != "":
		return format, nil
	}
	picture := "png"
	if ext != "" {
		picture = ext[1:]
	}
	return "", usageError(fmt.Sprintf("net draw: cannot tell the format of -o %s: net draw writes Graphviz DOT (.dot, .gv) and SVG (.svg); "+
		"name the file so or give -format dot|svg. For a %s picture, write DOT and convert it: dot -T%s net.dot -o net.%s",
		outPath, strings.ToUpper(picture), picture, picture))
}

func cmdNetDraw(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("net draw", flag.ContinueOnError)
	format := fs.String("format", "", "dot or svg (default: from the -o extension, .dot, .gv or .svg; dot on standard output)")
	outPath := fs.String("o", "", "output file (default: standard output)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: caffe2go net draw [-format dot|svg] [-o out.dot|out.svg] net.pb\n\n"+
			"Draws the net's operators (boxes) and blobs (ellipses). DOT is for Graphviz\n"+
			"(dot -Tpng net.dot -o net.png); SVG is laid out by caffe2go itself, so it\n"+
			"needs no Graphviz.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usageError("net draw: want one net file")
	}
	f, err := drawFormat(*format, *outPath)
	if err != nil {
		return err
	}
	def, err := readNet(fs.Arg(0), stderr)
	if err != nil {
		return err
	}
	var picture string
	if f == "svg" {
		picture = netSVG(def)
	} else {
		picture = netdef.DOT(def)
	}
	if *outPath == "" {
		_, err = io.WriteString(stdout, picture)
		return err
	}
	return os.WriteFile(*outPath, []byte(picture), 0o644)
}
