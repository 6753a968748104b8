package cuda

// hostOnly names the CPU operator types that get no CUDA implementation:
// strings cannot live in GPU memory, Allreduce's CUDA engines are
// registered apart, and RecurrentNetwork's step nets use blobs of the
// workspace beyond its inputs and outputs, which a host fallback cannot
// mirror.
var hostOnly = []string{"GivenTensorStringFill", "Allreduce", "RecurrentNetwork", "RecurrentNetworkGradient"}
