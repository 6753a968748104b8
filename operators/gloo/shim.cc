//go:build gloo && cgo

#include "shim.h"

#include <stdlib.h>
#include <string.h>

#include <chrono>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>

// The Go store's callbacks (store_cgo.go). Each returns NULL or an error
// message allocated with malloc.
extern "C" {
char* c2goStoreSet(uintptr_t h, char* key, int keyLen, char* val, int valLen);
char* c2goStoreGet(uintptr_t h, char* key, int keyLen, int64_t timeoutMs,
                   char** val, int* valLen);
char* c2goStoreWait(uintptr_t h, char** keys, int* keyLens, int n,
                    int64_t timeoutMs);
}

namespace {

std::string takeError(char* msg) {
  std::string s(msg);
  free(msg);
  return s;
}

// GoStore is a gloo rendezvous store whose keys live in a Go Store.
class GoStore : public gloo::rendezvous::Store {
 public:
  GoStore(uintptr_t h, std::chrono::milliseconds timeout)
      : h_(h), timeout_(timeout) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    if (char* err = c2goStoreSet(h_, const_cast<char*>(key.data()),
                                 (int)key.size(),
                                 const_cast<char*>(data.data()),
                                 (int)data.size())) {
      throw std::runtime_error(takeError(err));
    }
  }

  std::vector<char> get(const std::string& key) override {
    char* val = nullptr;
    int n = 0;
    if (char* err = c2goStoreGet(h_, const_cast<char*>(key.data()),
                                 (int)key.size(), timeout_.count(), &val,
                                 &n)) {
      throw std::runtime_error(takeError(err));
    }
    std::vector<char> out(val, val + n);
    free(val);
    return out;
  }

  void wait(const std::vector<std::string>& keys) override {
    wait(keys, timeout_);
  }

  void wait(const std::vector<std::string>& keys,
            const std::chrono::milliseconds& timeout) override {
    std::vector<char*> ptrs;
    std::vector<int> lens;
    for (const auto& k : keys) {
      ptrs.push_back(const_cast<char*>(k.data()));
      lens.push_back((int)k.size());
    }
    if (char* err = c2goStoreWait(h_, ptrs.data(), lens.data(),
                                  (int)keys.size(), timeout.count())) {
      throw std::runtime_error(takeError(err));
    }
  }

 private:
  uintptr_t h_;
  std::chrono::milliseconds timeout_;
};

char* dupError(const char* what) {
  char* s = strdup(what);
  return s != nullptr ? s : strdup("gloo: out of memory");
}

// guard runs f and returns what it threw as an error message.
template <typename F>
char* guard(F f) {
  try {
    f();
    return nullptr;
  } catch (const std::exception& e) {
    return dupError(e.what());
  } catch (...) {
    return dupError("gloo: unknown C++ exception");
  }
}

}  // namespace

struct c2g_world {
  std::shared_ptr<gloo::transport::Device> device;
  std::shared_ptr<gloo::rendezvous::Context> context;
};

// afterError closes a world whose collective failed, so that no transfer
// of the failed operation can still touch its buffers, and so that the
// other ranks' collectives fail at once instead of at their deadline.
static char* afterError(c2g_world* w, char* err) {
  if (err != nullptr) {
    c2g_world_close(w);
  }
  return err;
}

extern "C" {

char* c2g_world_new(uintptr_t store, int rank, int size, int64_t timeout_ms,
                    const char* iface, const char* hostname, c2g_world** out) {
  *out = nullptr;
  auto w = std::make_unique<c2g_world>();
  char* err = guard([&] {
    gloo::transport::tcp::attr attr;
    if (iface != nullptr && iface[0] != '\0') {
      attr.iface = iface;
    }
    if (hostname != nullptr && hostname[0] != '\0') {
      attr.hostname = hostname;
    }
    w->device = gloo::transport::tcp::CreateDevice(attr);
    auto timeout = std::chrono::milliseconds(timeout_ms);
    w->context = std::make_shared<gloo::rendezvous::Context>(rank, size);
    w->context->setTimeout(timeout);
    GoStore s(store, timeout);
    w->context->connectFullMesh(s, w->device);
  });
  if (err == nullptr) {
    *out = w.release();
  }
  return err;
}

char* c2g_allreduce(c2g_world* w, void** bufs, int n, size_t count, int dtype,
                    uint32_t tag, int64_t timeout_ms) {
  return afterError(w, guard([&] {
    gloo::AllreduceOptions opts(w->context);
    opts.setTag(tag);
    opts.setTimeout(std::chrono::milliseconds(timeout_ms));
    switch (dtype) {
      case C2G_FLOAT:
        opts.setOutputs(reinterpret_cast<float**>(bufs), n, count);
        opts.setReduceFunction(
            static_cast<void (*)(void*, const void*, const void*, size_t)>(
                &gloo::sum<float>));
        break;
      case C2G_DOUBLE:
        opts.setOutputs(reinterpret_cast<double**>(bufs), n, count);
        opts.setReduceFunction(
            static_cast<void (*)(void*, const void*, const void*, size_t)>(
                &gloo::sum<double>));
        break;
      case C2G_INT32:
        opts.setOutputs(reinterpret_cast<int32_t**>(bufs), n, count);
        opts.setReduceFunction(
            static_cast<void (*)(void*, const void*, const void*, size_t)>(
                &gloo::sum<int32_t>));
        break;
      case C2G_INT64:
        opts.setOutputs(reinterpret_cast<int64_t**>(bufs), n, count);
        opts.setReduceFunction(
            static_cast<void (*)(void*, const void*, const void*, size_t)>(
                &gloo::sum<int64_t>));
        break;
      default:
        throw std::runtime_error("gloo: allreduce of an unsupported type");
    }
    gloo::allreduce(opts);
  }));
}

char* c2g_broadcast(c2g_world* w, void* buf, size_t bytes, int root,
                    uint32_t tag, int64_t timeout_ms) {
  return afterError(w, guard([&] {
    gloo::BroadcastOptions opts(w->context);
    opts.setTag(tag);
    opts.setTimeout(std::chrono::milliseconds(timeout_ms));
    opts.setRoot(root);
    opts.setOutput(static_cast<char*>(buf), bytes);
    gloo::broadcast(opts);
  }));
}

char* c2g_allgather(c2g_world* w, void* in, size_t bytes, void* out,
                    uint32_t tag, int64_t timeout_ms) {
  return afterError(w, guard([&] {
    gloo::AllgatherOptions opts(w->context);
    opts.setTag(tag);
    opts.setTimeout(std::chrono::milliseconds(timeout_ms));
    opts.setInput(static_cast<char*>(in), bytes);
    opts.setOutput(static_cast<char*>(out), bytes * w->context->size);
    gloo::allgather(opts);
  }));
}

char* c2g_barrier(c2g_world* w, uint32_t tag, int64_t timeout_ms) {
  return afterError(w, guard([&] {
    gloo::BarrierOptions opts(w->context);
    opts.setTag(tag);
    opts.setTimeout(std::chrono::milliseconds(timeout_ms));
    gloo::barrier(opts);
  }));
}

void c2g_world_close(c2g_world* w) {
  char* err = guard([&] {
    if (w->context) {
      w->context->closeConnections();
    }
  });
  free(err);
}

void c2g_world_free(c2g_world* w) {
  char* err = guard([&] {
    w->context.reset();
    w->device.reset();
  });
  free(err);
  delete w;
}

}  // extern "C"
