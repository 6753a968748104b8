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
       caffe2go net draw [-format dot|svg] [-o out] net.pb

show prints a NetDef in the protobuf text format; draw draws it. Run
"caffe2go net <subcommand> -h" for a subcommand's flags.
`

func cmdNet(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, netUsage)
		return usageError("net: want a subcommand: show or draw")
	}
	switch args[0] {
	case "show":
		return cmdNetShow(args[1:], stdout, stderr)
	case "draw":
		return cmdNetDraw(args[1:], stdout, stderr)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, netUsage)
		return flag.ErrHelp
	}
	fmt.Fprint(stderr, netUsage)
	return usageError(fmt.Sprintf("net: unknown subcommand %q (want show or draw)", args[0]))
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

func cmdNetDraw(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("net draw", flag.ContinueOnError)
	format := fs.String("format", "", "dot or svg (default: from the -o extension, else dot)")
	outPath := fs.String("o", "", "output file (default: standard output)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: caffe2go net draw [-format dot|svg] [-o out] net.pb\n\n"+
			"Draws the net's operators (boxes) and blobs (ellipses). DOT is for Graphviz\n"+
			"(dot -Tpng); SVG is laid out by caffe2go itself, so it needs no Graphviz.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usageError("net draw: want one net file")
	}
	f := *format
	if f == "" {
		switch strings.ToLower(filepath.Ext(*outPath)) {
		case ".svg":
			f = "svg"
		default:
			f = "dot"
		}
	}
	def, err := readNet(fs.Arg(0), stderr)
	if err != nil {
		return err
	}
	var picture string
	switch f {
	case "dot":
		picture = netdef.DOT(def)
	case "svg":
		picture = netSVG(def)
	default:
		return usageError(fmt.Sprintf("net draw: unknown format %q (want dot or svg)", f))
	}
	if *outPath == "" {
		_, err = io.WriteString(stdout, picture)
		return err
	}
	return os.WriteFile(*outPath, []byte(picture), 0o644)
}
