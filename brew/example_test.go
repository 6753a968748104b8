package brew_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/devicescope"
	"github.com/caffe2go/caffe2go/netdef"
)

// describe prints a net's operators one per line: type, inputs, outputs
// and arguments.
func describe(title string, n *netdef.Net) {
	fmt.Println(title + ":")
	for _, o := range n.Proto().Op {
		var args []string
		for _, a := range o.Arg {
			switch {
			case a.Ints != nil:
				args = append(args, fmt.Sprintf("%s=%v", a.GetName(), a.GetInts()))
			case a.S != nil:
				args = append(args, fmt.Sprintf("%s=%s", a.GetName(), a.GetS()))
			case a.F != nil:
				args = append(args, fmt.Sprintf("%s=%g", a.GetName(), a.GetF()))
			default:
				args = append(args, fmt.Sprintf("%s=%d", a.GetName(), a.GetI()))
			}
		}
		fmt.Printf("  %s %v -> %v %s\n", o.GetType(), o.Input, o.Output, strings.Join(args, " "))
	}
}

// ExampleFC builds a two-layer perceptron: parameters are created in the
// init net with Caffe2's names, shapes and default initializers (the
// second layer's weight is overridden), and the layers chain through the
// names the helpers return.
func ExampleFC() {
	m := brew.NewModel("example_fc")
	m.AddExternalInputs("data")
	hidden := brew.Relu(m, brew.FC(m, "data", "fc1", 784, 500), "fc1")
	pred := brew.FC(m, hidden, "pred", 500, 10,
		brew.WeightInit(brew.Init("ConstantFill", netdef.ArgFloat("value", 1))),
		brew.Axis(1))
	if err := m.Err(); err != nil {
		log.Fatal(err)
	}
	describe("init", m.InitNet)
	describe("net", m.Net)
	fmt.Println("output:", pred)
	fmt.Println("weights:", m.Weights(), "biases:", m.Biases())
	// Output:
	// init:
	//   XavierFill [] -> [fc1_w] shape=[500 784]
	//   ConstantFill [] -> [fc1_b] shape=[500]
	//   ConstantFill [] -> [pred_w] shape=[10 500] value=1
	//   ConstantFill [] -> [pred_b] shape=[10]
	// net:
	//   FC [data fc1_w fc1_b] -> [fc1] order=NCHW
	//   Relu [fc1] -> [fc1] order=NCHW
	//   FC [fc1 pred_w pred_b] -> [pred] order=NCHW axis=1
	// output: pred
	// weights: [fc1_w pred_w] biases: [fc1_b pred_b]
}

// ExampleWithArgScope gives every convolution in a block the same stride,
// padding and initializer, inside a name scope; an explicit option still
// wins over the scope.
func ExampleWithArgScope() {
	m := brew.NewModel("example_arg_scope")
	scope := []brew.Option{brew.Stride(2), brew.Pad(1), brew.WeightInit(brew.Init("MSRAFill"))}
	err := brew.WithArgScope([]brew.Helper{brew.HelperConv}, scope, func() error {
		devicescope.NameScope("block", func() {
			m.AddExternalInputs("data")
			c := brew.Conv(m, "data", "conv1", 3, 16, 3)
			brew.Conv(m, c, "conv2", 16, 16, 3, brew.Stride(1), brew.NoBias())
		})
		return m.Err()
	})
	if err != nil {
		log.Fatal(err)
	}
	describe("init", m.InitNet)
	describe("net", m.Net)
	// Output:
	// init:
	//   MSRAFill [] -> [block/conv1_w] shape=[16 3 3 3]
	//   ConstantFill [] -> [block/conv1_b] shape=[16]
	//   MSRAFill [] -> [block/conv2_w] shape=[16 16 3 3]
	// net:
	//   Conv [block/data block/conv1_w block/conv1_b] -> [block/conv1] kernel=3 order=NCHW stride=2 pad=1
	//   Conv [block/conv1 block/conv2_w] -> [block/conv2] kernel=3 order=NCHW stride=1 pad=1
}

// ExampleLeNet builds Caffe2's MNIST LeNet and lists its layers and
// parameters.
func ExampleLeNet() {
	m := brew.NewModel("mnist")
	m.AddExternalInputs("data", "label")
	softmax, loss := brew.LeNet(m, "data", "label")
	if err := m.Err(); err != nil {
		log.Fatal(err)
	}
	var types []string
	for _, o := range m.Net.Proto().Op {
		types = append(types, o.GetType())
	}
	fmt.Println(strings.Join(types, " "))
	fmt.Println("outputs:", softmax, loss)
	fmt.Println("weights:", m.Weights())
	// Output:
	// Conv MaxPool Conv MaxPool FC Relu FC SoftmaxWithLoss Accuracy
	// outputs: softmax loss
	// weights: [conv1_w conv2_w fc3_w pred_w]
}
