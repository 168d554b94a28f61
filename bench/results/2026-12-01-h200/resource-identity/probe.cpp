// Probe: are split pieces byte-identical across split calls of the same input, and does a GC's
// resource read back equal its piece? Also: cost of split + desc.
#include <cuda.h>
#include <cstdio>
#include <cstring>
#include <chrono>
#define CK(x)                                                                                      \
  do {                                                                                             \
    CUresult r = (x);                                                                              \
    if (r) {                                                                                       \
      const char *s;                                                                               \
      cuGetErrorName(r, &s);                                                                       \
      printf("%s:%d %s -> %s\n", __FILE__, __LINE__, #x, s);                                       \
      return 1;                                                                                    \
    }                                                                                              \
  } while (0)
static void dump(const char *tag, const CUdevResource &r) {
  const unsigned char *b = (const unsigned char *)&r;
  printf("%s type=%d smCount=%u bytes:", tag, r.type, r.sm.smCount);
  for (size_t i = 0; i < sizeof r; ++i) {
    if (i % 48 == 0)
      printf("\n  ");
    printf("%02x", b[i]);
  }
  printf("\n");
}
int main() {
  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  CUcontext pctx;
  CK(cuDevicePrimaryCtxRetain(&pctx, dev));
  CK(cuCtxSetCurrent(pctx));
  CUdevResource in;
  CK(cuDeviceGetDevResource(dev, &in, CU_DEV_RESOURCE_TYPE_SM));
  dump("device", in);
  CUdevResource a[16], b[16], ra, rb;
  unsigned na = 16, nb = 16;
  CK(cuDevSmResourceSplitByCount(a, &na, &in, &ra, 0, 16));
  CK(cuDevSmResourceSplitByCount(b, &nb, &in, &rb, 0, 16));
  printf("na=%u nb=%u sizeof=%zu\n", na, nb, sizeof(CUdevResource));
  for (unsigned i = 0; i < na; ++i)
    printf("piece %u identical=%d\n", i, memcmp(&a[i], &b[i], sizeof a[i]) == 0);
  printf("rem identical=%d\n", memcmp(&ra, &rb, sizeof ra) == 0);
  dump("a0", a[0]);
  dump("a1", a[1]);
  dump("rem", ra);
  // a 32 split: does its first piece of 32 contain bytes like a0|a1?
  CUdevResource c[8], rc;
  unsigned nc = 8;
  CK(cuDevSmResourceSplitByCount(c, &nc, &in, &rc, 0, 32));
  dump("c0(32)", c[0]);
  CUdevResourceDesc d;
  CK(cuDevResourceGenerateDesc(&d, &a[0], 1));
  CUgreenCtx g;
  CK(cuGreenCtxCreate(&g, d, dev, CU_GREEN_CTX_DEFAULT_STREAM));
  CUdevResource back;
  CK(cuGreenCtxGetDevResource(g, &back, CU_DEV_RESOURCE_TYPE_SM));
  dump("gc(a0) back", back);
  printf("back==a0 %d\n", memcmp(&back, &a[0], sizeof back) == 0);
  CUdevResource two[2] = {a[0], a[1]};
  CUdevResourceDesc d2;
  CK(cuDevResourceGenerateDesc(&d2, two, 2));
  CUgreenCtx g2;
  CK(cuGreenCtxCreate(&g2, d2, dev, CU_GREEN_CTX_DEFAULT_STREAM));
  CUdevResource back2;
  CK(cuGreenCtxGetDevResource(g2, &back2, CU_DEV_RESOURCE_TYPE_SM));
  dump("gc(a0+a1) back", back2);
  printf("back2==c0 %d\n", memcmp(&back2, &c[0], sizeof back2) == 0);
  // timing: split+desc
  auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < 1000; ++i) {
    unsigned n = 16;
    CK(cuDevSmResourceSplitByCount(a, &n, &in, &ra, 0, 16));
    CK(cuDevResourceGenerateDesc(&d, &a[0], 1));
  }
  auto t1 = std::chrono::steady_clock::now();
  printf("split+desc %.2f us\n", std::chrono::duration<double, std::micro>(t1 - t0).count() / 1000);
  size_t f0, t;
  CK(cuMemGetInfo(&f0, &t));
  for (int i = 0; i < 20; ++i) {
    CUgreenCtx x;
    CK(cuGreenCtxCreate(&x, d, dev, CU_GREEN_CTX_DEFAULT_STREAM));
    CK(cuGreenCtxDestroy(x));
  }
  size_t f1;
  CK(cuMemGetInfo(&f1, &t));
  printf("20 create/destroy lost %.1f MiB\n", (f0 - f1) / 1048576.0);
  return 0;
}
