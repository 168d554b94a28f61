// SPDX-License-Identifier: Apache-2.0
// Every CUDA runtime call that takes a stream, once on cudaStreamPerThread, each on a thread of
// its own and again on the main thread: each line says the call and what it returned, and the
// results it computes (a memset, a copy, a kernel, a graph) are checked. Under `greenctx run` the
// calls go to the thread's emulated per-thread stream; a call the runtime resolves past the
// driver's public entry points (where greenctx cannot translate the handle) shows here as a
// failure the plain run does not have. Knows nothing of greenctx.
//
//   ptds_api [--timeout-s S]
#include "run_common.cuh"

#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

using run_test::format;

__global__ void fill(int *p, int n, int v) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    p[i] = v;
}

void CUDART_CB host_fn(void *flag) {
  *static_cast<int *>(flag) = 1;
}
void CUDART_CB callback_fn(cudaStream_t, cudaError_t, void *flag) {
  *static_cast<int *>(flag) = 1;
}

constexpr int n = 1 << 20;

struct call {
  const char *name;
  // Runs the call on cudaStreamPerThread with `d` (n ints of device memory, zeroed) and returns
  // its error; `check` (optional) then says what is wrong with its result, or "".
  std::function<cudaError_t(int *d)> run;
  std::function<std::string(int *d)> check;
};

const cudaStream_t pts = cudaStreamPerThread;

std::string expect_all(int *d, int v) {
  std::vector<int> h(n);
  if (cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost) != cudaSuccess)
    return "the copy back failed";
  for (int i = 0; i < n; ++i)
    if (h[i] != v)
      return format("element %d is %d, expected %d", i, h[i], v);
  return "";
}

// A graph of one fill(d, n, v), captured on cudaStreamPerThread, and its executable graph once
// made: both destroyed with it.
struct graph_of_fill {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  cudaError_t capture(int *d, int v) {
    const cudaError_t rc = cudaStreamBeginCapture(pts, cudaStreamCaptureModeThreadLocal);
    if (rc)
      return rc;
    fill<<<64, 256, 0, pts>>>(d, n, v);
    return cudaStreamEndCapture(pts, &graph);
  }
  ~graph_of_fill() {
    if (exec)
      cudaGraphExecDestroy(exec);
    if (graph)
      cudaGraphDestroy(graph);
  }
};

