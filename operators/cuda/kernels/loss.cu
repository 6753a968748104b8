// Softmax, losses, accuracy and the reductions of FC. Rows are reduced in
// double by one block of C2G_THREADS threads, in a fixed tree order, so
// every run gives the same bits; the CPU operators also reduce in double.

#define C2G_THREADS 128

// c2g_block_reduce combines the threads' values of a block (max when
// is_max, else sum) and returns the result to every thread.
__device__ double c2g_block_reduce(double v, bool is_max) {
	__shared__ double buf[C2G_THREADS];
	buf[threadIdx.x] = v;
	__syncthreads();
	for (int s = C2G_THREADS / 2; s > 0; s >>= 1) {
		if (threadIdx.x < s) {
			double o = buf[threadIdx.x + s];
			buf[threadIdx.x] = is_max ? (o > buf[threadIdx.x] ? o : buf[threadIdx.x]) : buf[threadIdx.x] + o;
		}
		__syncthreads();
	}
	double r = buf[0];
	__syncthreads();
	return r;
}

// c2g_softmax_rows: p = softmax of each of the n rows of d values of x,
// one block per row. When row_loss is not null it also writes each row's
// loss against labels (or label probabilities) and its weight: the first
// stage of SoftmaxWithLoss. A label outside [0, d) makes its row's loss
// NaN.
template <typename T> __device__ void c2g_softmax_rows(const T* x, T* p, int n, int d,
		const int* labels, const T* probs, const T* w, double* row_loss, double* row_w) {
	for (int i = blockIdx.x; i < n; i += gridDim.x) {
		const T* row = x + (long long)i * d;
		T* prow = p + (long long)i * d;
		double mx = -1.0 / 0.0;
		for (int j = threadIdx.x; j < d; j += C2G_THREADS) mx = double(row[j]) > mx ? double(row[j]) : mx;
		mx = c2g_block_reduce(mx, true);
		double sum = 0;
		for (int j = threadIdx.x; j < d; j += C2G_THREADS) sum += exp(double(row[j]) - mx);
		sum = c2g_block_reduce(sum, false);
		double inv = 1 / sum, l = 0;
		for (int j = threadIdx.x; j < d; j += C2G_THREADS) {
			double q = double(T(exp(double(row[j]) - mx))) * inv;
			prow[j] = T(q);
			if (row_loss != 0 && labels == 0) l -= log(q > 1e-20 ? q : 1e-20) * double(probs[(long long)i * d + j]);
		}
		if (row_loss == 0) continue;
		l = c2g_block_reduce(l, false);
		if (threadIdx.x == 0) {
			if (labels != 0) {
				int k = labels[i];
				l = (k >= 0 && k < d) ? log(sum) - (double(row[k]) - mx) : 0.0 / 0.0;
			}
			double wi = w != 0 ? double(w[i]) : 1.0;
			row_loss[i] = l * wi;
			row_w[i] = wi;
		}
	}
}

// c2g_softmax_loss_total: loss = scale·Σ row_loss / Σ row_w (0 when the
// weights sum to 0), in one block.
template <typename T> __device__ void c2g_softmax_loss_total(const double* row_loss, double* row_w, int n, double scale, T* loss) {
	double l = 0, w = 0;
	for (int i = threadIdx.x; i < n; i += C2G_THREADS) {
		l += row_loss[i];
		w += row_w[i];
	}
	l = c2g_block_reduce(l, false);
	w = c2g_block_reduce(w, false);
	if (threadIdx.x == 0) loss[0] = T(w != 0 ? l * scale / w : 0);
}

// c2g_softmax_loss_grad: dx = (p − onehot(label) or label probabilities)·c
// with c = scale·dloss·wᵢ/Σw (Σw = n without weights).
template <typename T> __device__ void c2g_softmax_loss_grad(const T* p, T* dx, int n, int d, const int* labels,
		const T* probs, const T* w, const T* dloss, double scale) {
	__shared__ double factor;
	if (threadIdx.x == 0) {
		double total = n;
		if (w != 0) {
			total = 0;
			for (int i = 0; i < n; i++) total += double(w[i]);
		}
		factor = total != 0 ? scale * double(dloss[0]) / total : 0;
	}
	__syncthreads();
	long long nd = (long long)n * d;
	for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < nd; k += (long long)blockDim.x * gridDim.x) {
		int i = int(k / d), j = int(k % d);
		double c = factor * (w != 0 ? double(w[i]) : 1.0);
		double target = labels != 0 ? (labels[i] == j ? 1.0 : 0.0) : double(probs[k]);
		dx[k] = T((double(p[k]) - target) * c);
	}
}

