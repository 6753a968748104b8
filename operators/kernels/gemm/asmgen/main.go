package main

import (
	"fmt"
	"os"

	. "github.com/mmcloughlin/avo/build"
	"github.com/mmcloughlin/avo/gotypes"
	. "github.com/mmcloughlin/avo/operand"
)

// elem describes one element type's instructions.
type elem struct {
	name      string          // Go type
	size      int             // bytes
	lanes     int             // elements per YMM register
	broadcast func(ops ...Op) // (mx, y)
	fma       func(ops ...Op) // (mxy, xy, xy1): xy1 += xy·mxy
	mul       func(ops ...Op) // (mxy, xy, xy1): xy1 = xy·mxy
	load      func(ops ...Op) // (mx, y) or (y, m): unaligned load or store
	zero      func(y Op)
	compare   func(mx, x Op) // scalar unordered compare
}

var (
	f32 = elem{
		name: "float32", size: 4, lanes: 8,
		broadcast: VBROADCASTSS, fma: VFMADD231PS, mul: VMULPS, load: VMOVUPS,
		zero:    func(y Op) { VXORPS(y, y, y) },
		compare: UCOMISS,
	}
	f64 = elem{
		name: "float64", size: 8, lanes: 4,
		broadcast: VBROADCASTSD, fma: VFMADD231PD, mul: VMULPD, load: VMOVUPD,
		zero:    func(y Op) { VXORPD(y, y, y) },
		compare: UCOMISD,
	}
)

func main() {
	ConstraintExpr("amd64,!purego,!noasm")
	switch pkg := pkgArg(); pkg {
	case "gemm":
		gemmKernels()
	case "vec":
		vecKernels()
	case "convpool":
		winoKernels()
	default:
		fmt.Fprintf(os.Stderr, "asmgen: -pkg is gemm, vec or convpool, not %q\n", pkg)
		os.Exit(2)
	}
	Generate()
}

// addr is the stack address of a scalar parameter.
func addr(c gotypes.Component) Mem {
	b, err := c.Resolve()
	if err != nil {
		panic(err)
	}
	return b.Addr
}

// pkgArg returns the value of the -pkg flag, which avo's Generate parses
// only after the functions are emitted.
func pkgArg() string {
	for i, a := range os.Args {
		if (a == "-pkg" || a == "--pkg") && i+1 < len(os.Args) {
			return os.Args[i+1]
		}
	}
	return ""
}
