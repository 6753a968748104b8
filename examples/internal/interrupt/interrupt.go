// Package interrupt gives the example programs Ctrl-C handling that keeps
// the work: the first SIGINT or SIGTERM cancels a context (the program
// stops after the step in progress, saves what it has and says so), a
// second one kills the process as usual.
package interrupt

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// ExitCode is the exit status of a program stopped by a signal, as shells
// report one killed by SIGINT (128 + 2).
const ExitCode = 130

// Context returns a context canceled by the first SIGINT or SIGTERM the
// process receives. After that the signals have their default effect
// again, so a second Ctrl-C ends a program that does not stop.
func Context() context.Context {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		<-ctx.Done()
		stop()
	}()
	return ctx
}

// Exit ends a program whose work returned err: status 0 for nil, ExitCode
// when err comes from ctx's cancellation (the message says the run was
// interrupted), 1 otherwise. prog prefixes the message.
func Exit(ctx context.Context, prog string, err error) {
	switch {
	case err == nil:
		os.Exit(0)
	case ctx.Err() != nil && errors.Is(err, ctx.Err()):
		fmt.Fprintf(os.Stderr, "%s: interrupted: %v\n", prog, err)
		os.Exit(ExitCode)
	default:
		fmt.Fprintf(os.Stderr, "%s: %v\n", prog, err)
		os.Exit(1)
	}
}
