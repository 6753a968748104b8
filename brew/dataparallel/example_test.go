package dataparallel_test

import (
	"fmt"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/brew"
	"github.com/caffe2go/caffe2go/brew/dataparallel"
	"github.com/caffe2go/caffe2go/netdef"
	"github.com/caffe2go/caffe2go/workspace"
)

// A linear regression trained on two CPU devices: each gets half of every
// batch of four examples, and the replicas stay identical.
func Example() {
	ws := workspace.New("")
	defer ws.Close()
	m := brew.NewModel("regression")
	p, err := dataparallel.Parallelize(m, dataparallel.Options{
		Devices:   []int{0, 1},
		Workspace: ws,
		ForwardBuilder: func(m *brew.Model, lossScale float32) ([]string, error) {
			m.AddExternalInputs("x", "y")
			pred := brew.FC(m, "x", "pred", 1, 1,
				brew.WeightInit(brew.Init("ConstantFill")), brew.BiasInit(brew.Init("ConstantFill")))
			m.Op("SquaredL2Distance", []string{pred, "y"}, []string{"dist"})
			m.Op("AveragedLoss", []string{"dist"}, []string{"loss"})
			op := m.Op("Scale", []string{"loss"}, []string{"loss_scaled"}, netdef.ArgFloat("scale", lossScale))
			return op.GetOutput(), m.Err()
		},
		OptimizerBuilder: func(m *brew.Model) error {
			_, err := brew.BuildSGD(m, brew.SGDOptions{BaseLR: 0.1})
			return err
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	// y = 2x + 1
	batch := brew.Dataset{
		"x": blob.MustFromSlice([]float32{0, 1, 2, 3}, 4, 1),
		"y": blob.MustFromSlice([]float32{1, 3, 5, 7}, 4, 1),
	}
	if err := p.Scatter(batch); err != nil {
		fmt.Println(err)
		return
	}
	if err := p.RunInitNet(); err != nil {
		fmt.Println(err)
		return
	}
	if err := p.RunNet(300); err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range p.Devices() {
		w, _ := ws.FetchBlob(p.DeviceBlob(d, "pred_w"))
		b, _ := ws.FetchBlob(p.DeviceBlob(d, "pred_b"))
		fmt.Printf("cpu_%d: w = %.2f, b = %.2f\n", d, blob.Data[float32](w)[0], blob.Data[float32](b)[0])
	}
	// Output:
	// cpu_0: w = 2.00, b = 1.00
	// cpu_1: w = 2.00, b = 1.00
}
