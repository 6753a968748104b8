// The plain C++ side of allreducebench: the same all-reduces straight on
// libgloo (Debian's libgloo.so.0, which PyTorch's python3-torch links too),
// with no Go, cgo or operator in the way. compare.py builds it; by hand,
// from the repository root:
//
//	g++ -std=c++17 -O3 operators/gloo/allreducebench/cxx/allreduce_gloo.cc \
//	    -o allreduce_gloo -lgloo -lpthread
//
// and runs it as: allreduce_gloo RANK SIZE STORE_DIR MB,MB,… ITERS,ITERS,…
// Rank 0 prints one JSON line per size with the median seconds per
// all-reduce after one warm-up.
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

static std::vector<double> list(const char* s) {
  std::vector<double> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::stod(item));
  return out;
}

int main(int argc, char** argv) {
  if (argc != 6) {
    fprintf(stderr, "usage: %s rank size store-dir mb,… iters,…\n", argv[0]);
    return 2;
  }
  int rank = atoi(argv[1]), size = atoi(argv[2]);
  auto mbs = list(argv[4]), iters = list(argv[5]);
  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";
  auto dev = gloo::transport::tcp::CreateDevice(attr);
  auto ctx = std::make_shared<gloo::rendezvous::Context>(rank, size);
  ctx->setTimeout(std::chrono::seconds(600));
  gloo::rendezvous::FileStore store(argv[3]);
  ctx->connectFullMesh(store, dev);
  uint32_t tag = 1;
  for (size_t k = 0; k < mbs.size() && k < iters.size(); k++) {
    size_t n = mbs[k] * 1e6 / 4;
    std::vector<float> x(n, float(rank + 1));
    auto allreduce = [&] {
      gloo::AllreduceOptions o(ctx);
      o.setOutput(x.data(), n);
      o.setReduceFunction(static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
      o.setTag(tag);
      gloo::allreduce(o);
    };
    auto barrier = [&] {
      gloo::BarrierOptions b(ctx);
      b.setTag(tag + 1);
      gloo::barrier(b);
    };
    allreduce();  // warm-up
    if (x[n - 1] != float(size * (size + 1) / 2)) {
      fprintf(stderr, "rank %d: the all-reduced tensor holds %g\n", rank, x[n - 1]);
      return 1;
    }
    barrier();
    std::vector<double> t;
    for (int i = 0; i < int(iters[k]); i++) {
      auto start = std::chrono::steady_clock::now();
      allreduce();
      t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    barrier();
    tag += 2;
    std::sort(t.begin(), t.end());
    if (rank == 0 && !t.empty()) {
      printf("{\"impl\": \"libgloo\", \"ranks\": %d, \"mb\": %g, \"iters\": %zu, \"seconds\": %.9f}\n", size, mbs[k], t.size(),
             t[t.size() / 2]);
      fflush(stdout);
    }
  }
  return 0;
}
