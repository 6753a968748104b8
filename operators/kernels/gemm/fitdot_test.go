package gemm

import (
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFitDot refits useDot's cost model on this machine. It is a tool
// rather than a check, so it runs only when asked:
//
//	go test ./operators/kernels/gemm -run TestFitDot -fitdot -v
//
// It times, on one goroutine, each shape on the blocked path and on the dot
// path of the kernel this machine runs, fits each path's model by least
// squares on the relative error,
//
//	blocked: m·⌈n⌉nr·k/E + T·n·k
//	dot:     ⌈m⌉4·⌈n⌉3·(k+R)/D
//
// (in multiply-adds at the peak rate, E fixed at 0.95 to set the unit; T
// is the cost of transposing one value of B into strips, R the cost of the
// dot kernel's final reduction in steps of k, D the dot kernel's
// efficiency against the blocked one's), and prints the times, which path
// each model picks for each shape, and the refitted constants for useDot.
// -fitdot.shapes replaces the default shapes with a list such as
// "256x9x512,4x512x512" (m×n×k, B transposed).
func TestFitDot(t *testing.T) {
	if !*fitDot {
		t.Skip("a tool: run with -fitdot to refit useDot's cost model on this machine")
	}
	kern := stateFor[float32]().kern
	if kern.dot == nil {
		t.Skipf("the %s kernel has no dot path", kern.name)
	}
	shapes := defaultFitShapes
	if *fitDotShapes != "" {
		var err error
		if shapes, err = parseShapes(*fitDotShapes); err != nil {
			t.Fatal(err)
		}
	}
	blockedKern := *kern
	blockedKern.dot = nil // useDot is false without a dot kernel
	var timings []fitTiming
	for _, s := range shapes {
		m, n, k := s[0], s[1], s[2]
		a, b, c := fitData(m*k), fitData(n*k), make([]float32, m*n)
		blocked := minTime(func() {
			gemm(&blockedKern, 1, false, true, m, n, k, 1, a, k, b, k, 0, c, n)
		})
		dot := minTime(func() {
			p := problem[float32]{kern: kern, transB: true, m: m, n: n, k: k, alpha: 1, a: a, lda: k, b: b, ldb: k, c: c, ldc: n}
			dotProduct(state32, p, 1)
		})
		timings = append(timings, fitTiming{m: m, n: n, k: k, blocked: blocked, dot: dot})
	}
	fit := fitDotModel(timings, kern.nr)
	out := os.Stdout
	fmt.Fprintf(out, "# useDot cost model fitted on %s, kernel %s (nr %d), 1 goroutine\n", cpuModel(), kern.name, kern.nr)
	fmt.Fprintf(out, "# %-14s %11s %11s %8s %9s %9s\n", "m×n×k", "blocked µs", "dot µs", "faster", "now picks", "fit picks")
	nowOK, fitOK := 0, 0
	for _, tm := range timings {
		faster := "blocked"
		if tm.dot < tm.blocked {
			faster = "dot"
		}
		now := pathName(useDot(kern, false, true, tm.m, tm.n, tm.k))
		picked := pathName(fit.dotCost(tm.m, tm.n, tm.k) < fit.blockedCost(tm.m, tm.n, tm.k, kern.nr))
		nowOK += tm.within(now, 1.25)
		fitOK += tm.within(picked, 1.25)
		fmt.Fprintf(out, "  %-14s %11.1f %11.1f %8s %9s %9s\n", fmt.Sprintf("%d×%d×%d", tm.m, tm.n, tm.k),
			tm.blocked.Seconds()*1e6, tm.dot.Seconds()*1e6, faster, now, picked)
	}
	fmt.Fprintf(out, "# within 25%% of the faster path: the model now %d of %d shapes, the refitted one %d\n", nowOK, len(timings), fitOK)
	fmt.Fprintf(out, "# refitted: blocked at %.2f of peak plus %.1f per transposed value of B; dot at %.2f, reduction %.0f steps of k\n", fit.e, fit.t, fit.d, fit.r)
	fmt.Fprintf(out, "# useDot:\n")
	fmt.Fprintf(out, "\tblocked := float64(m*roundUp(n, kern.nr)*k)/%.2f + %.1f*float64(n*k)\n", fit.e, fit.t)
	fmt.Fprintf(out, "\tdot := float64(roundUp(m, dotRows)*roundUp(n, dotCols)*(k+%.0f)) / %.2f\n", fit.r, fit.d)
}

var (
	fitDot       = flag.Bool("fitdot", false, "run TestFitDot: time the dot and blocked GEMM paths and refit useDot's cost model")
	fitDotShapes = flag.String("fitdot.shapes", "", "TestFitDot's shapes, m×n×k with B transposed, such as 256x9x512,4x512x512 (default: the 21 of dot.go)")
)

// defaultFitShapes are the 21 shapes that dot.go describes the model as
// fitted on (the list itself was not kept; these follow its description):
// a long k with n = 9, 10, 24 and 25; 1 to 16 rows with n of 256 or 512;
// n = 16, 32 and 48 with k of 32 to 64; m ≥ 64 with a wide n.
var defaultFitShapes = [][3]int{
	{256, 9, 512}, {64, 10, 500}, {20, 25, 576}, {256, 24, 512},
	{1, 256, 512}, {2, 256, 512}, {4, 256, 512}, {8, 256, 512}, {16, 256, 512},
	{1, 512, 512}, {2, 512, 512}, {4, 512, 512}, {8, 512, 512}, {16, 512, 512},
	{256, 16, 64}, {256, 32, 32}, {256, 48, 64}, {50, 32, 64},
	{64, 128, 512}, {256, 256, 512}, {128, 512, 256},
}

// parseShapes reads a comma-separated list of m×n×k (or mxnxk).
func parseShapes(list string) ([][3]int, error) {
	var out [][3]int
	for _, f := range strings.Split(list, ",") {
		dims := strings.FieldsFunc(strings.TrimSpace(f), func(r rune) bool { return r == 'x' || r == '×' })
		if len(dims) != 3 {
			return nil, fmt.Errorf("shape %q: want m×n×k", f)
		}
		var s [3]int
		for i, d := range dims {
			v, err := strconv.Atoi(d)
			if err != nil || v < 1 {
				return nil, fmt.Errorf("shape %q: want positive m×n×k", f)
			}
			s[i] = v
		}
		out = append(out, s)
	}
	return out, nil
}

// fitTiming is one shape's time on each path.
type fitTiming struct {
	m, n, k      int
	blocked, dot time.Duration
}

// within is 1 when the path taken is at most ratio times slower than the
// faster one.
func (tm fitTiming) within(path string, ratio float64) int {
	took, best := tm.blocked, min(tm.blocked, tm.dot)
	if path == "dot" {
		took = tm.dot
	}
	if float64(took) <= ratio*float64(best) {
		return 1
	}
	return 0
}

func pathName(dot bool) string {
	if dot {
		return "dot"
	}
	return "blocked"
}

// dotModel is useDot's cost model: see TestFitDot.
type dotModel struct{ e, t, d, r float64 }

func (f dotModel) blockedCost(m, n, k, nr int) float64 {
	return float64(m*roundUp(n, nr)*k)/f.e + f.t*float64(n*k)
}

func (f dotModel) dotCost(m, n, k int) float64 {
	return float64(roundUp(m, dotRows)*roundUp(n, dotCols)) * (float64(k) + f.r) / f.d
}

// fitDotModel fits the blocked path's time to a·m·⌈n⌉nr·k + b·n·k and the
// dot path's to c·⌈m⌉4·⌈n⌉3·k + d·⌈m⌉4·⌈n⌉3, each by least squares on the
// relative error, and expresses them in useDot's terms: the blocked path
// at 0.95 of the peak sets the unit (a multiply-add at the peak rate takes
// a·0.95 seconds), so that T = b/unit, D = unit/c and R = d/c.
func fitDotModel(ts []fitTiming, nr int) dotModel {
	var bx, dx [][2]float64
	var bt, dt []float64
	for _, tm := range ts {
		bx = append(bx, [2]float64{float64(tm.m * roundUp(tm.n, nr) * tm.k), float64(tm.n * tm.k)})
		bt = append(bt, tm.blocked.Seconds())
		tiles := float64(roundUp(tm.m, dotRows) * roundUp(tm.n, dotCols))
		dx = append(dx, [2]float64{tiles * float64(tm.k), tiles})
		dt = append(dt, tm.dot.Seconds())
	}
	a, b := relativeLeastSquares(bx, bt)
	c, d := relativeLeastSquares(dx, dt)
	const e = 0.95
	unit := a * e // seconds per multiply-add at the peak rate
	return dotModel{e: e, t: b / unit, d: unit / c, r: d / c}
}

// relativeLeastSquares returns the p, q ≥ 0 that minimize the sum of
// ((p·x₀ + q·x₁ − t)/t)² over the rows, so that short and long times
// weigh alike.
func relativeLeastSquares(x [][2]float64, t []float64) (p, q float64) {
	var s00, s01, s11, r0, r1 float64
	for i, row := range x {
		u, v := row[0]/t[i], row[1]/t[i]
		s00 += u * u
		s01 += u * v
		s11 += v * v
		r0 += u
		r1 += v
	}
	if det := s00*s11 - s01*s01; det != 0 {
		p, q = (r0*s11-r1*s01)/det, (r1*s00-r0*s01)/det
	}
	if p < 0 || q < 0 || math.IsNaN(p) || math.IsNaN(q) {
		// A negative term fits noise: keep the other one alone.
		p0, q0 := r0/s00, 0.0
		p1, q1 := 0.0, r1/s11
		if relativeError(x, t, p0, q0) <= relativeError(x, t, p1, q1) {
			return p0, q0
		}
		return p1, q1
	}
	return p, q
}

func relativeError(x [][2]float64, t []float64, p, q float64) float64 {
	var sum float64
	for i, row := range x {
		d := (p*row[0] + q*row[1] - t[i]) / t[i]
		sum += d * d
	}
	return sum
}

// minTime is the least time one call of f takes over five windows of at
// least 10 ms each (the machine may be busy; the least is the least
// disturbed).
func minTime(f func()) time.Duration {
	f()
	best := time.Duration(math.MaxInt64)
	for range 5 {
		n, start := 0, time.Now()
		for time.Since(start) < 10*time.Millisecond {
			f()
			n++
		}
		best = min(best, time.Since(start)/time.Duration(n))
	}
	return best
}

func fitData(n int) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(i%29)*0.0625 - 0.875
	}
	return v
}

