// Parameter updates, element by element, with the CPU operators' formulas
// and order of operations. lr and the other per-step scalars are read from
// device memory; what depends on the CPU iteration counter (Adam's bias
// correction) is computed on the host and passed in.

template <typename T> __device__ void c2g_momentum_sgd(const T* g, const T* m, const T* lr, T* ng, T* nm, T* param,
		double momentum, int nesterov, long long n) {
	T l = lr[0], mu = T(momentum);
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) {
		T gi = g[i], mi = m[i], a;
		if (nesterov) {
			T mn = mu * mi + l * gi;
			nm[i] = mn;
			a = (T(1) + mu) * mn - mu * mi;
		} else {
			a = l * gi + mu * mi;
			nm[i] = a;
		}
		ng[i] = a;
		if (param != 0) param[i] -= a;
	}
}

template <typename T> __device__ void c2g_adam(const T* w, const T* g, const T* m, const T* v, const T* lr,
		T* nw, T* nm, T* nv, T* ng, double beta1, double beta2, double eps, double corr, long long n) {
	T b1 = T(beta1), b2 = T(beta2), e = T(eps), c = T(corr), l = lr[0];
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) {
		T gi = g[i];
		T mi = m[i] * b1 + gi * (T(1) - b1);
		T vi = v[i] * b2 + gi * gi * (T(1) - b2);
		nm[i] = mi;
		nv[i] = vi;
		if (ng == 0) {
			nw[i] = w[i] + l * c * mi / (T(sqrt(double(vi))) + e);
		} else {
			T u = c * mi / (T(sqrt(double(vi))) + e);
			ng[i] = u;
			nw[i] = w[i] + l * u;
		}
	}
}

template <typename T> __device__ void c2g_adagrad(const T* w, const T* g, const T* h, const T* lr, T* nw, T* nh,
		T* elr, T* upd, double eps, double decay, long long n) {
	T e = T(eps), dc = T(decay), l = lr[0];
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) {
		T gi = g[i];
		T hi = dc * h[i] + gi * gi;
		nh[i] = hi;
		if (elr == 0) {
			nw[i] = w[i] + l * gi / (T(sqrt(double(hi))) + e);
			continue;
		}
		T r = l / (T(sqrt(double(hi))) + e);
		elr[i] = r;
		T u = r * gi;
		if (upd != 0) upd[i] = u;
		nw[i] = w[i] + u;
	}
}
