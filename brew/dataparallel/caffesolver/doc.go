// Package caffesolver trains Caffe nets the way Caffe's `caffe train`
// did: it reads a solver description (caffe.SolverParameter) and its
// train/test net, builds the nets with brew (netdef/caffe's Convert in
// the TRAIN and TEST phases, parameters from the fillers or from trained
// weights), trains them data-parallel over CPU devices with
// brew/dataparallel, and applies Caffe's SGD solver:
//
//   - the learning rate of LearningRate's policies (fixed, step, exp,
//     inv, multistep, poly, sigmoid), computed at each iteration from 0;
//   - per learned parameter: diff += weight_decay·decay_mult·data (L2),
//     history = momentum·history + lr·lr_mult·diff, data −= history;
//   - with N devices, each runs batch_size examples of its own and the
//     gradients are averaged, as Caffe's multi-GPU training does; device d
//     gets records d, d+N, … of the iteration's N·batch_size, read in key
//     order and wrapping around, as Caffe's Data layer deals them.
//
// Step and Solve print Caffe's progress lines ("Iteration 100 (…), loss =
// 0.2", "Test net output #0: accuracy = 0.98"), test every test_interval
// iterations with the TEST net on the first device over test_iter batches,
// and snapshot every snapshot iterations: a .caffemodel
// (<snapshot_prefix>_iter_<n>.caffemodel) and a checkpoint of the
// workspace's store, which Restore resumes from.
//
// Data layers read Caffe's Datum records (ReadDatumDB) from LevelDB, or
// LMDB in builds with the lmdb tag; their transform_param scale and
// mean_value are part of the translated net. Not supported: solver types
// other than SGD, iter_size, L1 regularization, gradient clipping, more
// than one test net, and what Convert does not translate for training
// (data augmentation, BatchNorm with batch statistics).
package caffesolver
