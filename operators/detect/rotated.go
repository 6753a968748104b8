package detect

import (
	"math"
	"sort"
)

// The intersection of rotated rectangles, for the NMS of rotated boxes
// [ctr_x, ctr_y, w, h, angle°] (angle counter-clockwise): Caffe2's
// replacement of OpenCV's rotatedRectangleIntersection, in float32 with
// the areas summed in float64 as there.

type vec2 struct{ x, y float32 }

func (a vec2) sub(b vec2) vec2      { return vec2{a.x - b.x, a.y - b.y} }
func (a vec2) add(b vec2) vec2      { return vec2{a.x + b.x, a.y + b.y} }
func (a vec2) scale(s float32) vec2 { return vec2{a.x * s, a.y * s} }
func (a vec2) dot(b vec2) float32   { return a.x*b.x + a.y*b.y }
func cross2(a, b vec2) float32      { return a.x*b.y - b.x*a.y }

// rotatedRect is a rectangle rotated clockwise by angle degrees about its
// centre (OpenCV's convention: a box's counter-clockwise angle negated).
type rotatedRect struct {
	c     vec2
	w, h  float32
	angle float32
}

func boxRect(b []float32) rotatedRect {
	return rotatedRect{c: vec2{b[0], b[1]}, w: b[2], h: b[3], angle: -b[4]}
}

func (r rotatedRect) vertices() [4]vec2 {
	t := float64(r.angle) * 0.01745329251
	b := float32(math.Cos(t)) * 0.5
	a := float32(math.Sin(t)) * 0.5
	var p [4]vec2
	p[0] = vec2{r.c.x - a*r.h - b*r.w, r.c.y + b*r.h - a*r.w}
	p[1] = vec2{r.c.x + a*r.h - b*r.w, r.c.y - b*r.h - a*r.w}
	p[2] = r.c.scale(2).sub(p[0])
	p[3] = r.c.scale(2).sub(p[1])
	return p
}

// rectIntersectionPts collects the intersection polygon's candidate points
// into pts (at most 24) and reports whether the rectangles coincide.
func rectIntersectionPts(r1, r2 rotatedRect, pts []vec2) (n int, same bool) {
	const samePointEps = 0.00001
	const eps = 1e-14
	p1, p2 := r1.vertices(), r2.vertices()
	same = true
	for i := range 4 {
		if math.Abs(float64(p1[i].x-p2[i].x)) > samePointEps || math.Abs(float64(p1[i].y-p2[i].y)) > samePointEps {
			same = false
			break
		}
	}
	if same {
		copy(pts, p1[:])
		return 4, true
	}
	var v1, v2 [4]vec2
	for i := range 4 {
		v1[i] = p1[(i+1)%4].sub(p1[i])
		v2[i] = p2[(i+1)%4].sub(p2[i])
	}
	for i := range 4 {
		for j := range 4 {
			det := cross2(v2[j], v1[i])
			if math.Abs(float64(det)) <= eps {
				continue
			}
			v12 := p2[j].sub(p1[i])
			t1 := cross2(v2[j], v12) / det
			t2 := cross2(v1[i], v12) / det
			if t1 >= 0 && t1 <= 1 && t2 >= 0 && t2 <= 1 {
				pts[n] = p1[i].add(v1[i].scale(t1))
				n++
			}
		}
	}
	inside := func(p [4]vec2, v [4]vec2, q [4]vec2) {
		ab, da := v[0], v[3]
		abab, adad := ab.dot(ab), da.dot(da)
		for i := range 4 {
			ap := q[i].sub(p[0])
			apab, apad := ap.dot(ab), -ap.dot(da)
			if apab >= 0 && apad >= 0 && apab <= abab && apad <= adad {
				pts[n] = q[i]
				n++
			}
		}
	}
	inside(p2, v2, p1)
	inside(p1, v1, p2)
	return n, false
}

// convexHullArea orders the points by Graham scan and returns the area of
// their convex hull.
func convexHullArea(p []vec2) float64 {
	t := 0
	for i := 1; i < len(p); i++ {
		if p[i].y < p[t].y || (p[i].y == p[t].y && p[i].x < p[t].x) {
			t = i
		}
	}
	s := p[t]
	q := make([]vec2, len(p))
	for i := range p {
		q[i] = p[i].sub(s)
	}
	q[0], q[t] = q[t], q[0]
	rest := q[1:]
	sort.Slice(rest, func(i, j int) bool {
		c := cross2(rest[i], rest[j])
		if math.Abs(float64(c)) < 1e-6 {
			return rest[i].dot(rest[i]) < rest[j].dot(rest[j])
		}
		return c > 0
	})
	k := 1
	for ; k < len(q); k++ {
		if q[k].dot(q[k]) > 1e-8 {
			break
		}
	}
	if k == len(q) {
		return 0
	}
	q[1] = q[k]
	m := 2
	for i := k + 1; i < len(q); i++ {
		for m > 1 && cross2(q[i].sub(q[m-2]), q[m-1].sub(q[m-2])) >= 0 {
			m--
		}
		q[m] = q[i]
		m++
	}
	if m <= 2 {
		return 0
	}
	var area float64
	for i := 1; i < m-1; i++ {
		area += math.Abs(float64(cross2(q[i].sub(q[0]), q[i+1].sub(q[0]))))
	}
	return area / 2
}

// rotatedIntersection is the area of the intersection of two rotated
// boxes [ctr_x, ctr_y, w, h, angle°].
func rotatedIntersection(a, b []float32) float32 {
	r1, r2 := boxRect(a), boxRect(b)
	var pts [24]vec2
	n, same := rectIntersectionPts(r1, r2, pts[:])
	if n <= 2 {
		return 0
	}
	if same {
		return float32(math.Min(float64(r1.w*r1.h), float64(r2.w*r2.h)))
	}
	return float32(convexHullArea(pts[:n]))
}
