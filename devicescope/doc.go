// Package devicescope holds device placement: DeviceOption helpers with
// Caffe2's equality rules, name and device scopes with Caffe2's nesting
// semantics, and the Device interface with its CPU implementation.
//
// Caffe2 keeps scopes in thread-local state. Go has no thread locals, so a
// Scope here is an immutable value: derive a nested scope with WithName or
// WithDevice and pass it to the code that builds operators. For REPL-style
// programs there is also a process-wide current scope (Current, NameScope,
// DeviceScope), guarded by a mutex; concurrent builders should use explicit
// Scope values instead.
//
// Several CPU devices (cpu_0, cpu_1, …) are distinct logical devices, each
// with its own worker goroutines, which is how data-parallel training runs
// and is tested on machines without a GPU.
package devicescope
