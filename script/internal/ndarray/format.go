package ndarray

import (
	"math"
	"strconv"
	"strings"

	"github.com/caffe2go/caffe2go/blob"
)

// NumPy's default print options.
const (
	printLineWidth = 75
	printThreshold = 1000
	printEdgeItems = 3
	printPrecision = 8
)

// Format renders t the way NumPy's str() does (sep " ", no prefix) or,
// with repr set, the way repr() does: array([...], dtype=...).
func Format(t *blob.Tensor, repr bool) string {
	dims := t.Dims()
	prefix, sep := "", " "
	if repr {
		prefix, sep = "array(", ", "
	}
	dtypeStr := "dtype=" + DTypeName(t.DataType()) + ")"
	skipDtype := !repr || (t.Size() > 0 && (t.DataType() == blob.Float64 || t.DataType() == blob.Int64 || t.DataType() == blob.Bool))

	if len(dims) == 0 {
		s := newElemFormatter(t, []int{0}).format(0)
		if repr {
			s = prefix + s
			if skipDtype {
				return s + ")"
			}
			return s + ", " + dtypeStr
		}
		return s
	}
	var body string
	if t.Size() == 0 {
		body = "[]"
		if repr && len(dims) != 1 {
			body += ", shape=" + ShapeString(dims)
		}
	} else {
		summarize := t.Size() > printThreshold
		f := newElemFormatter(t, shownIndices(dims, summarize))
		lineWidth := printLineWidth
		suffix := ""
		if repr {
			suffix = ")"
			if !skipDtype {
				suffix = ","
			}
		}
		lineWidth -= len(suffix)
		hanging := strings.Repeat(" ", len(prefix)+1)
		body = formatRec(t, f, nil, hanging, lineWidth, sep, summarize)
	}
	if !repr {
		return body
	}
	if skipDtype {
		return prefix + body + ")"
	}
	s := prefix + body + ","
	lastLine := len(s) - (strings.LastIndexByte(s, '\n') + 1)
	spacer := " "
	if lastLine+len(dtypeStr)+1 > printLineWidth {
		spacer = "\n" + strings.Repeat(" ", len(prefix))
	}
	return s + spacer + dtypeStr
}

// ShapeString renders a shape as a Python tuple: (2, 3), (4,), ().
func ShapeString(dims []int) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, d := range dims {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(strconv.Itoa(d))
	}
	if len(dims) == 1 {
		b.WriteByte(',')
	}
	b.WriteByte(')')
	return b.String()
}

// shownIndices returns the flat indices of the elements that printing
// shows: all of them, or with summarize only the first and last edge items
// along each axis.
func shownIndices(dims []int, summarize bool) []int {
	var out []int
	strides := make([]int, len(dims))
	s := 1
	for i := len(dims) - 1; i >= 0; i-- {
		strides[i] = s
		s *= dims[i]
	}
	var rec func(axis, base int)
	rec = func(axis, base int) {
		if axis == len(dims) {
			out = append(out, base)
			return
		}
		n := dims[axis]
		for i := 0; i < n; i++ {
			if summarize && n > 2*printEdgeItems && i == printEdgeItems {
				i = n - printEdgeItems
			}
			rec(axis+1, base+i*strides[axis])
		}
	}
	rec(0, 0)
	return out
}

