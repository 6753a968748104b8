package caffesolver

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/caffe2go/caffe2go/blob"
)

// Solve trains from the current iteration to the solver's max_iter, as
// Caffe's Solver::Solve does: Step, then a snapshot (unless the last
// iteration made one, or snapshot_after_train is false) and a last test
// when max_iter is a test iteration. It returns the last test's outputs (nil when there was
// none).
func (s *Solver) Solve(ctx context.Context) ([]Output, error) {
	fmt.Fprintf(s.log, "Solving %s on %d CPU device(s), %d examples per iteration\n",
		nameOr(s.trainNet.Predict.GetName(), "caffe"), s.devices, s.devices*s.batch)
	fmt.Fprintf(s.log, "Learning Rate Policy: %s\n", s.sp.GetLrPolicy())
	if err := s.Step(ctx, int(s.sp.GetMaxIter())-s.iter); err != nil {
		return nil, err
	}
	snap := s.sp.GetSnapshot()
	if s.sp.GetSnapshotAfterTrain() && (snap == 0 || s.iter%int(snap) != 0) {
		if err := s.Snapshot(); err != nil {
			return nil, err
		}
	}
	var last []Output
	if ti := int(s.sp.GetTestInterval()); s.test != nil && ti > 0 && s.iter%ti == 0 {
		var err error
		if last, err = s.Test(ctx); err != nil {
			return nil, err
		}
	}
	fmt.Fprintln(s.log, "Optimization Done.")
	return last, nil
}

// Step runs n iterations as Caffe's Solver::Step does: a test before each
// iteration that is a multiple of test_interval (iteration 0 too, unless
// test_initialization is false), the forward and backward passes and the
// update on every device, progress lines every display iterations, and
// a snapshot after every snapshot iterations. It stops early when ctx ends.
func (s *Solver) Step(ctx context.Context, n int) error {
	if err := s.create(); err != nil {
		return err
	}
	stop := s.iter + n
	ti, disp, snap := int(s.sp.GetTestInterval()), int(s.sp.GetDisplay()), int(s.sp.GetSnapshot())
	for s.iter < stop {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("caffesolver: stopped at iteration %d: %w", s.iter, err)
		}
		if s.test != nil && ti > 0 && s.iter%ti == 0 && (s.iter > 0 || s.sp.GetTestInitialization()) {
			if _, err := s.Test(ctx); err != nil {
				return err
			}
		}
		rate, err := LearningRate(s.sp, s.iter)
		if err != nil {
			return err
		}
		if err := s.feedTrain(rate); err != nil {
			return fmt.Errorf("caffesolver: iteration %d: %w", s.iter, err)
		}
		if err := s.train.RunNetContext(ctx, 1); err != nil {
			return fmt.Errorf("caffesolver: iteration %d: %w", s.iter, err)
		}
		if disp > 0 && s.iter%disp == 0 {
			if err := s.display(rate); err != nil {
				return err
			}
		}
		s.iter++
		if snap > 0 && s.iter%snap == 0 {
			if err := s.Snapshot(); err != nil {
				return err
			}
		}
	}
	return nil
}

// create runs the training net's init net (the first time) and creates
// its nets, which need the inputs fed.
func (s *Solver) create() error {
	if s.created {
		return nil
	}
	rate, err := LearningRate(s.sp, s.iter)
	if err != nil {
		return err
	}
	pos := s.feed.pos
	if err := s.feedTrain(rate); err != nil {
		return err
	}
	s.feed.pos = pos
	if err := s.train.RunInitNet(); err != nil {
		return fmt.Errorf("caffesolver: training net: %w", err)
	}
	s.created = true
	s.lastDisp, s.dispIter = time.Now(), s.iter
	return nil
}

