package math

import (
	"fmt"
	"strings"

	"github.com/caffe2go/caffe2go/operators"
)

// plan maps the elements of a broadcast operation onto its two operands.
// The output's dimensions are merged into as few groups as possible; along
// each group an operand either advances with the output or is broadcast
// (stride 0). Its buffers are reused from run to run.
type plan struct {
	out    []int // the output shape (NumPy mode)
	dims   []int // merged groups, outermost first; at least one
	sa, sb []int // element strides of A and B in each group
	idx    []int // odometer over all groups but the last
	size   int   // number of output elements
	offA   int   // offset of the current row in A
	offB   int   // offset of the current row in B
}

// dimAt returns dimension i of shape s aligned on the right within n
// dimensions (1 where s has no such dimension).
func dimAt(s []int, i, n int) int {
	j := i - (n - len(s))
	if j < 0 {
		return 1
	}
	return s[j]
}

// broadcastShape sets p.out to the NumPy broadcast of shapes a and b and
// reports whether they are broadcastable.
func (p *plan) broadcastShape(a, b []int) bool {
	n := max(len(a), len(b))
	p.out = p.out[:0]
	for i := 0; i < n; i++ {
		da, db := dimAt(a, i, n), dimAt(b, i, n)
		switch {
		case da == db || db == 1:
			p.out = append(p.out, da)
		case da == 1:
			p.out = append(p.out, db)
		default:
			return false
		}
	}
	return true
}

// build prepares the plan for operands of shapes a and b, which must be
// NumPy-broadcastable; the output's elements are those of their broadcast,
// in row-major order.
func (p *plan) build(a, b []int) {
	n := max(len(a), len(b))
	p.dims, p.sa, p.sb = p.dims[:0], p.sa[:0], p.sb[:0]
	size := 1
	var lastA, lastB bool
	for i := 0; i < n; i++ {
		da, db := dimAt(a, i, n), dimAt(b, i, n)
		d := da
		if da == 1 {
			d = db
		}
		size *= d
		if d == 1 {
			continue
		}
		bcA, bcB := da == 1, db == 1
		if k := len(p.dims); k > 0 && bcA == lastA && bcB == lastB {
			p.dims[k-1] *= d
			continue
		}
		p.dims = append(p.dims, d)
		p.sa = append(p.sa, stride01(bcA))
		p.sb = append(p.sb, stride01(bcB))
		lastA, lastB = bcA, bcB
	}
	if len(p.dims) == 0 {
		p.dims, p.sa, p.sb = append(p.dims, 1), append(p.sa, 1), append(p.sb, 1)
	}
	stA, stB := 1, 1
	for g := len(p.dims) - 1; g >= 0; g-- {
		if p.sa[g] != 0 {
			p.sa[g] = stA
			stA *= p.dims[g]
		}
		if p.sb[g] != 0 {
			p.sb[g] = stB
			stB *= p.dims[g]
		}
	}
	p.size = size
	if cap(p.idx) < len(p.dims) {
		p.idx = make([]int, len(p.dims))
	}
	p.idx = p.idx[:len(p.dims)]
}

func stride01(broadcast bool) int {
	if broadcast {
		return 0
	}
	return 1
}

// buildScalar prepares the plan for a B of one element broadcast over an
// A of size elements.
func (p *plan) buildScalar(size int) {
	a, b := [1]int{size}, [1]int{1}
	p.build(a[:], b[:])
}

// buildBlock prepares the plan for Caffe2's legacy broadcast of B over A,
// with pre, n and post from legacyBlock.
func (p *plan) buildBlock(pre, n, post int) {
	a, b := [3]int{pre, n, post}, [3]int{1, n, 1}
	p.build(a[:], b[:])
}

// inner returns the length of a row (the innermost group) and the strides
// of A and B along it (each 0 or 1).
func (p *plan) inner() (n, sa, sb int) {
	k := len(p.dims) - 1
	return p.dims[k], p.sa[k], p.sb[k]
}

// reset moves the cursor to the first row.
func (p *plan) reset() {
	clear(p.idx)
	p.offA, p.offB = 0, 0
}

// step moves the cursor to the next row.
func (p *plan) step() {
	for d := len(p.dims) - 2; d >= 0; d-- {
		p.idx[d]++
		p.offA += p.sa[d]
		p.offB += p.sb[d]
		if p.idx[d] < p.dims[d] {
			return
		}
		p.idx[d] = 0
		p.offA -= p.sa[d] * p.dims[d]
		p.offB -= p.sb[d] * p.dims[d]
	}
}