std::vector<call> calls() {
  std::vector<call> c;
  c.push_back({"cudaMemsetAsync",
               [](int *d) { return cudaMemsetAsync(d, 1, n * sizeof(int), pts); },
               [](int *d) { return expect_all(d, 0x01010101); }});
  c.push_back({"cudaMemsetAsync (4 MiB, unaligned end)",
               [](int *d) { return cudaMemsetAsync(d, 0, (4u << 20) - 3, pts); }, nullptr});
  c.push_back({"cudaMemset2DAsync",
               [](int *d) { return cudaMemset2DAsync(d, 1024, 2, 1024, n * 4 / 1024, pts); },
               [](int *d) { return expect_all(d, 0x02020202); }});
  c.push_back({"cudaMemcpyAsync (device to device)",
               [](int *d) {
                 cudaError_t rc = cudaMemsetAsync(d + n / 2, 3, n / 2 * sizeof(int), pts);
                 return rc ? rc
                           : cudaMemcpyAsync(d, d + n / 2, n / 2 * sizeof(int),
                                             cudaMemcpyDeviceToDevice, pts);
               },
               [](int *d) { return expect_all(d, 0x03030303); }});
  c.push_back({"kernel <<<..., cudaStreamPerThread>>>",
               [](int *d) {
                 fill<<<64, 256, 0, pts>>>(d, n, 7);
                 return cudaGetLastError();
               },
               [](int *d) { return expect_all(d, 7); }});
  c.push_back({"cudaLaunchKernelExC",
               [](int *d) {
                 cudaLaunchConfig_t config{};
                 config.gridDim = 64;
                 config.blockDim = 256;
                 config.stream = pts;
                 int nn = n, v = 8;
                 void *args[] = {&d, &nn, &v};
                 return cudaLaunchKernelExC(&config, reinterpret_cast<const void *>(&fill), args);
               },
               [](int *d) { return expect_all(d, 8); }});
  c.push_back({"cudaLaunchCooperativeKernel",
               [](int *d) {
                 int nn = n, v = 9;
                 void *args[] = {&d, &nn, &v};
                 return cudaLaunchCooperativeKernel(reinterpret_cast<const void *>(&fill), 8, 256,
                                                    args, 0, pts);
               },
               [](int *d) { return expect_all(d, 9); }});
  c.push_back({"cudaEventRecord, cudaStreamWaitEvent",
               [](int *) {
                 cudaEvent_t e;
                 cudaError_t rc = cudaEventCreateWithFlags(&e, cudaEventDisableTiming);
                 if (rc)
                   return rc;
                 rc = cudaEventRecord(e, pts);
                 if (!rc)
                   rc = cudaStreamWaitEvent(pts, e, 0);
                 if (!rc)
                   rc = cudaEventRecordWithFlags(e, pts, cudaEventRecordDefault);
                 if (!rc)
                   rc = cudaEventSynchronize(e);
                 cudaEventDestroy(e);
                 return rc;
               },
               nullptr});
  c.push_back({"cudaLaunchHostFunc, cudaStreamAddCallback",
               [](int *) {
                 static thread_local int a = 0, b = 0;
                 a = b = 0;
                 cudaError_t rc = cudaLaunchHostFunc(pts, host_fn, &a);
                 if (!rc)
                   rc = cudaStreamAddCallback(pts, callback_fn, &b, 0);
                 if (!rc)
                   rc = cudaStreamSynchronize(pts);
                 return rc ? rc : (a && b ? cudaSuccess : cudaErrorUnknown);
               },
               nullptr});
  c.push_back({"cudaMallocAsync, cudaFreeAsync",
               [](int *d) {
                 void *p = nullptr;
                 cudaError_t rc = cudaMallocAsync(&p, 4u << 20, pts);
                 if (!rc)
                   rc = cudaMemsetAsync(p, 5, 4u << 20, pts);
                 if (!rc)
                   rc = cudaMemcpyAsync(d, p, n * sizeof(int), cudaMemcpyDeviceToDevice, pts);
                 if (!rc)
                   rc = cudaFreeAsync(p, pts);
                 return rc;
               },
               [](int *d) { return expect_all(d, 0x05050505); }});
  c.push_back({"cudaMemcpyAsync (host to device, pageable), cudaStreamSynchronize",
               [](int *d) {
                 static thread_local std::vector<int> h;
                 h.assign(n, 11);
                 cudaError_t rc =
                     cudaMemcpyAsync(d, h.data(), n * sizeof(int), cudaMemcpyHostToDevice, pts);
                 return rc ? rc : cudaStreamSynchronize(pts);
               },
               [](int *d) { return expect_all(d, 11); }});
  c.push_back({"cudaStreamQuery, cudaStreamGetFlags, cudaStreamGetPriority, cudaStreamGetId",
               [](int *) {
                 unsigned flags = 0;
                 int priority = 0;
                 unsigned long long id = 0;
                 cudaError_t rc = cudaStreamSynchronize(pts);
                 if (!rc)
                   rc = cudaStreamQuery(pts);
                 if (!rc)
                   rc = cudaStreamGetFlags(pts, &flags);
                 if (!rc)
                   rc = cudaStreamGetPriority(pts, &priority);
                 if (!rc)
                   rc = cudaStreamGetId(pts, &id);
                 return rc;
               },
               nullptr});
  c.push_back({"cudaStreamGetDevice",
               [](int *) {
                 int device = -1;
                 cudaError_t rc = cudaStreamGetDevice(pts, &device);
                 return rc ? rc : (device == 0 ? cudaSuccess : cudaErrorInvalidDevice);
               },
               nullptr});
  c.push_back(
      {"cudaStreamIsCapturing, cudaStreamGetCaptureInfo",
       [](int *) {
         cudaStreamCaptureStatus status{};
         cudaError_t rc = cudaStreamIsCapturing(pts, &status);
         unsigned long long id = 0;
         if (!rc)
           rc = cudaStreamGetCaptureInfo(pts, &status, &id);
         return rc ? rc : (status == cudaStreamCaptureStatusNone ? cudaSuccess : cudaErrorUnknown);
       },
       nullptr});
  c.push_back({"cudaStreamGetAttribute, cudaStreamSetAttribute",
               [](int *) {
                 cudaLaunchAttributeValue v{};
                 cudaError_t rc = cudaStreamGetAttribute(pts, cudaLaunchAttributePriority, &v);
                 if (!rc)
                   rc = cudaStreamSetAttribute(pts, cudaLaunchAttributePriority, &v);
                 return rc;
               },
               nullptr});
  c.push_back({"capture on cudaStreamPerThread, cudaGraphInstantiate, cudaGraphLaunch",
               [](int *d) {
                 graph_of_fill graph;
                 cudaError_t rc = graph.capture(d, 12);
                 if (!rc)
                   rc = cudaGraphInstantiate(&graph.exec, graph.graph, 0);
                 if (!rc)
                   rc = cudaGraphUpload(graph.exec, pts);
                 return rc ? rc : cudaGraphLaunch(graph.exec, pts);
               },
               [](int *d) { return expect_all(d, 12); }});
  c.push_back({"cudaGraphInstantiateWithParams (upload on cudaStreamPerThread)",
               [](int *d) {
                 graph_of_fill graph;
                 cudaGraphInstantiateParams params{};
                 params.flags = cudaGraphInstantiateFlagUpload;
                 params.uploadStream = pts;
                 cudaError_t rc = graph.capture(d, 13);
                 if (!rc)
                   rc = cudaGraphInstantiateWithParams(&graph.exec, graph.graph, &params);
                 return rc ? rc : cudaGraphLaunch(graph.exec, pts);
               },
               [](int *d) { return expect_all(d, 13); }});
  c.push_back({"cudaMemPrefetchAsync (managed memory)",
               [](int *) {
                 int *m = nullptr;
                 cudaError_t rc = cudaMallocManaged(&m, n * sizeof(int));
                 cudaMemLocation to{};
                 to.type = cudaMemLocationTypeDevice;
                 to.id = 0;
                 if (!rc)
                   rc = cudaMemPrefetchAsync(m, n * sizeof(int), to, 0, pts);
                 if (!rc)
                   rc = cudaStreamAttachMemAsync(pts, m, 0, cudaMemAttachSingle);
                 if (!rc)
                   rc = cudaStreamSynchronize(pts);
                 cudaFree(m);
                 return rc;
               },
               nullptr});
  return c;
}