// formatRec is NumPy's _formatArray recursion: index selects the sub-array,
// hanging is the indent of continuation lines, width the space left.
func formatRec(t *blob.Tensor, f *elemFormatter, index []int, hanging string, width int, sep string, summarize bool) string {
	dims := t.Dims()
	axis := len(index)
	axesLeft := len(dims) - axis
	if axesLeft == 0 {
		flat := 0
		for i, ix := range index {
			flat = flat*dims[i] + ix
		}
		return f.format(flat)
	}
	nextHanging := hanging + " "
	nextWidth := width - 1
	n := dims[axis]
	leading, trailing, showSummary := n, 0, false
	if summarize && n > 2*printEdgeItems {
		leading, trailing, showSummary = printEdgeItems, printEdgeItems, true
	}
	at := func(i int) []int { return append(append([]int{}, index...), i) }
	var s string
	if axesLeft == 1 {
		elemWidth := width - max(len(strings.TrimRight(sep, " ")), 1)
		line := hanging
		for i := 0; i < leading; i++ {
			if !showSummary && i == n-1 {
				break
			}
			s, line = extendLine(s, line, formatRec(t, f, at(i), nextHanging, nextWidth, sep, summarize), elemWidth, hanging)
			line += sep
		}
		if showSummary {
			s, line = extendLine(s, line, "...", elemWidth, hanging)
			line += sep
			for i := trailing; i > 1; i-- {
				s, line = extendLine(s, line, formatRec(t, f, at(n-i), nextHanging, nextWidth, sep, summarize), elemWidth, hanging)
				line += sep
			}
		}
		s, line = extendLine(s, line, formatRec(t, f, at(n-1), nextHanging, nextWidth, sep, summarize), elemWidth, hanging)
		s += line
	} else {
		lineSep := strings.TrimRight(sep, " ") + strings.Repeat("\n", axesLeft-1)
		for i := 0; i < leading; i++ {
			if !showSummary && i == n-1 {
				break
			}
			s += hanging + formatRec(t, f, at(i), nextHanging, nextWidth, sep, summarize) + lineSep
		}
		if showSummary {
			s += hanging + "..." + lineSep
			for i := trailing; i > 1; i-- {
				s += hanging + formatRec(t, f, at(n-i), nextHanging, nextWidth, sep, summarize) + lineSep
			}
		}
		s += hanging + formatRec(t, f, at(n-1), nextHanging, nextWidth, sep, summarize)
	}
	return "[" + s[len(hanging):] + "]"
}

func extendLine(s, line, word string, width int, prefix string) (string, string) {
	needsWrap := len(line)+len(word) > width
	if len(line) <= len(prefix) {
		needsWrap = false
	}
	if needsWrap {
		s += strings.TrimRight(line, " ") + "\n"
		line = prefix
	}
	return s, line + word
}

// elemFormatter formats the elements of one array with a common width, as
// NumPy's FloatingFormat, IntegerFormat and BoolFormat do.
type elemFormatter struct {
	t        *blob.Tensor
	kind     Kind
	floats   []float64
	ints     []int64
	strs     []string
	bits     int
	exp      bool
	padLeft  int
	padRight int
	expSize  int
	width    int
}

func newElemFormatter(t *blob.Tensor, shown []int) *elemFormatter {
	f := &elemFormatter{t: t, kind: KindOf(t.DataType())}
	switch f.kind {
	case KindFloat:
		f.floats = FloatsOf(t)
		f.bits = 64
		if t.DataType() != blob.Float64 {
			f.bits = 32
		}
		f.fillFloat(shown)
	case KindString:
		f.strs = blob.Data[string](t)
	case KindBool:
		f.ints = IntsOf(t)
	default:
		f.ints = IntsOf(t)
		for _, i := range shown {
			f.width = max(f.width, len(strconv.FormatInt(f.ints[i], 10)))
		}
	}
	return f
}

func (f *elemFormatter) fillFloat(shown []int) {
	maxV, minV := 0.0, math.Inf(1)
	var finite []float64
	nonFinite, negInf := false, false
	for _, i := range shown {
		v := f.floats[i]
		if math.IsNaN(v) || math.IsInf(v, 0) {
			nonFinite = true
			negInf = negInf || math.IsInf(v, -1)
			continue
		}
		finite = append(finite, v)
		a := math.Abs(v)
		maxV = max(maxV, a)
		if a != 0 {
			minV = min(minV, a)
		}
	}
	if math.IsInf(minV, 1) {
		minV = 0
	}
	f.exp = len(finite) > 0 && (maxV >= 1e8 || (minV != 0 && (minV < 1e-4 || maxV/minV > 1e3)))
	if f.exp {
		for _, v := range finite {
			mant, e := sciParts(v, f.bits, -1)
			ip, fp, _ := strings.Cut(mant, ".")
			f.padLeft = max(f.padLeft, len(ip))
			f.padRight = max(f.padRight, len(fp))
			f.expSize = max(f.expSize, len(e)-1)
		}
	} else {
		for _, v := range finite {
			ip, fp, _ := strings.Cut(positional(v, f.bits), ".")
			f.padLeft = max(f.padLeft, len(ip))
			f.padRight = max(f.padRight, len(fp))
		}
	}
	if nonFinite {
		// Widen the integer part so that "nan" and "inf" fit the column.
		offset := f.padRight + 1
		if f.exp {
			offset += f.expSize + 2
		}
		infLen := 3
		if negInf {
			infLen++
		}
		f.padLeft = max(f.padLeft, 3-offset, infLen-offset)
	}
}