// cpuModel is the model name in /proc/cpuinfo, where there is one.
func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				return strings.TrimSpace(v)
			}
		}
	}
	return "an unknown CPU"
}

// TestFitDotModel checks the fit on times made from known coefficients,
// with ±2% of noise: it recovers the blocked path's transposing cost, the
// dot path's efficiency and reduction cost, and so the same choices.
func TestFitDotModel(t *testing.T) {
	want := dotModel{e: 0.95, t: 12, d: 0.8, r: 120}
	const nr, peak = 16, 1e-10 // seconds per multiply-add at the peak rate
	var ts []fitTiming
	for i, s := range defaultFitShapes {
		m, n, k := s[0], s[1], s[2]
		noise := 1 + 0.02*float64(i%3-1)
		ts = append(ts, fitTiming{m: m, n: n, k: k,
			blocked: time.Duration(want.blockedCost(m, n, k, nr) * peak * noise * 1e9),
			dot:     time.Duration(want.dotCost(m, n, k) * peak / noise * 1e9),
		})
	}
	got := fitDotModel(ts, nr)
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"T", got.t, want.t}, {"D", got.d, want.d}, {"R", got.r, want.r}} {
		if math.Abs(c.got-c.want) > 0.15*c.want {
			t.Errorf("%s = %.3g, want %.3g (±15%%)", c.name, c.got, c.want)
		}
	}
	// Without noise the fit is exact.
	for i := range ts {
		s := defaultFitShapes[i]
		ts[i].blocked = time.Duration(want.blockedCost(s[0], s[1], s[2], nr) * peak * 1e9)
		ts[i].dot = time.Duration(want.dotCost(s[0], s[1], s[2]) * peak * 1e9)
	}
	got = fitDotModel(ts, nr)
	if math.Abs(got.t-want.t) > 1e-3*want.t || math.Abs(got.d-want.d) > 1e-3 || math.Abs(got.r-want.r) > 1e-3*want.r {
		t.Errorf("noiseless fit %+v, want %+v", got, want)
	}
}

func TestParseShapes(t *testing.T) {
	got, err := parseShapes("256x9x512, 4×512×512")
	if err != nil || len(got) != 2 || got[0] != [3]int{256, 9, 512} || got[1] != [3]int{4, 512, 512} {
		t.Errorf("parseShapes = %v, %v", got, err)
	}
	for _, bad := range []string{"", "1x2", "1x2x0", "axbxc", "1x2x3x4"} {
		if _, err := parseShapes(bad); err == nil {
			t.Errorf("parseShapes(%q): no error", bad)
		}
	}
}
