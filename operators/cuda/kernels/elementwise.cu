// Element-wise functions. Each operator's kernel applies one of them to
// every element (source.go generates one kernel per operator and element
// type from its table). Transcendental functions are evaluated in double,
// as the CPU operators do, so both round the same exact value to T.

template <typename T> __device__ __forceinline__ T c2g_relu(T x) { return (x > T(0) || x != x) ? x : T(0); }
template <typename T> __device__ __forceinline__ T c2g_relu_grad(T y, T dy) { return y > T(0) ? dy : T(0); }
template <typename T> __device__ __forceinline__ T c2g_leaky_relu(T x, double alpha) {
	return (x > T(0) ? x : T(0)) + (x < T(0) ? x : T(0)) * T(alpha);
}
template <typename T> __device__ __forceinline__ T c2g_leaky_relu_grad(T y, T dy, double alpha) { return y >= T(0) ? dy : T(alpha) * dy; }
template <typename T> __device__ __forceinline__ T c2g_sigmoid(T x) { return T(1.0 / (1.0 + exp(-double(x)))); }
template <typename T> __device__ __forceinline__ T c2g_sigmoid_grad(T y, T dy) { return dy * y * (T(1) - y); }
template <typename T> __device__ __forceinline__ T c2g_tanh(T x) { return T(tanh(double(x))); }
template <typename T> __device__ __forceinline__ T c2g_tanh_grad(T y, T dy) { return dy * (T(1) - y * y); }
template <typename T> __device__ __forceinline__ T c2g_negative(T x) { return -x; }
template <typename T> __device__ __forceinline__ T c2g_exp(T x) { return T(exp(double(x))); }
template <typename T> __device__ __forceinline__ T c2g_log(T x) { return T(log(double(x))); }
template <typename T> __device__ __forceinline__ T c2g_sqrt(T x) { return T(sqrt(double(x))); }
template <typename T> __device__ __forceinline__ T c2g_sqr(T x) { return x * x; }
template <typename T> __device__ __forceinline__ T c2g_abs(T x) { return T(fabs(double(x))); }
template <typename T> __device__ __forceinline__ T c2g_abs_grad(T x, T dy) { return x > T(0) ? dy : (x < T(0) ? -dy : T(0)); }
template <typename T> __device__ __forceinline__ T c2g_scale(T x, double s) { return x * T(s); }
template <typename T> __device__ __forceinline__ T c2g_clip(T x, double lo, double hi) {
	T l = T(lo), h = T(hi);
	return x < l ? l : (x > h ? h : x);
}
template <typename T> __device__ __forceinline__ T c2g_clip_grad(T y, T dy, double lo, double hi) {
	return (y > T(lo) && y < T(hi)) ? dy : T(0);
}

// Binary arithmetic (Add, Sub, Mul, Div), selected by op.
template <typename T> __device__ __forceinline__ T c2g_binary(int op, T a, T b) {
	switch (op) {
	case 0: return a + b;
	case 1: return a - b;
	case 2: return a * b;
	default: return a / b;
	}
}

// c2g_binary_strided computes c = a op b over an output of at most four
// dimensions d0×d1×d2×d3 (d3 innermost), reading a and b through strides
// that are 0 along the dimensions they are broadcast over.
template <typename T> __device__ void c2g_binary_strided(int op, const T* a, const T* b, T* c, long long n,
		long long d1, long long d2, long long d3,
		long long as0, long long as1, long long as2, long long as3,
		long long bs0, long long bs1, long long bs2, long long bs3) {
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) {
		long long r = i;
		long long i3 = r % d3; r /= d3;
		long long i2 = r % d2; r /= d2;
		long long i1 = r % d1;
		long long i0 = r / d1;
		c[i] = c2g_binary(op, a[i0 * as0 + i1 * as1 + i2 * as2 + i3 * as3], b[i0 * bs0 + i1 * bs1 + i2 * bs2 + i3 * bs3]);
	}
}

// c2g_binary_same is c2g_binary_strided for two inputs of the output's
// shape.
template <typename T> __device__ void c2g_binary_same(int op, const T* a, const T* b, T* c, long long n) {
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x)
		c[i] = c2g_binary(op, a[i], b[i]);
}

// Sums and weighted sums (Sum, WeightedSum, SGD's updates), accumulated in
// the order of the inputs as the CPU operators do, and fills.
template <typename T> __device__ void c2g_add_into(const T* x, T* y, long long n) {
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x)
		y[i] += x[i];
}

template <typename T> __device__ void c2g_weighted_first(const T* x, const T* w, T* y, long long n) {
	T s = w[0];
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x)
		y[i] = s * x[i];
}

template <typename T> __device__ void c2g_weighted_add(const T* x, const T* w, T* y, long long n) {
	T s = w[0];
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x)
		y[i] += s * x[i];
}

template <typename T> __device__ void c2g_fill(T* y, T v, long long n) {
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x)
		y[i] = v;
}