// positional formats v in the shortest positional form that round-trips at
// the given precision, capped at printPrecision fractional digits, with
// trailing zeros trimmed but the decimal point kept ("1.", "0.25").
func positional(v float64, bits int) string {
	s := strconv.FormatFloat(v, 'f', -1, bits)
	if _, frac, ok := strings.Cut(s, "."); ok && len(frac) > printPrecision {
		s = strconv.FormatFloat(v, 'f', printPrecision, bits)
		s = strings.TrimRight(s, "0")
	}
	if !strings.Contains(s, ".") {
		s += "."
	}
	return s
}

// sciParts formats v in scientific notation and returns the mantissa
// ("1.5", "1.") and the exponent with its sign ("-05"). fracDigits < 0
// means the shortest round-tripping mantissa capped at printPrecision
// digits; otherwise exactly that many digits.
func sciParts(v float64, bits, fracDigits int) (string, string) {
	var s string
	if fracDigits < 0 {
		s = strconv.FormatFloat(v, 'e', -1, bits)
		mant, _, _ := strings.Cut(s, "e")
		if _, frac, ok := strings.Cut(mant, "."); ok && len(frac) > printPrecision {
			s = strconv.FormatFloat(v, 'e', printPrecision, bits)
			m, e, _ := strings.Cut(s, "e")
			s = strings.TrimRight(m, "0") + "e" + e
		}
	} else {
		s = strconv.FormatFloat(v, 'e', fracDigits, bits)
	}
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += "."
	}
	return mant, exp
}

func (f *elemFormatter) format(i int) string {
	switch f.kind {
	case KindFloat:
		return f.formatFloat(f.floats[i])
	case KindString:
		return pyQuote(f.strs[i])
	case KindBool:
		s := "False"
		if f.ints[i] != 0 {
			s = "True"
			if f.t.NumDims() > 0 {
				s = " True"
			}
		}
		return s
	}
	s := strconv.FormatInt(f.ints[i], 10)
	return strings.Repeat(" ", max(0, f.width-len(s))) + s
}

func (f *elemFormatter) formatFloat(v float64) string {
	if f.t.NumDims() == 0 {
		return scalarFloatString(v, f.bits)
	}
	var s string
	switch {
	case math.IsNaN(v):
		s = "nan"
	case math.IsInf(v, 1):
		s = "inf"
	case math.IsInf(v, -1):
		s = "-inf"
	}
	if s != "" {
		w := f.padLeft + f.padRight + 1
		if f.exp {
			w += f.expSize + 2
		}
		return strings.Repeat(" ", max(0, w-len(s))) + s
	}
	if f.exp {
		mant, e := sciParts(v, f.bits, f.padRight)
		sign, digits := e[:1], e[1:]
		digits = strings.Repeat("0", max(0, f.expSize-len(digits))) + digits
		ip, _, _ := strings.Cut(mant, ".")
		return strings.Repeat(" ", max(0, f.padLeft-len(ip))) + mant + "e" + sign + digits
	}
	ip, fp, _ := strings.Cut(positional(v, f.bits), ".")
	return strings.Repeat(" ", max(0, f.padLeft-len(ip))) + ip + "." + fp + strings.Repeat(" ", max(0, f.padRight-len(fp)))
}

// scalarFloatString formats a float the way Python and NumPy print a
// scalar: the shortest repr, with ".0" for integral values and scientific
// notation for very large or small magnitudes.
func scalarFloatString(v float64, bits int) string {
	switch {
	case math.IsNaN(v):
		return "nan"
	case math.IsInf(v, 1):
		return "inf"
	case math.IsInf(v, -1):
		return "-inf"
	}
	a := math.Abs(v)
	if a != 0 && (a < 1e-4 || a >= 1e16) {
		mant, e := sciParts(v, bits, -1)
		mant = strings.TrimSuffix(mant, ".")
		sign, digits := e[:1], e[1:]
		if len(digits) < 2 {
			digits = "0" + digits
		}
		return mant + "e" + sign + digits
	}
	s := strconv.FormatFloat(v, 'f', -1, bits)
	if !strings.Contains(s, ".") {
		s += ".0"
	}
	return s
}

// pyQuote quotes s as Python's repr does for a str: single quotes, or
// double quotes when s holds a single quote and no double quote.
func pyQuote(s string) string {
	q := strconv.Quote(s)
	inner := q[1 : len(q)-1]
	if strings.Contains(s, "'") && !strings.Contains(s, `"`) {
		return `"` + inner + `"`
	}
	inner = strings.ReplaceAll(inner, `\"`, `"`)
	inner = strings.ReplaceAll(inner, `'`, `\'`)
	return "'" + inner + "'"
}
