// Package rnn holds Caffe2's recurrent operators: the LSTM and GRU cells
// LSTMUnit and GRUUnit (with their gradients), and RecurrentNetwork, which
// runs a step net once per timestep, with RecurrentNetworkGradient, which
// runs the backward step net in reverse. Like Caffe2 they work on FLOAT
// tensors laid out time-major, [T, N, D]; the cells also take DOUBLE.
//
// LSTMUnit's gates come in Caffe2's order: input, forget, output, cell
// (i, f, o, g), each D wide, so c = σ(f + forget_bias)·c_prev + σ(i)·tanh(g)
// and h = σ(o)·tanh(c). GRUUnit's come as reset, update, output; the reset
// gate is applied by the step net before it, so GRUUnit reads only update
// and output: h = h_prev·σ(u) + tanh(o)·(1 − σ(u)). Both are sequence-length
// aware: at a timestep t at or past a sequence's length the state is
// carried over (or zeroed, with drop_states).
//
// # RecurrentNetwork
//
// The arguments are those caffe2.python.recurrent.recurrent_net emits, so
// nets exported from Caffe2 run unchanged: step_net and backward_step_net
// (a NetDef, or its text format as Caffe2 writes it), recurrent_states and
// initial_recurrent_state_ids, link_internal/link_external/link_offset/
// link_window, backward_link_*, alias_src/alias_dst/alias_offset, param,
// outputs_with_grads, recompute_blobs_on_backward and timestep (the name of
// the blob holding the int32 step index, "timestep" by default).
//
// Each timestep runs in a step workspace of its own that sees every blob
// of the workspace the operator runs in, as Caffe2's child workspaces do:
// the step net's intermediate blobs stay in it for the backward pass, and
// its operators are created there once, at the first run. A link makes an
// internal blob of the step workspace a view of window rows of an external
// tensor at timestep t + offset, so that the step net reads its inputs from
// and writes its outputs into the [T+1, N, D] state tensors without copies;
// aliases expose rows of those tensors as the operator's outputs
// (hidden_all, hidden_last, …), again as views. The last output holds the
// step workspaces, which the gradient operator reads; it is no tensor.
// Without a backward_step_net (forward only) two step workspaces take turns.
//
// The step workspaces live inside the operator and run the step nets'
// operators in order, so RecurrentNetwork needs nothing of the workspace
// it runs in beyond operators.Workspace, and works in any implementation of
// it (package workspace, optest's). Caffe2's RNN executor, which overlaps
// timesteps, is not implemented; enable_rnn_executor is accepted and
// ignored.
package rnn
