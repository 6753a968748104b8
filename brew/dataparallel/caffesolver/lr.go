package caffesolver

import (
	"fmt"
	"math"

	"github.com/caffe2go/caffe2go/netdef/caffe"
)

// LearningRate returns the learning rate of Caffe's SGD solver s at
// iteration iter (counted from 0), as Caffe's SGDSolver computes it from
// base_lr and lr_policy:
//
//   - fixed: base_lr
//   - step: base_lr · gamma^floor(iter / stepsize)
//   - exp: base_lr · gamma^iter
//   - inv: base_lr · (1 + gamma · iter)^(−power)
//   - multistep: base_lr · gamma^k, k the number of stepvalue ≤ iter
//   - poly: base_lr · (1 − iter / max_iter)^power
//   - sigmoid: base_lr / (1 + exp(−gamma · (iter − stepsize)))
//
// An unknown policy, or step or sigmoid without a positive stepsize, is an
// error naming the solver field.
func LearningRate(s *caffe.SolverParameter, iter int) (float64, error) {
	base, gamma, power := float64(s.GetBaseLr()), float64(s.GetGamma()), float64(s.GetPower())
	it := float64(iter)
	switch p := s.GetLrPolicy(); p {
	case "fixed":
		return base, nil
	case "step":
		if s.GetStepsize() <= 0 {
			return 0, fmt.Errorf("caffe solver: lr_policy %q needs a positive stepsize (got %d)", p, s.GetStepsize())
		}
		return base * math.Pow(gamma, math.Floor(it/float64(s.GetStepsize()))), nil
	case "exp":
		return base * math.Pow(gamma, it), nil
	case "inv":
		return base * math.Pow(1+gamma*it, -power), nil
	case "multistep":
		k := 0
		for _, v := range s.GetStepvalue() {
			if int(v) <= iter {
				k++
			}
		}
		return base * math.Pow(gamma, float64(k)), nil
	case "poly":
		if s.GetMaxIter() <= 0 {
			return 0, fmt.Errorf("caffe solver: lr_policy %q needs a positive max_iter (got %d)", p, s.GetMaxIter())
		}
		return base * math.Pow(1-it/float64(s.GetMaxIter()), power), nil
	case "sigmoid":
		if s.GetStepsize() <= 0 {
			return 0, fmt.Errorf("caffe solver: lr_policy %q needs a positive stepsize (got %d)", p, s.GetStepsize())
		}
		return base / (1 + math.Exp(-gamma*(it-float64(s.GetStepsize())))), nil
	case "":
		return 0, fmt.Errorf("caffe solver: no lr_policy")
	default:
		return 0, fmt.Errorf("caffe solver: lr_policy %q is not supported (fixed, step, exp, inv, multistep, poly and sigmoid are)", p)
	}
}