// legacyBlock applies Caffe2's legacy broadcast rule to B's shape against
// A's: B's dimensions, without leading and trailing 1s, must equal A's
// starting at axis (-1: aligned with A's last dimensions). It returns the
// sizes of A's dimensions before, inside and after that block. A B of one
// element is handled by the caller.
func legacyBlock(a, b []int, axis int) (pre, n, post int, err error) {
	if len(b) > len(a) {
		return 0, 0, 0, fmt.Errorf("when broadcasting, B must have no more dimensions than A")
	}
	if axis == -1 {
		axis = len(a) - len(b)
	}
	if axis < 0 || axis > len(a)-len(b) {
		return 0, 0, 0, fmt.Errorf("broadcast axis should be in the range [0, %d], but axis = %d", len(a)-len(b), axis)
	}
	start := 0
	for start < len(b) && b[start] == 1 {
		start++
	}
	end := len(b) - 1
	for end >= start && b[end] == 1 {
		end--
	}
	pre, n, post = 1, 1, 1
	for i := 0; i < axis+start; i++ {
		pre *= a[i]
	}
	for i := start; i <= end; i++ {
		if a[i+axis] != b[i] {
			return 0, 0, 0, fmt.Errorf("broadcast dimension mismatch: dimension %d of A is %d, dimension %d of B is %d (axis %d)", i+axis, a[i+axis], i, b[i], axis)
		}
		n *= b[i]
	}
	for i := axis + end + 1; i < len(a); i++ {
		post *= a[i]
	}
	return pre, n, post, nil
}

// resolveAxis turns the axis / axis_str / order arguments into an axis
// (-1 when neither is given).
func resolveAxis(axis int, axisStr, order string) (int, error) {
	switch {
	case axis != -1 && axisStr != "":
		return 0, fmt.Errorf("args axis and axis_str cannot be used simultaneously")
	case axisStr == "":
		return axis, nil
	case len(axisStr) != 1:
		return 0, fmt.Errorf("unsupported axis string %q", axisStr)
	}
	i := strings.Index(order, axisStr)
	if i < 0 {
		return 0, fmt.Errorf("unrecognizable axis string %q from order string %q", axisStr, order)
	}
	return i, nil
}

// broadcastArgs holds the parsed broadcast arguments of a binary operator.
type broadcastArgs struct {
	legacy bool // broadcast=1: Caffe2's legacy rule; else NumPy
	axis   int  // legacy block start, -1 for suffix alignment
}

func parseBroadcastArgs(b *operators.Base) (broadcastArgs, error) {
	legacy := b.ArgBool("broadcast", false)
	axis := int(b.ArgInt("axis", -1))
	axisStr := b.ArgString("axis_str", "")
	if !legacy {
		if axis != -1 || axisStr != "" {
			return broadcastArgs{}, fmt.Errorf("do not specify axis or axis_str if broadcast is not enabled")
		}
		return broadcastArgs{axis: -1}, nil
	}
	axis, err := resolveAxis(axis, axisStr, b.ArgString("order", "NCHW"))
	if err != nil {
		return broadcastArgs{}, err
	}
	return broadcastArgs{legacy: true, axis: axis}, nil
}

// binaryShapes is the broadcast step shared by the binary operators: it
// checks the shapes of inputs 0 and 1 under the operator's rule, builds
// p, and returns the output shape (p.out or A's shape). An output that
// shares a blob with an input whose shape differs from the output's, or
// (legacy mode) with B, is an error.
func binaryShapes(o *operators.Base, args broadcastArgs, p *plan, aDims, bDims []int, bSize int) ([]int, error) {
	if args.legacy {
		if o.InputBlob(1) == o.OutputBlob(0) {
			return nil, o.Errorf("in-place is allowed only with the first tensor when broadcasting: output %q is input 1", o.OutputName(0))
		}
		if bSize == 1 {
			size := 1
			for _, d := range aDims {
				size *= d
			}
			p.buildScalar(size)
			return aDims, nil
		}
		pre, n, post, err := legacyBlock(aDims, bDims, args.axis)
		if err != nil {
			return nil, o.Errorf("%v: A (%q) has shape %v, B (%q) has shape %v", err, o.InputName(0), aDims, o.InputName(1), bDims)
		}
		p.buildBlock(pre, n, post)
		return aDims, nil
	}
	if !p.broadcastShape(aDims, bDims) {
		return nil, o.Errorf("Dimension mismatch - did you forget to set broadcast=1? A (%q) has shape %v, B (%q) has shape %v", o.InputName(0), aDims, o.InputName(1), bDims)
	}
	p.build(aDims, bDims)
	for i, d := range [2][]int{aDims, bDims} {
		if o.InputBlob(i) == o.OutputBlob(0) && !equalDims(d, p.out) {
			return nil, o.Errorf("output %q is input %d, whose shape %v differs from the broadcast shape %v", o.OutputName(0), i, d, p.out)
		}
	}
	return p.out, nil
}

func equalDims(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
