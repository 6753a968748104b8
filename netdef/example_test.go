package netdef_test

import (
	"fmt"

	"github.com/caffe2go/caffe2go/netdef"
)

// Build a small classifier head with the Net builder and print it in the
// text format Caffe2 uses for .pbtxt files.
func ExampleNet() {
	net := netdef.NewNet("example_classifier")
	net.Op("FC", []string{"data", "fc_w", "fc_b"}, []string{"fc"}, netdef.ArgInt("axis", 1))
	net.Op("Relu", []string{"fc"}, []string{"fc"}) // in place
	net.Op("Softmax", []string{"fc"}, []string{"prob"})
	if err := net.AddExternalOutput("prob"); err != nil {
		fmt.Println(err)
		return
	}

	text, err := netdef.MarshalText(net.Proto())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(string(text))
	// Output:
	// name: "example_classifier"
	// op {
	//   input: "data"
	//   input: "fc_w"
	//   input: "fc_b"
	//   output: "fc"
	//   type: "FC"
	//   arg {
	//     name: "axis"
	//     i: 1
	//   }
	// }
	// op {
	//   input: "fc"
	//   output: "fc"
	//   type: "Relu"
	// }
	// op {
	//   input: "fc"
	//   output: "prob"
	//   type: "Softmax"
	// }
	// external_input: "data"
	// external_input: "fc_w"
	// external_input: "fc_b"
	// external_output: "prob"
}

// NextName and NextBlob generate blob names the way Caffe2 does.
func ExampleNet_NextName() {
	net := netdef.NewNet("example_naming")
	out := net.NextName("Relu")
	net.Op("Relu", []string{"x"}, []string{out})
	fmt.Println(out)
	fmt.Println(net.NextName("Relu"))
	fmt.Println(net.NextName(""))
	fmt.Println(net.NextBlob("x"))
	// Output:
	// example_naming/Relu
	// example_naming/Relu_2
	// example_naming_blob_0
	// x_auto_0
}
