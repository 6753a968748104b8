package netdef

import (
	"fmt"
	"strconv"
	"strings"
)

// DOT renders def as a Graphviz digraph: each op is a box labelled with its
// type (and name, if any), each blob version an ellipse labelled with the
// blob name. Edges run from input blobs to ops and from ops to output blobs;
// control inputs are dashed. Blobs are versioned as in SSA, so in-place ops
// do not draw cycles. A nil def renders as an empty graph.
func DOT(def *NetDef) string {
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n", dotQuote(def.GetName()))
	b.WriteString("  rankdir=TB;\n  node [fontsize=10];\n")

	ops, _ := ssa(def)
	ids := map[VersionedBlob]string{}
	latest := map[string]VersionedBlob{}
	blobNode := func(vb VersionedBlob) string {
		id, ok := ids[vb]
		if !ok {
			id = "b" + strconv.Itoa(len(ids))
			ids[vb] = id
			fmt.Fprintf(&b, "  %s [label=%s, shape=ellipse];\n", id, dotQuote(vb.Name))
		}
		return id
	}
	for i, op := range def.GetOp() {
		opID := "op" + strconv.Itoa(i)
		label := op.GetType()
		if op.GetName() != "" {
			label += "\n" + op.GetName()
		}
		fmt.Fprintf(&b, "  %s [label=%s, shape=box, style=filled, fillcolor=lightgray];\n", opID, dotQuote(label))
		for _, in := range ops[i].Inputs {
			fmt.Fprintf(&b, "  %s -> %s;\n", blobNode(in), opID)
		}
		for _, c := range op.GetControlInput() {
			vb, ok := latest[c]
			if !ok {
				vb = VersionedBlob{Name: c}
			}
			fmt.Fprintf(&b, "  %s -> %s [style=dashed];\n", blobNode(vb), opID)
		}
		for _, out := range ops[i].Outputs {
			fmt.Fprintf(&b, "  %s -> %s;\n", opID, blobNode(out))
			latest[out.Name] = out
		}
	}
	b.WriteString("}\n")
	return b.String()
}

// dotQuote returns s as a quoted Graphviz ID.
func dotQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
