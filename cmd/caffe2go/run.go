package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/chzyer/readline"
	"go.starlark.net/starlark"
	"go.starlark.net/syntax"

	"github.com/caffe2go/caffe2go/script"
)

func cmdRun(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: caffe2go run script.star [args...]\n\nRuns a script; sys.argv is [script, args...]. A failure prints the traceback and exits with status 1.")
	}
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() < 1 {
		fs.Usage()
		return usageError("run: no script given")
	}
	file := fs.Arg(0)
	src, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	in := script.New(script.Options{Stdout: stdout, Argv: fs.Args()})
	ctx, stop := interruptible(syscall.SIGTERM)
	defer stop()
	if err := in.Exec(ctx, file, src); err != nil {
		fmt.Fprintln(stderr, script.FormatError(err))
		if ctx.Err() != nil {
			return interruptedError{}
		}
		return reportedError{}
	}
	return nil
}

// errInterrupted is the cause of a context interruptible cancels.
var errInterrupted = errors.New("interrupted")

// interruptible returns a context that the first Ctrl-C (or one of the
// extra signals) cancels with the cause errInterrupted, which stops the
// script or REPL call in progress before its next operator; a second one
// ends the process with status 130 at once, for a call that does not stop.
// stop releases the signals.
func interruptible(extra ...os.Signal) (ctx context.Context, stop func()) {
	ctx, cancel := context.WithCancelCause(context.Background())
	sig := make(chan os.Signal, 2)
	done := make(chan struct{})
	signal.Notify(sig, append([]os.Signal{os.Interrupt}, extra...)...)
	go func() {
		select {
		case <-sig:
			cancel(errInterrupted)
		case <-done:
			return
		}
		select {
		case <-sig:
			os.Exit(interruptedStatus)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(done)
		cancel(nil)
	}
}

// lineReader reads the REPL's input one line at a time.
type lineReader interface {
	Readline() (string, error)
	SetPrompt(prompt string)
}

// plainReader reads lines from a non-terminal input, echoing nothing.
type plainReader struct {
	sc     *bufio.Scanner
	out    io.Writer
	prompt string
}

func (r *plainReader) SetPrompt(p string) { r.prompt = p }

func (r *plainReader) Readline() (string, error) {
	fmt.Fprint(r.out, r.prompt)
	if !r.sc.Scan() {
		fmt.Fprintln(r.out)
		if err := r.sc.Err(); err != nil {
			return "", err
		}
		return "", io.EOF
	}
	return r.sc.Text(), nil
}

const replBanner = `%s
Starlark with Caffe2's modules: workspace, core, np, brew, model_helper, optimizer,
data_parallel_model, utils, caffe2_pb2.
help() for an overview, help(x) for one binding. A blank line ends a multi-line statement;
Ctrl-D exits.
`

func cmdREPL(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("repl", flag.ContinueOnError)
	history := fs.String("history", defaultHistoryFile(), "file that keeps the input history (\"\" for none)")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: caffe2go repl [-history file]\n\nAn interactive session with line editing and history.")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return usageError("repl: unexpected arguments")
	}
	in := script.New(script.Options{Stdout: stdout, Argv: []string{"<stdin>"}})
	fmt.Fprintf(stdout, replBanner, versionString())

	var rl lineReader
	if f, ok := stdin.(*os.File); ok && readline.IsTerminal(int(f.Fd())) {
		inst, err := readline.NewEx(&readline.Config{
			Prompt:          ">>> ",
			HistoryFile:     *history,
			AutoComplete:    completer{in},
			InterruptPrompt: "^C",
			EOFPrompt:       "",
			Stdin:           f,
			Stdout:          stdout,
			Stderr:          stderr,
		})
		if err != nil {
			return err
		}
		defer inst.Close()
		rl = inst
	} else {
		sc := bufio.NewScanner(stdin)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		rl = &plainReader{sc: sc, out: stdout}
	}
	return repl(in, rl, stdout, stderr)
}

func defaultHistoryFile() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".caffe2go_history")
}

