package brew_test

import (
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/workspace"
)

// ExampleModel_mlp is the whole life of a model in Caffe2's terms: a
// two-layer perceptron learns from six points whether x0 > x1; its
// predict net and trained parameters are saved to the workspace's store,
// loaded into a fresh workspace and asked about two new points. It prints
// the class probabilities, rounded: (3, −1) is class 1, (−1, 3) class 0.
func ExampleModel_mlp() {
	check := func(err error) {
		if err != nil {
			log.Fatal(err)
		}
	}
	m := brew.NewModel("mlp")
	m.AddExternalInputs("data", "label")
	hidden := brew.Relu(m, brew.FC(m, "data", "fc1", 2, 8), "hidden")
	probs := brew.Softmax(m, brew.FC(m, hidden, "fc2", 8, 2), "probs")
	loss := brew.AveragedLoss(m, brew.LabelCrossEntropy(m, probs, "label", "xent"), "loss")
	_, err := m.AddGradientOperators(loss) // reports a failed helper above too
	check(err)
	_, err = brew.BuildSGD(m, brew.SGDOptions{BaseLR: 0.5})
	predict, params, extractErr := brew.ExtractPredictorNet(m.Net.Proto(), []string{"data"}, []string{probs}, brew.PredictorOptions{})
	dir, mkdirErr := os.MkdirTemp("", "mlp")
	check(errors.Join(err, extractErr, mkdirErr))
	defer os.RemoveAll(dir)
	ws, x := workspace.New(dir), blob.MustFromSlice([]float32{2, 1, 1, 2, 1, -1, -1, 1, -1, -2, -2, -1}, 6, 2)
	check(errors.Join(ws.FeedBlob("data", x), ws.FeedBlob("label", blob.MustFromSlice([]int32{1, 0, 1, 0, 1, 0}, 6)),
		ws.RunNetOnce(m.InitNet), ws.CreateNet(m.Net, false), ws.RunNet(m.Net.Name(), 100)))
	check(errors.Join(ws.SaveNet("mlp", predict), ws.SaveCheckpoint(1, params), ws.Close()))
	fresh := workspace.New(dir)
	def, err := fresh.LoadNet("mlp")
	check(errors.Join(err, fresh.LoadCheckpoint(1), fresh.FeedBlob("data", blob.MustFromSlice([]float32{3, -1, -1, 3}, 2, 2))))
	check(fresh.RunNetOnce(def))
	p, err := fresh.FetchBlob(probs)
	check(errors.Join(err, fresh.Close()))
	fmt.Printf("%.0f\n", blob.Data[float32](p))
	// Output:
	// [0 1 1 0]
}
