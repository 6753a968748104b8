package caffesolver

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/caffe2go/caffe2go/blob"
	"github.com/caffe2go/caffe2go/netdef/caffe"
	"github.com/caffe2go/caffe2go/persist"
)

// Weights returns the learned parameters of the training net (the first
// device's, which every device shares) as a Caffe net with its layers'
// blobs: what a .caffemodel holds.
func (s *Solver) Weights() (*caffe.NetParameter, error) {
	net := &caffe.NetParameter{Name: proto.String(nameOr(s.trainNet.Predict.GetName(), "caffe"))}
	for _, l := range s.trainNet.Layers {
		if len(l.Learned) == 0 {
			continue
		}
		lp := &caffe.LayerParameter{Name: proto.String(l.Name), Type: proto.String(l.Type)}
		for _, p := range l.Learned {
			t, err := s.ws.FetchBlob(s.train.DeviceBlob(0, p))
			if err != nil {
				return nil, fmt.Errorf("caffesolver: layer %q: %w", l.Name, err)
			}
			shape := &caffe.BlobShape{}
			for _, d := range t.Dims() {
				shape.Dim = append(shape.Dim, int64(d))
			}
			lp.Blobs = append(lp.Blobs, &caffe.BlobProto{Shape: shape, Data: append([]float32(nil), blob.Data[float32](t)...)})
		}
		net.Layer = append(net.Layer, lp)
	}
	return net, nil
}

// SnapshotPath returns the .caffemodel file of the snapshot at iteration
// iter: <snapshot_prefix>_iter_<iter>.caffemodel, as Caffe names it ("" when
// the solver has no snapshot_prefix).
func (s *Solver) SnapshotPath(iter int) string {
	if s.prefix == "" {
		return ""
	}
	return fmt.Sprintf("%s_iter_%d.caffemodel", s.prefix, iter)
}

// Snapshot saves the solver's state at the current iteration as Caffe's
// snapshot does: the learned parameters as a .caffemodel (SnapshotPath;
// skipped without snapshot_prefix), and the whole training state (the
// parameters and the momentum of every layer) as checkpoint <iteration>
// of the workspace's store, which Restore resumes from, in place of
// Caffe's .solverstate.
func (s *Solver) Snapshot() error {
	if err := s.create(); err != nil {
		return err
	}
	if path := s.SnapshotPath(s.iter); path != "" {
		w, err := s.Weights()
		if err != nil {
			return err
		}
		data, err := proto.Marshal(w)
		if err != nil {
			return fmt.Errorf("caffesolver: snapshot: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("caffesolver: snapshot: %w", err)
		}
		fmt.Fprintf(s.log, "Snapshotting to binary proto file %s\n", path)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return fmt.Errorf("caffesolver: snapshot: %w", err)
		}
	}
	if err := s.ws.SaveCheckpoint(int64(s.iter), s.train.CheckpointParams(), persist.Iteration(int64(s.iter))); err != nil {
		return fmt.Errorf("caffesolver: snapshot at iteration %d: %w", s.iter, err)
	}
	dir, err := s.ws.StoreDir()
	if err != nil {
		return err
	}
	fmt.Fprintf(s.log, "Snapshotting solver state to checkpoint %d in %s\n", s.iter, dir)
	return nil
}

// Restore resumes from checkpoint id of the workspace's store (a
// Snapshot's): the parameters and momentum, copied to every device, and
// the iteration. Unlike Caffe, whose Data layers start again from the
// first record, the training and test data sets continue where the
// snapshotted run was, so that a resumed run computes what the
// uninterrupted one did.
func (s *Solver) Restore(id int64) error {
	if err := s.create(); err != nil {
		return err
	}
	store, err := s.ws.Store()
	if err != nil {
		return err
	}
	m, err := store.Checkpoint(id)
	if err != nil {
		return fmt.Errorf("caffesolver: restoring snapshot %d: %w", id, err)
	}
	if err := s.ws.LoadCheckpoint(id); err != nil {
		return fmt.Errorf("caffesolver: restoring snapshot %d: %w", id, err)
	}
	if err := s.train.FinalizeAfterCheckpoint(); err != nil {
		return fmt.Errorf("caffesolver: restoring snapshot %d: %w", id, err)
	}
	s.iter = int(m.Iteration)
	s.feed.pos = 0
	s.feed.advance(s.iter * s.batch * s.devices % s.feed.n)
	if s.test != nil {
		tests := 0
		if ti := int(s.sp.GetTestInterval()); ti > 0 {
			for k := 0; k < s.iter; k += ti {
				if k > 0 || s.sp.GetTestInitialization() {
					tests++
				}
			}
		}
		s.testFeed.pos = 0
		s.testFeed.advance(tests * int(s.sp.TestIter[0]) * s.testBat % s.testFeed.n)
	}
	s.lastDisp, s.dispIter = time.Now(), s.iter
	fmt.Fprintf(s.log, "Restored snapshot %d (iteration %d)\n", id, s.iter)
	return nil
}
