package gemm

// columnsPay reports whether a product that split would cut by rows
// should rather be cut by columns, and returns the columns per task and
// the number of tasks then.
//
// Cut by rows, every task packs the whole of op(B) for its few rows: with
// two tasks on a 256×512×512 product (an MLP's hidden layer) that is a
// tenth of each task's time, and it grows with the tasks. Cut by columns,
// each task packs only its own strips of B, and when they are few (at
// most inPlaceStrips) and A is not transposed it reads A in place, so
// nothing is packed twice. Measured per task (CPU time, one AVX2 core),
// the columns save 10–20% on the FC products of the mlp and lenet
// workloads at 2 and 8 tasks. They are chosen only when that holds: A
// untransposed (a transposed A is packed by every task again), at least
// two strips per task, and an A of at most colsMaxA elements, so that
// reading it in place by every task stays in cache; large square products
// keep their row split.
func columnsPay(transA bool, m, n, k, tasks, nr int) (chunk, ntasks int, ok bool) {
	if transA || tasks < 2 || m*k > colsMaxA {
		return 0, 0, false
	}
	chunk = roundUp((n+tasks-1)/tasks, nr)
	if chunk < 2*nr || chunk > inPlaceStrips*nr {
		return 0, 0, false
	}
	return chunk, (n + chunk - 1) / chunk, true
}

// colsMaxA is the largest A (m·k elements, 1 MiB of float32) for which
// columnsPay cuts by columns.
const colsMaxA = 1 << 18
