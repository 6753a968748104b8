// Package parallel runs kernel work on one shared set of long-lived worker
// goroutines; every multi-threaded kernel (GEMM, convolution and pooling,
// normalization, all-reduce) goes through it.
//
// A kernel splits its iteration space into parts, contiguous ranges of
// nearly equal size, and calls Run. The caller asks the pool for helpers
// and computes parts itself too: whoever comes first claims the next part,
// so a helper that starts late (its core busy, or every worker taken by
// other calls) costs no more than computing its part in the caller, and
// calls from several devices at once share the workers without waiting
// for each other. Workers are started on first need and never stop, and
// per-call state is recycled, so a parallel kernel in steady state starts
// no goroutine and allocates nothing.
//
// How many parts one call may use is the caller's thread budget, an
// argument of Parts: an operator gets it from the net it runs in
// (operators.Base.Threads), so that data-parallel replicas running at the
// same time share the cores instead of each splitting its kernels over all
// of them. GOMAXPROCS, read at each call, bounds it too: Parts never
// returns more, Run never has more goroutines computing parts of one call
// (a call split into more parts computes them in turns), and no more
// workers than could run beside a caller poll for work; the others block.
//
// Between calls a worker polls for the next one for a while before it
// blocks, since waking a blocked goroutine takes far longer than a small
// kernel; it learns how long from the gaps between its recent jobs (see
// gaps), so that it does not burn a core through the long gaps of a net's
// serial operators. A caller whose helpers are slow to finish sleeps
// rather than polls, and the last helper hands it its processor.
package parallel