// repl reads, evaluates and prints until the input ends. An expression's
// value is shown (NumPy's repr for arrays); statements run for their
// effects; errors print their traceback and the session goes on.
func repl(in *script.Interpreter, rl lineReader, stdout, stderr io.Writer) error {
	for {
		err := replOnce(in, rl, stdout, stderr)
		switch {
		case err == nil:
		case errors.Is(err, io.EOF):
			return nil
		case errors.Is(err, readline.ErrInterrupt):
			fmt.Fprintln(stderr, "KeyboardInterrupt")
		default:
			return err
		}
	}
}

// replOnce reads one statement (several lines for a compound statement or
// an unfinished expression) and runs it. It returns an error only when
// reading fails.
func replOnce(in *script.Interpreter, rl lineReader, stdout, stderr io.Writer) error {
	rl.SetPrompt(">>> ")
	var readErr error
	read := func() ([]byte, error) {
		line, err := rl.Readline()
		rl.SetPrompt("... ")
		if err != nil {
			readErr = err
			return nil, err
		}
		return []byte(line + "\n"), nil
	}
	opts := *script.FileOptions()
	opts.LoadBindsGlobally = true
	f, err := opts.ParseCompoundStmt("<stdin>", read)
	if readErr != nil {
		return readErr
	}
	if err != nil {
		fmt.Fprintln(stderr, script.FormatError(err))
		return nil
	}
	ctx, stop := interruptible()
	defer stop()
	if expr := soleExpr(f); expr != nil {
		v, err := in.Eval(ctx, expr)
		if err != nil {
			fmt.Fprintln(stderr, script.FormatError(err))
			return nil
		}
		in.Globals()["_"] = v
		if v != starlark.None {
			fmt.Fprintln(stdout, script.Display(v))
		}
		return nil
	}
	if err := in.ExecREPLChunk(ctx, f); err != nil {
		fmt.Fprintln(stderr, script.FormatError(err))
	}
	return nil
}

func soleExpr(f *syntax.File) syntax.Expr {
	if len(f.Stmts) == 1 {
		if stmt, ok := f.Stmts[0].(*syntax.ExprStmt); ok {
			return stmt.X
		}
	}
	return nil
}

// completer completes global names and attributes (workspace.Fe<TAB>) in
// the REPL.
type completer struct {
	in *script.Interpreter
}

// Do returns the completions of the identifier chain that ends at pos.
func (c completer) Do(line []rune, pos int) ([][]rune, int) {
	start := pos
	for start > 0 && (isIdentRune(line[start-1]) || line[start-1] == '.') {
		start--
	}
	word := string(line[start:pos])
	parts := strings.Split(word, ".")
	prefix := parts[len(parts)-1]
	var names []string
	if len(parts) == 1 {
		for name := range c.in.Globals() {
			names = append(names, name)
		}
		for name := range c.in.Predeclared() {
			names = append(names, name)
		}
		names = append(names, starlark.Universe.Keys()...)
	} else {
		v, ok := c.in.Globals()[parts[0]]
		if !ok {
			v, ok = c.in.Predeclared()[parts[0]]
		}
		for _, p := range parts[1 : len(parts)-1] {
			if !ok {
				break
			}
			attrs, isAttrs := v.(starlark.HasAttrs)
			if !isAttrs {
				ok = false
				break
			}
			next, err := attrs.Attr(p)
			v, ok = next, err == nil && next != nil
		}
		if attrs, isAttrs := v.(starlark.HasAttrs); ok && isAttrs {
			names = attrs.AttrNames()
		}
	}
	sort.Strings(names)
	var out [][]rune
	seen := map[string]bool{}
	for _, n := range names {
		if strings.HasPrefix(n, prefix) && !seen[n] && !strings.HasPrefix(n, "_") {
			seen[n] = true
			out = append(out, []rune(n[len(prefix):]))
		}
	}
	return out, len([]rune(prefix))
}

func isIdentRune(r rune) bool {
	return r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9')
}
