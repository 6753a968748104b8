package cuda

// hostOnly names the CPU operator types that get no CUDA implementation:
// strings cannot live in GPU memory, and Allreduce's CUDA engines are
// registered apart.
var hostOnly = []string{"GivenTensorStringFill", "Allreduce"}
