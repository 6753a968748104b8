// Package dataparallel trains a brew model on several devices at once, as
// Caffe2's data_parallel_model does: Parallelize builds one replica of the
// model per device (cpu_0/, cpu_1/, … or gpu_0/, …), sums the replicas'
// gradients with Allreduce operators and keeps the replicas' parameters
// identical, so that N devices with batch B each train exactly like one
// device with batch N·B.
//
// # Building
//
// Parallelize calls the input and forward builders once per device under
// that device's DeviceScope and a name scope "cpu_<d>" (or "gpu_<d>"), so a
// builder written for one device ("data", "fc_w", "loss") builds every
// replica. The forward builder scales its losses by lossScale = 1/N; the
// gradients are then summed, not averaged, across devices, last layer
// first, by one in-place Allreduce operator per parameter (engine SUM_TREE,
// Caffe2's tree of sums, or RING; see package operators/comm). Parameter
// updates come from a per-device builder or from one optimizer builder
// such as brew.BuildSGD. The init net broadcasts every blob it creates on
// the devices from the master (the first device), and the train net gets
// the dag executor, which runs the replicas concurrently on their devices'
// workers.
//
// # Running
//
// The returned *Parallel runs and feeds the model:
//
//	p, err := dataparallel.Parallelize(m, dataparallel.Options{
//		Devices:          []int{0, 1},
//		ForwardBuilder:   forward,
//		OptimizerBuilder: func(m *brew.Model) error { _, err := brew.BuildSGD(m, sgd); return err },
//	})
//	p.Scatter(brew.Dataset{"data": images, "label": labels}) // rows split over cpu_0, cpu_1
//	p.RunInitNet()
//	p.RunNet(1)
//
// A failing operator on any device stops the step; the error names the
// device, the net and the operator.
//
// # Caffe2 names
//
// The functions of Caffe2's module are methods here: RunInitNet, RunNet,
// CheckpointParams (GetCheckpointParams), FinalizeAfterCheckpoint,
// AddBlobSync, LearningRateBlobNames (GetLearningRateBlobNames), Devices
// (GetDevices); ConvertNetForDevice is a function. FeedDevice, Scatter and
// Loader feed the replicas. BMUF, NCCL and the memory optimizers are not
// implemented.
//
// # Several processes
//
// With Options.Rendezvous, N processes (shards, on one machine or
// several) train one model together, as Caffe2's rendezvous argument
// makes them: each scales its losses by 1/(devices × N), sums each
// gradient over its devices into the master's copy, all-reduces that
// over the shards with Gloo (engine GLOO, package operators/gloo, the
// gloo build tag) and copies it back to its devices. RunInitNet first
// waits at a barrier for every shard (BarrierTimeout, default 300 s),
// then broadcasts shard 0's initial blobs to all. Every collective has a
// deadline (Timeout, default 30 s): a shard that dies or hangs makes
// RunNet fail on the others with an error naming the operation and the
// rank. Only shard 0 writes checkpoints (IsCheckpointWriter); all shards
// resume from the same one, meeting again under a fresh store prefix.
package dataparallel