// Runs one call and its check on this thread; the line it prints (the same plain and confined).
std::string run_one(const call &c, run_test::recorder &rec) {
  int *d = nullptr;
  std::string line = c.name;
  if (!rec.check(cudaMalloc(&d, n * sizeof(int)), "cudaMalloc") ||
      !rec.check(cudaMemset(d, 0, n * sizeof(int)), "cudaMemset"))
    return line + ": setup failed";
  const cudaError_t rc = c.run(d);
  const cudaError_t sync = cudaStreamSynchronize(pts);
  if (rc != cudaSuccess) {
    rec.fail(format("%s: %s", c.name, cudaGetErrorName(rc)));
    line += format(": %s", cudaGetErrorName(rc));
    cudaGetLastError();
  } else if (sync != cudaSuccess) {
    rec.fail(
        format("%s: the stream's synchronization after it: %s", c.name, cudaGetErrorName(sync)));
    line += format(": ok, then cudaStreamSynchronize %s", cudaGetErrorName(sync));
  } else {
    const std::string wrong = c.check ? c.check(d) : "";
    rec.expect(wrong.empty(), format("%s: %s", c.name, wrong.c_str()));
    line += wrong.empty() ? ": ok" : ": wrong result (" + wrong + ")";
  }
  cudaFree(d);
  return line;
}

} // namespace

int main(int argc, char **argv) {
  double timeout_s = 120;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--timeout-s") == 0 && i + 1 < argc) {
      timeout_s = std::atof(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: ptds_api [--timeout-s S]\n");
      return 2;
    }
  }
  run_test::watchdog dog("ptds_api", timeout_s);
  run_test::recorder rec("ptds_api");
  if (!rec.check(cudaSetDevice(0), "cudaSetDevice") || !rec.check(cudaFree(nullptr), "cudaFree(0)"))
    return 1;
  const std::vector<call> all = calls();
  for (const call &c : all) {
    dog.at(c.name);
    std::string line;
    std::thread([&] {
      rec.check(cudaSetDevice(0), "cudaSetDevice (thread)");
      line = run_one(c, rec);
    }).join();
    std::printf("own thread: %s\n", line.c_str());
    std::printf("main thread: %s\n", run_one(c, rec).c_str());
  }
  std::printf("ptds_api: %s\n", rec.ok() ? "ok" : "FAILED");
  return rec.ok() ? 0 : 1;
}
