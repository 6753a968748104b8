// Command caffe2go runs caffe2go scripts, opens a REPL, inspects, draws and
// benchmarks nets, converts and trains Caffe models, and checks stores.
//
// Usage:
//
//	caffe2go run script.star [args...]   run a script (sys.argv = [script, args...])
//	caffe2go repl                        interactive session (line editing, history, help(x))
//	caffe2go net show net.pb             print a NetDef in the protobuf text format
//	caffe2go net draw [-format dot|svg] [-o out.dot|out.svg] net.pb
//	                                     draw a NetDef as a Graphviz DOT graph or an SVG picture
//	caffe2go bench [flags] net.pb        time a net and each of its operators
//	caffe2go caffe convert [flags] net.prototxt weights.caffemodel [-o init_net.pb predict_net.pb]
//	                                     translate a Caffe model into Caffe2 init and predict nets
//	caffe2go caffe train -solver solver.prototxt [-devices N] [-snapshot ID]
//	                                     train as Caffe's caffe train does
//	caffe2go caffe convert-mnist images.gz labels.gz DIR
//	                                     MNIST idx files into a LevelDB of Caffe Datums
//	caffe2go net weights -blob NAME SOURCE -o grid.png
//	                                     draw a 4-D filter blob as a PNG grid
//	caffe2go store check|repair DIR      check a store, or salvage a damaged one
//	caffe2go version                     print the version
//
// Every command and subcommand prints its usage with -h.
//
// Scripts are Starlark with Caffe2's Python modules (workspace, core, np,
// model_helper, brew, optimizer, data_parallel_model, utils, caffe2_pb2);
// see package script. Nets are read in the binary format, or in the text
// format when the file name ends in .pbtxt or .prototxt; a file of
// another name that holds text is read as text too, with a note, as
// Caffe2's ReadProtoFromFile does. An empty file is an error.
//
// bench runs a model-zoo predict net without its init net given the data
// input's shape: -input data=1x3x224x224 -random-weights -width 64 makes
// up every parameter (a predict net does not record the output channels
// of its Conv and FC layers, hence -width).
//
// Install from a clone of the repository, in its root folder:
//
//	go install ./cmd/caffe2go
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
)

const usage = `caffe2go: Caffe2's workspace runtime in Go.

Usage:
  caffe2go run script.star [args...]   run a script (sys.argv = [script, args...])
  caffe2go repl [-history file]        interactive session with line editing and history
  caffe2go net show net.pb             print a NetDef in the protobuf text format
  caffe2go net draw [-format dot|svg] [-o out.dot|out.svg] net.pb
                                       draw a NetDef (DOT for Graphviz, or a laid-out SVG)
  caffe2go bench [flags] net.pb        benchmark a net and each of its operators
  caffe2go caffe convert [flags] net.prototxt weights.caffemodel [-o init_net.pb predict_net.pb]
                                       translate a Caffe model into Caffe2 init and predict nets
  caffe2go caffe train -solver solver.prototxt [-devices N] [-snapshot ID]
                                       train as Caffe's caffe train does
  caffe2go caffe convert-mnist images.gz labels.gz DIR
                                       MNIST idx files into a LevelDB of Caffe Datums
  caffe2go net weights -blob NAME SOURCE -o grid.png
                                       draw a 4-D filter blob as a PNG grid
  caffe2go store check|repair DIR      check a checkpoint store, or salvage a damaged one
  caffe2go version                     print the version

Run "caffe2go <command> -h" for a command's flags.
`

func main() {
	os.Exit(realMain(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// realMain runs the command line args and returns the exit status: 0 for
// success, 1 for a failure, 2 for a usage error.
func realMain(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "run":
		err = cmdRun(args[1:], stdout, stderr)
	case "repl":
		err = cmdREPL(args[1:], stdin, stdout, stderr)
	case "net":
		err = cmdNet(args[1:], stdout, stderr)
	case "bench":
		err = cmdBench(args[1:], stdout, stderr)
	case "caffe":
		err = cmdCaffe(args[1:], stdout, stderr)
	case "store":
		err = cmdStore(args[1:], stdout, stderr)
	case "version":
		err = cmdVersion(args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "caffe2go: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	switch e := err.(type) {
	case nil:
		return 0
	case usageError:
		fmt.Fprintf(stderr, "caffe2go %s\n", e)
		return 2
	case reportedError:
		return 1
	case interruptedError:
		return interruptedStatus
	}
	fmt.Fprintf(stderr, "caffe2go %s: %v\n", args[0], err)
	return 1
}

// parseFlags parses a command's flags. -h or -help prints the command's
// usage to stdout and returns flag.ErrHelp, which exits with status 0; a
// bad flag prints the usage to stderr and returns a usageError naming the
// flag.
func parseFlags(fs *flag.FlagSet, args []string, stdout, stderr io.Writer) error {
	fs.SetOutput(io.Discard)
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		fs.SetOutput(stdout)
		fs.Usage()
		return flag.ErrHelp
	}
	fs.SetOutput(stderr)
	if err != nil {
		fs.Usage()
		return usageError(fs.Name() + ": " + err.Error())
	}
	return nil
}

func cmdVersion(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: caffe2go version\n\nPrints the versions of caffe2go, Go and Starlark.")
	}
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usageError("version: unexpected arguments")
	}
	_, err := fmt.Fprintln(stdout, versionString())
	return err
}

// usageError is a command-line mistake; its text is printed with the
// command's usage.
type usageError string

func (e usageError) Error() string { return string(e) }

// reportedError is a failure whose description was already printed (such
// as a script's traceback).
type reportedError struct{}

func (reportedError) Error() string { return "failed" }

// interruptedStatus is the exit status of a run stopped by Ctrl-C or
// SIGTERM, as shells report a process killed by SIGINT (128 + 2).
const interruptedStatus = 130

// interruptedError is a script stopped by a signal, its traceback printed.
type interruptedError struct{}

func (interruptedError) Error() string { return "interrupted" }

// versionString describes the build: the module version ("(devel)" when
// built inside its own tree), the Go version and the Starlark version.
func versionString() string {
	version, starlarkVersion := "(devel)", "unknown"
	if info, ok := debug.ReadBuildInfo(); ok {
		if info.Main.Version != "" {
			version = info.Main.Version
		}
		for _, dep := range info.Deps {
			if dep.Path == "go.starlark.net" {
				starlarkVersion = dep.Version
			}
		}
	}
	return fmt.Sprintf("caffe2go %s (%s %s/%s, go.starlark.net %s)", version, runtime.Version(), runtime.GOOS, runtime.GOARCH, starlarkVersion)
}
