package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/caffe2go/caffe2go/persist"
)

const storeUsage = `usage: caffe2go store check DIR
       caffe2go store repair DIR

check reports which checkpoints and nets of the store in directory DIR (a
workspace's is <root>/caffe2go.store) are intact, and what is damaged or
lost, changing nothing; it exits with status 1 unless the store is
healthy. repair salvages the intact checkpoints and nets of a damaged
store into fresh badger files and moves the damaged files into
DIR/damaged-<time> (it deletes nothing); it exits with status 1 when
something could not be salvaged. A store that a process has open cannot be
repaired.
`

func cmdStore(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, storeUsage)
		return usageError("store: want a subcommand: check or repair")
	}
	switch args[0] {
	case "check", "repair":
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, storeUsage)
		return flag.ErrHelp
	default:
		fmt.Fprint(stderr, storeUsage)
		return usageError(fmt.Sprintf("store: unknown subcommand %q (want check or repair)", args[0]))
	}
	name := "store " + args[0]
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), storeUsage) }
	if err := parseFlags(fs, args[1:], stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usageError(name + ": want one store directory")
	}
	check := persist.Check
	if args[0] == "repair" {
		check = persist.Repair
	}
	r, err := check(fs.Arg(0))
	if r != nil {
		fmt.Fprint(stdout, r)
	}
	if err != nil {
		return err
	}
	switch {
	case args[0] == "check" && !r.Healthy():
		fmt.Fprintf(stdout, "the store is damaged: caffe2go store repair %s salvages what is intact\n", fs.Arg(0))
		return reportedError{}
	case args[0] == "repair" && len(r.Lost) > 0:
		return reportedError{}
	case args[0] == "repair" && r.Moved != "":
		fmt.Fprintln(stdout, "repaired: nothing was lost")
	case args[0] == "repair":
		fmt.Fprintln(stdout, "the store is healthy: nothing to repair")
	}
	return nil
}
