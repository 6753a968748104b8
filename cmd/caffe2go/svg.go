package main

import (
	"fmt"
	"html"
	"sort"
	"strings"

	"github.com/caffe2go/caffe2go/netdef"
)

// Layout constants of netSVG, in pixels.
const (
	svgCharWidth = 7.2 // 12px monospace
	svgLineH     = 15.0
	svgPadX      = 12.0
	svgPadY      = 8.0
	svgGapX      = 18.0
	svgGapY      = 34.0
	svgMargin    = 16.0
)

type svgNode struct {
	lines  []string
	isOp   bool
	layer  int
	order  float64
	x, y   float64 // centre
	w, h   float64
	preds  []int
	succs  []int
	dashed map[int]bool // predecessors reached by a control edge
}

// netSVG draws def as an SVG picture with a layered layout: operators are
// grey boxes, blob versions (as in SSA, so in-place ops draw no cycles) are
// ellipses, data flows downwards, control inputs are dashed. Each node sits
// one layer below its lowest predecessor; nodes of a layer are ordered by
// the mean position of their predecessors to keep crossings down.
func netSVG(def *netdef.NetDef) string {
	ssa, _ := netdef.SSA(def)
	var nodes []*svgNode
	add := func(n *svgNode) int {
		n.dashed = map[int]bool{}
		nodes = append(nodes, n)
		return len(nodes) - 1
	}
	link := func(from, to int, dashed bool) {
		nodes[from].succs = append(nodes[from].succs, to)
		nodes[to].preds = append(nodes[to].preds, from)
		if dashed {
			nodes[to].dashed[from] = true
		}
	}
	blobs := map[netdef.VersionedBlob]int{}
	latest := map[string]netdef.VersionedBlob{}
	blobNode := func(vb netdef.VersionedBlob) int {
		if id, ok := blobs[vb]; ok {
			return id
		}
		id := add(&svgNode{lines: []string{vb.Name}})
		blobs[vb] = id
		return id
	}
	for i, op := range def.GetOp() {
		var ins []int
		for _, in := range ssa[i].Inputs {
			ins = append(ins, blobNode(in))
		}
		var ctrl []int
		for _, c := range op.GetControlInput() {
			vb, ok := latest[c]
			if !ok {
				vb = netdef.VersionedBlob{Name: c}
			}
			ctrl = append(ctrl, blobNode(vb))
		}
		lines := []string{op.GetType()}
		if op.GetName() != "" {
			lines = append(lines, op.GetName())
		}
		opID := add(&svgNode{lines: lines, isOp: true})
		for _, in := range ins {
			link(in, opID, false)
		}
		for _, c := range ctrl {
			link(c, opID, true)
		}
		for _, out := range ssa[i].Outputs {
			link(opID, blobNode(out), false)
			latest[out.Name] = out
		}
	}
	layout(nodes)
	return renderSVG(def.GetName(), nodes)
}

// layout assigns layers and positions. Nodes are created in a topological
// order (an op after its inputs, its outputs after it), so one forward pass
// computes the longest-path layers.
func layout(nodes []*svgNode) {
	for _, n := range nodes {
		for _, p := range n.preds {
			n.layer = max(n.layer, nodes[p].layer+1)
		}
	}
	// Sources (external inputs) sit just above their first consumer.
	for _, n := range nodes {
		if len(n.preds) == 0 && len(n.succs) > 0 {
			lowest := nodes[n.succs[0]].layer
			for _, s := range n.succs {
				lowest = min(lowest, nodes[s].layer)
			}
			n.layer = max(0, lowest-1)
		}
	}
	numLayers := 0
	for _, n := range nodes {
		numLayers = max(numLayers, n.layer+1)
	}
	layers := make([][]int, numLayers)
	for i, n := range nodes {
		n.order = float64(i)
		layers[n.layer] = append(layers[n.layer], i)
	}
	for _, layer := range layers {
		for rank, id := range layer {
			nodes[id].order = float64(rank)
		}
	}
	for pass := 0; pass < 2; pass++ {
		for _, layer := range layers {
			for _, id := range layer {
				n := nodes[id]
				if len(n.preds) == 0 {
					continue
				}
				sum := 0.0
				for _, p := range n.preds {
					sum += nodes[p].order
				}
				n.order = sum / float64(len(n.preds))
			}
			sort.SliceStable(layer, func(a, b int) bool { return nodes[layer[a]].order < nodes[layer[b]].order })
			for rank, id := range layer {
				nodes[id].order = float64(rank)
			}
		}
	}
	for _, n := range nodes {
		longest := 0
		for _, l := range n.lines {
			longest = max(longest, len([]rune(l)))
		}
		n.w = float64(longest)*svgCharWidth + 2*svgPadX
		n.h = float64(len(n.lines))*svgLineH + 2*svgPadY
		if !n.isOp {
			n.w += 10
		}
	}
	widths := make([]float64, numLayers)
	heights := make([]float64, numLayers)
	maxWidth := 0.0
	for l, layer := range layers {
		for i, id := range layer {
			if i > 0 {
				widths[l] += svgGapX
			}
			widths[l] += nodes[id].w
			heights[l] = max(heights[l], nodes[id].h)
		}
		maxWidth = max(maxWidth, widths[l])
	}
	y := svgMargin
	for l, layer := range layers {
		x := svgMargin + (maxWidth-widths[l])/2
		for _, id := range layer {
			n := nodes[id]
			n.x = x + n.w/2
			n.y = y + heights[l]/2
			x += n.w + svgGapX
		}
		y += heights[l] + svgGapY
	}
}

func renderSVG(name string, nodes []*svgNode) string {
	width, height := 2*svgMargin, 2*svgMargin
	for _, n := range nodes {
		width = max(width, n.x+n.w/2+svgMargin)
		height = max(height, n.y+n.h/2+svgMargin)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" viewBox="0 0 %.0f %.0f">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, "<title>%s</title>\n", html.EscapeString(name))
	b.WriteString(`<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#444"/></marker></defs>` + "\n")
	b.WriteString(`<style>text{font:12px monospace;text-anchor:middle;dominant-baseline:central}.op{fill:#d9d9d9;stroke:#333}.blob{fill:#fff;stroke:#333}.edge{stroke:#444;fill:none;marker-end:url(#arrow)}.ctrl{stroke-dasharray:4 3}</style>` + "\n")
	b.WriteString(`<rect width="100%" height="100%" fill="white"/>` + "\n")
	for _, n := range nodes {
		for _, from := range n.preds {
			p := nodes[from]
			class := "edge"
			if n.dashed[from] {
				class += " ctrl"
			}
			fmt.Fprintf(&b, `<line class="%s" x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f"/>`+"\n", class, p.x, p.y+p.h/2, n.x, n.y-n.h/2)
		}
	}
	for _, n := range nodes {
		if n.isOp {
			fmt.Fprintf(&b, `<rect class="op" x="%.1f" y="%.1f" width="%.1f" height="%.1f" rx="3"/>`+"\n", n.x-n.w/2, n.y-n.h/2, n.w, n.h)
		} else {
			fmt.Fprintf(&b, `<ellipse class="blob" cx="%.1f" cy="%.1f" rx="%.1f" ry="%.1f"/>`+"\n", n.x, n.y, n.w/2, n.h/2)
		}
		top := n.y - float64(len(n.lines)-1)*svgLineH/2
		for i, l := range n.lines {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%s</text>`+"\n", n.x, top+float64(i)*svgLineH, html.EscapeString(l))
		}
	}
	b.WriteString("</svg>\n")
	return b.String()
}