// c2g_softmax_grad: dx = y·(dy − Σⱼ dy·y) per row (SoftmaxGradient), one
// block per row.
template <typename T> __device__ void c2g_softmax_grad(const T* y, const T* dy, T* dx, int n, int d) {
	for (int i = blockIdx.x; i < n; i += gridDim.x) {
		long long o = (long long)i * d;
		double s = 0;
		for (int j = threadIdx.x; j < d; j += C2G_THREADS) s += double(dy[o + j]) * double(y[o + j]);
		s = c2g_block_reduce(s, false);
		for (int j = threadIdx.x; j < d; j += C2G_THREADS) dx[o + j] = T(double(y[o + j]) * (double(dy[o + j]) - s));
	}
}

// c2g_mean: y = scale·Σx (AveragedLoss passes 1/n), in one block; 0 for no
// elements.
template <typename T> __device__ void c2g_mean(const T* x, long long n, double scale, T* y) {
	double s = 0;
	for (long long i = threadIdx.x; i < n; i += C2G_THREADS) s += double(x[i]);
	s = c2g_block_reduce(s, false);
	if (threadIdx.x == 0) y[0] = T(n > 0 ? s * scale : 0);
}

// c2g_fill_scaled: y = scale·g[0] everywhere (AveragedLossGradient).
template <typename T> __device__ void c2g_fill_scaled(const T* g, double scale, T* y, long long n) {
	T v = T(double(g[0]) * scale);
	for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) y[i] = v;
}

// c2g_accuracy: the fraction of the n rows whose label is among the top_k
// scores (ties go to the lower class index), in one block.
template <typename T> __device__ void c2g_accuracy(const T* x, const int* labels, int n, int d, int top_k, float* y) {
	double correct = 0;
	for (int i = threadIdx.x; i < n; i += C2G_THREADS) {
		int l = labels[i];
		if (l < 0 || l >= d) continue;
		const T* row = x + (long long)i * d;
		T target = row[l];
		int rank = 1;
		for (int j = 0; j < d && rank <= top_k; j++)
			if (row[j] > target || (row[j] == target && j < l)) rank++;
		if (rank <= top_k) correct += 1;
	}
	correct = c2g_block_reduce(correct, false);
	if (threadIdx.x == 0) y[0] = float(correct) / float(n);
}

// c2g_label_xent: y[i] = −log(max(x[i, label[i]], 1e-20))
// (LabelCrossEntropy).
template <typename T> __device__ void c2g_label_xent(const T* x, const int* labels, int n, int d, T* y) {
	for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
		int l = labels[i];
		double p = (l >= 0 && l < d) ? double(x[(long long)i * d + l]) : 0.0 / 0.0;
		y[i] = T(-log(p > 1e-20 ? p : 1e-20));
	}
}

// c2g_label_xent_grad: dx[i, label[i]] = −dy[i]/max(x[i, label[i]], 1e-20),
// 0 elsewhere.
template <typename T> __device__ void c2g_label_xent_grad(const T* x, const int* labels, const T* dy, int n, int d, T* dx) {
	long long nd = (long long)n * d;
	for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < nd; k += (long long)blockDim.x * gridDim.x) {
		int i = int(k / d), j = int(k % d);
		double p = double(x[k]);
		dx[k] = labels[i] == j ? T(-double(dy[i]) / (p > 1e-20 ? p : 1e-20)) : T(0);
	}
}

// c2g_col_sums: s[j] = Σᵢ x[i, j] over m rows of n columns (FC's bias
// gradient), summed in row order in double.
template <typename T> __device__ void c2g_col_sums(const T* x, int m, int n, T* s) {
	for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < n; j += blockDim.x * gridDim.x) {
		double a = 0;
		for (int i = 0; i < m; i++) a += double(x[(long long)i * n + j]);
		s[j] = T(a);
	}
}

// c2g_add_bias: y[i, j] += b[j] over m rows of n columns (FC's bias).
template <typename T> __device__ void c2g_add_bias(T* y, const T* b, int m, int n) {
	long long mn = (long long)m * n;
	for (long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x; k < mn; k += (long long)blockDim.x * gridDim.x)
		y[k] += b[k % n];
}
