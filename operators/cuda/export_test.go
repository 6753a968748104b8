package cuda

// The tables, for the external tests that check them against the CPU
// operators (which import operators/std, which imports this package in
// cuda builds).
var (
	Elementwise = elementwise
	HostOnly    = hostOnly
)
