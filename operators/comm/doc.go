// Package comm holds the collective operators data-parallel training uses.
//
// Allreduce takes one tensor per replica (the same gradient on each device)
// and leaves in every one of them their element-wise sum. Its engine says
// how the sum is formed:
//
//   - SUM_TREE (the default, also chosen by the empty engine): Caffe2's
//     single-host algorithm. Pairs of replicas are summed into the first of
//     each pair level by level — (0,1)(2,3)…, then (0,2)(4,6)…, then
//     (0,4)(8,12), then (0,8) for 4, 8 and 16 replicas; one sum over all of
//     them for any other count — and replica 0 is then copied to the others.
//   - RING: the bandwidth-optimal ring. Each buffer is cut into as many
//     chunks as there are replicas; N−1 reduce-scatter steps leave each
//     replica with one fully summed chunk and N−1 all-gather steps copy
//     those chunks round the ring. Every replica reads and writes 2(N−1)/N
//     of its buffer, against N−1 times the whole buffer for replica 0 in
//     the tree.
//
// A new engine (NCCL on GPUs, Gloo across hosts) is an Engine
// implementation registered with RegisterEngine for its device type and
// engine name; the operator and the nets that use it stay the same.
package comm