// display writes Caffe's progress lines for the iteration just run.
func (s *Solver) display(rate float64) error {
	loss, err := s.trainLoss()
	if err != nil {
		return err
	}
	if s.iter > s.dispIter {
		el := time.Since(s.lastDisp).Seconds()
		per := float64(s.iter - s.dispIter)
		fmt.Fprintf(s.log, "Iteration %d (%.4g iter/s, %.4gs/%d iters), loss = %.6g\n", s.iter, per/el, el, int(per), loss)
	} else {
		fmt.Fprintf(s.log, "Iteration %d, loss = %.6g\n", s.iter, loss)
	}
	s.lastDisp, s.dispIter = time.Now(), s.iter
	for i, o := range s.losses {
		v, err := s.mean(o.Name)
		if err != nil {
			return err
		}
		writeOutput(s.log, "Train", i, o, v)
	}
	fmt.Fprintf(s.log, "Iteration %d, lr = %.6g\n", s.iter, rate)
	return nil
}

// writeOutput writes Caffe's line for output i of a net.
func writeOutput(w io.Writer, net string, i int, o Output, v float64) {
	if o.Weight != 0 {
		fmt.Fprintf(w, "    %s net output #%d: %s = %.6g (* %g = %.6g loss)\n", net, i, o.Name, v, o.Weight, o.Weight*v)
		return
	}
	fmt.Fprintf(w, "    %s net output #%d: %s = %.6g\n", net, i, o.Name, v)
}

// trainLoss returns the weighted sum of the training net's losses,
// averaged over the devices.
func (s *Solver) trainLoss() (float64, error) {
	var sum float64
	for _, o := range s.losses {
		if o.Weight == 0 {
			continue
		}
		v, err := s.mean(o.Name)
		if err != nil {
			return 0, err
		}
		sum += o.Weight * v
	}
	return sum, nil
}

// mean averages the scalar top name of the training net over the devices.
func (s *Solver) mean(name string) (float64, error) {
	b := blobOf(s.trainNet, name)
	var sum float64
	for d := range s.devices {
		v, err := scalar(s.ws.FetchBlob(s.train.DeviceBlob(d, b)))
		if err != nil {
			return 0, fmt.Errorf("caffesolver: output %s: %w", name, err)
		}
		sum += v
	}
	return sum / float64(s.devices), nil
}

func scalar(t *blob.Tensor, err error) (float64, error) {
	if err != nil {
		return 0, err
	}
	v := t.AsFloat64s()
	if len(v) != 1 {
		return 0, fmt.Errorf("has %d values, want 1", len(v))
	}
	return v[0], nil
}

// Test runs the test net test_iter times on the first device over
// consecutive batches of the test set (continuing where the last test
// stopped, as Caffe's test Data layer does) and returns its outputs
// averaged over the batches, writing Caffe's lines.
func (s *Solver) Test(ctx context.Context) ([]Output, error) {
	if s.test == nil {
		return nil, fmt.Errorf("caffesolver: the solver has no test net (test_iter and test_interval)")
	}
	if err := s.create(); err != nil {
		return nil, err
	}
	fmt.Fprintf(s.log, "Iteration %d, Testing net (#0)\n", s.iter)
	outs := make([]Output, len(s.testOuts))
	copy(outs, s.testOuts)
	n := int(s.sp.TestIter[0])
	in := s.testNet.Inputs
	for k := range n {
		data, label, err := s.testFeed.batch(s.testBat, 0, 1)
		if err != nil {
			return nil, err
		}
		s.testFeed.advance(s.testBat)
		if err := s.test.FeedDevice(0, in[0], data); err != nil {
			return nil, err
		}
		if err := s.test.FeedDevice(0, in[1], label); err != nil {
			return nil, err
		}
		if k == 0 && !s.testMade {
			if err := s.test.RunInitNet(); err != nil {
				return nil, fmt.Errorf("caffesolver: test net: %w", err)
			}
			s.testMade = true
		}
		if err := s.test.RunNetContext(ctx, 1); err != nil {
			return nil, fmt.Errorf("caffesolver: test net at iteration %d: %w", s.iter, err)
		}
		for i := range outs {
			v, err := scalar(s.ws.FetchBlob(s.test.DeviceBlob(0, blobOf(s.testNet, outs[i].Name))))
			if err != nil {
				return nil, fmt.Errorf("caffesolver: test net output %s: %w", outs[i].Name, err)
			}
			outs[i].Value += v / float64(n)
		}
	}
	for i, o := range outs {
		writeOutput(s.log, "Test", i, o, o.Value)
	}
	return outs, nil
}
