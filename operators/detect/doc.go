// Package detect holds Caffe2's object-detection operators (Fast/Faster/
// Mask R-CNN, FPN), on CPU, float32:
//
//   - RoIAlign (NCHW or NHWC; spatial_scale, pooled_h, pooled_w,
//     sampling_ratio, aligned) and RoIAlignGradient; RoIPool (NCHW, with
//     argmaxes unless is_test) and RoIPoolGradient.
//   - BBoxTransform applies box-regression deltas, upright or rotated
//     (angle_bound_on, angle_bound_lo/hi, clip_angle_thresh), and clips to
//     the image.
//   - BoxWithNMSLimit: per-class NMS or Soft-NMS (linear, Gaussian) and a
//     per-image detection limit, with batch splits, keeps and keeps_size,
//     upright or rotated.
//   - GenerateProposals (and its old name GenerateProposalsCPP): RPN
//     anchors (upright or rotated) to proposals.
//   - CollectAndDistributeFpnRpnProposals, CollectRpnProposals and
//     DistributeFpnProposals merge RPN proposals over FPN levels and assign
//     RoIs to levels by size.
//   - IntegralImage (N, C, H, W) → (N, C, H+1, W+1) and its gradient.
//
// Box arithmetic follows Caffe2's generate_proposals_op_util_boxes.h,
// including legacy_plus_one (default true: a box [x1, x2] is x2 − x1 + 1
// pixels wide). Where Caffe2 sorts with std::sort (scores that tie), the
// sorts here are stable: tied boxes keep their input order.
//
// Rotated boxes [ctr_x, ctr_y, w, h, angle°] (BBoxTransform's and
// BoxWithNMSLimit's rotated, GenerateProposals' (A, 5) anchors) are
// suppressed by the IoU of the rotated rectangles, computed as Caffe2 does
// (intersection points, convex hull, polygon area).
//
// Differences from Caffe2, all on inputs Caffe2 leaves undefined or gets
// wrong: RoIs with batch indices outside X, non-finite coordinates, RoIs
// whose sampling grid exceeds 2²⁴ points and coordinates beyond 2³⁰ are
// errors; an aligned RoI of zero size, which has no sampling points, pools
// to 0 (Caffe2's kernel multiplies 0 by 1/0); RoIPoolGradient, which
// Caffe2 implements on CUDA only, and an NHWC RoIAlignGradient, which its
// CPU kernel lacks, run here on the CPU; and IntegralImageGradient is the true transpose of
// IntegralImage (dX[i][j] sums dY over r > i, c > j), where Caffe2's CPU
// kernel sums the opposite corner.
//
// Importing the package registers the operators, their schemas, shape
// functions and gradient makers.
package detect
