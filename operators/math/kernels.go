package math

import "math"

// num is the set of element types the arithmetic operators accept.
type num interface {
	float32 | float64 | int32 | int64
}

// float is the set of element types of the floating-point operators.
type float interface {
	float32 | float64
}

// binOp selects the arithmetic of a binary kernel.
type binOp uint8

const (
	opAdd binOp = iota
	opSub
	opMul
	opDiv
	opPow
)

// binaryKernel computes c = a op b over the rows of p.
func binaryKernel[T num](op binOp, p *plan, c, a, b []T) {
	if p.size == 0 {
		return
	}
	n, ia, ib := p.inner()
	p.reset()
	for off := 0; off < len(c); off += n {
		binaryRow(op, c[off:off+n], a[p.offA:], b[p.offB:], ia, ib)
		p.step()
	}
}

// binaryRow computes one row; ia and ib are 1 where the operand advances
// with the output and 0 where its first element is repeated.
func binaryRow[T num](op binOp, c, a, b []T, ia, ib int) {
	n := len(c)
	switch {
	case ia != 0 && ib != 0:
		a, b = a[:n], b[:n]
		switch op {
		case opAdd:
			for i := range c {
				c[i] = a[i] + b[i]
			}
		case opSub:
			for i := range c {
				c[i] = a[i] - b[i]
			}
		case opMul:
			for i := range c {
				c[i] = a[i] * b[i]
			}
		case opDiv:
			for i := range c {
				c[i] = a[i] / b[i]
			}
		case opPow:
			for i := range c {
				c[i] = T(math.Pow(float64(a[i]), float64(b[i])))
			}
		}
	case ib == 0:
		a = a[:n]
		v := b[0]
		switch op {
		case opAdd:
			for i := range c {
				c[i] = a[i] + v
			}
		case opSub:
			for i := range c {
				c[i] = a[i] - v
			}
		case opMul:
			for i := range c {
				c[i] = a[i] * v
			}
		case opDiv:
			for i := range c {
				c[i] = a[i] / v
			}
		case opPow:
			e := float64(v)
			for i := range c {
				c[i] = T(math.Pow(float64(a[i]), e))
			}
		}
	default:
		b = b[:n]
		v := a[0]
		switch op {
		case opAdd:
			for i := range c {
				c[i] = v + b[i]
			}
		case opSub:
			for i := range c {
				c[i] = v - b[i]
			}
		case opMul:
			for i := range c {
				c[i] = v * b[i]
			}
		case opDiv:
			for i := range c {
				c[i] = v / b[i]
			}
		case opPow:
			base := float64(v)
			for i := range c {
				c[i] = T(math.Pow(base, float64(b[i])))
			}
		}
	}
}

// reduceKernel sums a (the full operand of p) into c (the broadcast one).
func reduceKernel[T float](p *plan, c, a []T) {
	clear(c)
	if p.size == 0 {
		return
	}
	n, _, ib := p.inner()
	p.reset()
	for off := 0; off < len(a); off += n {
		row := a[off : off+n]
		if ib != 0 {
			dst := c[p.offB : p.offB+n]
			for i, v := range row {
				dst[i] += v
			}
		} else {
			var s T
			for _, v := range row {
				s += v
			}
			c[p.offB] += s
		}
		p.step()
	}
}

// hasZero reports whether an integer divisor holds a zero.
func hasZero[T num](s []T) bool {
	for _, v := range s {
		if v == 0 {
			return true
		}
	}
	return false
}
