//===- CudaDevice.cpp - The device executor on CUDA GPUs ------------------===//
//
// This file implements the CUDA Device and Communicator (CudaDevice.h).
// Every call first selects the worker's GPU; work goes on the worker's
// stream; errors become RuntimeErrors naming the worker and CUDA's message.
// A group of transfers runs on the communication streams of the GPUs it
// touches: they wait for events recorded on the workers' streams, the
// transfers between GPUs are one NCCL group of ncclSend/ncclRecv (NCCL
// matches a pair's sends and receives in order, and both sides are issued
// in the group's order), those within a GPU are cudaMemcpyAsync, and the
// workers' streams then wait for events recorded on the communication
// streams. Across processes (one worker per MPI rank) a process holds only
// its worker's GPU; the NCCL communicator spans the K ranks
// (ncclCommInitRank with an id rank 0 broadcasts over the Transport), and
// each process issues its side of the group: the sends of its worker and
// the receives for it.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/CudaDevice.h"
#include "tofu/Runtime/Error.h"
#include "RegionKernels.h"

#include <cublas_v2.h>
#include <nccl.h>
#ifdef TOFU_HAVE_CUDNN
#include "CudnnNormPool.h"
#include <cudnn.h>
#endif

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

using namespace tofu::runtime;

namespace {

void check(cudaError_t status, unsigned worker, const char *what) {
  if (status != cudaSuccess)
    throw RuntimeError(fmt::format("worker {}: {}: {}", worker, what,
                                   cudaGetErrorString(status)));
}

void checkBlas(cublasStatus_t status, unsigned worker, const char *what) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw RuntimeError(fmt::format("worker {}: {}: cuBLAS status {}", worker,
                                   what, int(status)));
}

/// cuBLAS's entry points for elements of type T (float or double).
template <typename T> struct Blas;
template <> struct Blas<float> {
  static constexpr auto gemm = cublasSgemm;
  static constexpr auto gemmStridedBatched = cublasSgemmStridedBatched;
  static constexpr auto geam = cublasSgeam;
};
template <> struct Blas<double> {
  static constexpr auto gemm = cublasDgemm;
  static constexpr auto gemmStridedBatched = cublasDgemmStridedBatched;
  static constexpr auto geam = cublasDgeam;
};

/// Calls `fn` with a zero of the C++ type of `type`, f32 or f64.
template <typename Fn> void withRealType(ElementType type, Fn fn) {
  if (type == ElementType::F32)
    fn(0.0f);
  else
    fn(0.0);
}

#ifdef TOFU_HAVE_CUDNN
void checkDnn(cudnnStatus_t status, unsigned worker, const char *what) {
  if (status != CUDNN_STATUS_SUCCESS)
    throw RuntimeError(fmt::format("worker {}: {}: {}", worker, what,
                                   cudnnGetErrorString(status)));
}

/// False if cuDNN declined the call (CUDNN_STATUS_NOT_SUPPORTED, e.g. for
/// strides it has no kernel for): the generated kernel then runs. Throws
/// on any other error.
bool issuedDnn(cudnnStatus_t status, unsigned worker, const char *what) {
  if (status == CUDNN_STATUS_NOT_SUPPORTED)
    return false;
  checkDnn(status, worker, what);
  return true;
}
#endif

#ifdef TOFU_HAVE_CUDNN
/// Whether a convolution gradient algorithm sums in the spatial domain, as
/// the generated kernels do: FFT and Winograd transforms round differently
/// (ResNet-18's check on an H100 was beyond 1e-4 while they were allowed;
/// docs/DeviceExecutor.md, "On a GPU").
bool isDirectSum(cudnnConvolutionBwdDataAlgo_t algo) {
  return algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_0 ||
         algo == CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
}
bool isDirectSum(cudnnConvolutionBwdFilterAlgo_t algo) {
  return algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_0 ||
         algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1 ||
         algo == CUDNN_CONVOLUTION_BWD_FILTER_ALGO_3;
}

/// The first algorithm of cuDNN's ranked `found` results that runs, is
/// deterministic and sums directly; `fallback` if none is.
template <typename Perf, typename Algo>
Algo firstDeterministic(const Perf *perf, int found, Algo fallback) {
  for (int i = 0; i != found; ++i)
    if (perf[i].status == CUDNN_STATUS_SUCCESS &&
        perf[i].determinism == CUDNN_DETERMINISTIC && isDirectSum(perf[i].algo))
      return perf[i].algo;
  return fallback;
}
#endif

void checkNccl(ncclResult_t status, const char *what) {
  if (status != ncclSuccess)
    throw RuntimeError(std::string(what) + ": " + ncclGetErrorString(status));
}

class CudaDevice : public Device {
public:
  explicit CudaDevice(const CudaOptions &options) : options(options) {
    for (unsigned w = 0, e = options.deviceOfWorker.size(); w != e; ++w) {
      Worker worker;
      worker.gpu = options.deviceOfWorker[w];
      if (worker.gpu < 0) {
        // Another process runs it.
        workers.push_back(worker);
        continue;
      }
      check(cudaSetDevice(worker.gpu), w, "cudaSetDevice");
      check(cudaStreamCreateWithFlags(&worker.stream, cudaStreamNonBlocking),
            w, "cudaStreamCreate");
      checkBlas(cublasCreate(&worker.blas), w, "cublasCreate");
      checkBlas(cublasSetStream(worker.blas, worker.stream), w,
                "cublasSetStream");
#ifdef TOFU_HAVE_CUDNN
      checkDnn(cudnnCreate(&worker.dnn), w, "cudnnCreate");
      checkDnn(cudnnSetStream(worker.dnn, worker.stream), w, "cudnnSetStream");
#endif
      workers.push_back(worker);
    }
  }

  ~CudaDevice() override {
    for (Worker &worker : workers) {
      if (worker.gpu < 0)
        continue;
      cudaSetDevice(worker.gpu);
      cudaStreamSynchronize(worker.stream);
      cudaFree(worker.onesF32);
      cudaFree(worker.onesF64);
      cublasDestroy(worker.blas);
#ifdef TOFU_HAVE_CUDNN
      cudnnDestroy(worker.dnn);
#endif
      cudaStreamDestroy(worker.stream);
    }
  }

  unsigned getNumWorkers() const override { return workers.size(); }

  void *allocate(unsigned w, std::size_t bytes) override {
    select(w);
    void *data = nullptr;
    cudaError_t status = cudaMalloc(&data, bytes);
    if (status == cudaErrorMemoryAllocation)
      throw RuntimeError(fmt::format(
          "worker {}: out of device memory allocating {} bytes on GPU {}", w,
          bytes, workers[w].gpu));
    check(status, w, "cudaMalloc");
    return data;
  }

  void deallocate(unsigned w, void *data) override {
    select(w);
    check(cudaFree(data), w, "cudaFree");
  }

  void upload(unsigned w, void *dst, const void *src,
              std::size_t bytes) override {
    select(w);
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice,
                          workers[w].stream),
          w, "upload");
    check(cudaStreamSynchronize(workers[w].stream), w, "upload");
  }

  void download(unsigned w, void *dst, const void *src,
                std::size_t bytes) override {
    select(w);
    check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost,
                          workers[w].stream),
          w, "download");
    check(cudaStreamSynchronize(workers[w].stream), w, "download");
  }

  void copyRegion(unsigned w, const Box &region, const void *src,
                  const Box &srcBox, void *dst, const Box &dstBox,
                  unsigned elementSize) override {
    select(w);
    if (region == srcBox && region == dstBox) {
      check(cudaMemcpyAsync(dst, src, region.getVolume() * elementSize,
                            cudaMemcpyDeviceToDevice, workers[w].stream),
            w, "copy");
      return;
    }
    RegionCopy copy;
    if (!describeRegionCopy(region, src, srcBox, dst, dstBox, elementSize,
                            copy))
      throw RuntimeError(
          fmt::format("worker {}: a box of rank {} exceeds DeviceMaxRank", w,
                      region.getRank()));
    check(launchRegionCopy(copy, workers[w].stream), w, "box copy");
  }

  void reduceRegion(unsigned w, Reducer reducer, ElementType type,
                    const Box &region, const void *src, void *dst,
                    const Box &dstBox) override {
    select(w);
    RegionCopy copy;
    if (!describeRegionCopy(region, src, region, dst, dstBox,
                            getElementSize(type), copy))
      throw RuntimeError(
          fmt::format("worker {}: a box of rank {} exceeds DeviceMaxRank", w,
                      region.getRank()));
    check(launchRegionReduce(copy, reducer, type, workers[w].stream), w,
          "reduction");
  }

  void launch(unsigned w, unsigned kernel, const KernelCall &call) override {
    select(w);
    if (options.compareLibraries) {
      if (dispatch(w, kernel, call) != KernelLibrary::Generated)
        compareWithGenerated(w, kernel, call);
      return;
    }
    if (!options.times) {
      dispatch(w, kernel, call);
      return;
    }
    TimedLaunch timed;
    timed.kernel = kernel;
    check(cudaEventCreate(&timed.start), w, "cudaEventCreate");
    check(cudaEventCreate(&timed.stop), w, "cudaEventCreate");
    check(cudaEventRecord(timed.start, workers[w].stream), w, "cudaEventRecord");
    timed.library = dispatch(w, kernel, call);
    check(cudaEventRecord(timed.stop, workers[w].stream), w, "cudaEventRecord");
    timedLaunches.push_back(timed);
  }

  void synchronize() override {
    for (unsigned w = 0, e = workers.size(); w != e; ++w) {
      if (!isLocal(w))
        continue;
      select(w);
      check(cudaStreamSynchronize(workers[w].stream), w, "a step's work");
    }
    if (options.times && !timedLaunches.empty())
      addTimedRound();
  }

  /// Whether this process runs worker `w` (has its GPU).
  bool isLocal(unsigned w) const { return workers.at(w).gpu >= 0; }
  int getGpu(unsigned w) const { return workers[w].gpu; }
  cudaStream_t getStream(unsigned w) const { return workers[w].stream; }

private:
  struct Worker {
    /// -1: another process runs it.
    int gpu = -1;
    cudaStream_t stream = nullptr;
    cublasHandle_t blas = nullptr;
    /// Device vectors of ones (f32, f64; onesF32Size and onesF64Size
    /// elements) that the fills of broadcast biases multiply (fill, ones);
    /// null until the first.
    void *onesF32 = nullptr, *onesF64 = nullptr;
    std::int64_t onesF32Size = 0, onesF64Size = 0;
#ifdef TOFU_HAVE_CUDNN
    cudnnHandle_t dnn = nullptr;
#endif
  };

  /// A launch bracketed by two events (CudaOptions::times).
  struct TimedLaunch {
    unsigned kernel = 0;
    cudaEvent_t start = nullptr, stop = nullptr;
    KernelLibrary library = KernelLibrary::Generated;
  };

  /// Runs op `kernel`'s call on worker `w`'s stream: on cuBLAS or cuDNN
  /// where its description allows, else its generated kernel.
  KernelLibrary dispatch(unsigned w, unsigned kernel, const KernelCall &call) {
    if (kernel < options.gemms.size() && options.gemms[kernel]) {
      gemm(w, *options.gemms[kernel], call);
      return KernelLibrary::CuBlas;
    }
#ifdef TOFU_HAVE_CUDNN
    if (kernel < options.convs.size() && options.convs[kernel])
      if (std::optional<ConvCall> p = planConvolution(*options.convs[kernel], call)) {
        convolve(w, *p, call.output.type);
        return KernelLibrary::CuDnn;
      }
    if (kernel < options.batchNorms.size() && options.batchNorms[kernel])
      if (std::optional<BatchNormCall> p = planBatchNorm(*options.batchNorms[kernel], call))
        if (cudnnTakesBatchNorm(*p) &&
            issuedDnn(issueBatchNorm(workers[w].dnn, *p, call.output.type), w,
                      "cudnnBatchNormalizationForwardTraining"))
          return KernelLibrary::CuDnn;
    if (kernel < options.poolings.size() && options.poolings[kernel])
      if (std::optional<PoolingCall> p = planPooling(*options.poolings[kernel], call))
        if (issuedDnn(issuePooling(workers[w].dnn, *p, call.output.type), w,
                      "cudnnPoolingForward"))
          return KernelLibrary::CuDnn;
#endif
    if (kernel >= options.launches.size() || !options.launches[kernel])
      throw RuntimeError(
          fmt::format("worker {}: no CUDA kernel {}", w, kernel));
    check(options.launches[kernel](call, workers[w].stream), w, "launch");
    return KernelLibrary::Generated;
  }

  /// CudaOptions::compareLibraries: runs op `kernel`'s generated kernel into
  /// a copy of the output box the library just wrote and prints the largest
  /// difference, over the whole box, on stderr.
  void compareWithGenerated(unsigned w, unsigned kernel,
                            const KernelCall &call) {
    if (kernel >= options.launches.size() || !options.launches[kernel])
      return;
    std::size_t count = 1;
    for (unsigned d = 0; d != call.output.rank; ++d)
      count *= std::size_t(call.output.extent[d]);
    unsigned size = getElementSize(call.output.type);
    cudaStream_t stream = workers[w].stream;
    void *scratch = nullptr;
    check(cudaMallocAsync(&scratch, count * size, stream), w,
          "compare scratch");
    check(cudaMemcpyAsync(scratch, call.output.data, count * size,
                          cudaMemcpyDeviceToDevice, stream),
          w, "compare copy");
    KernelCall generated = call;
    generated.output.data = scratch;
    check(options.launches[kernel](generated, stream), w, "launch");
    std::vector<char> library(count * size), mine(count * size);
    check(cudaMemcpyAsync(library.data(), call.output.data, count * size,
                          cudaMemcpyDeviceToHost, stream),
          w, "compare copy");
    check(cudaMemcpyAsync(mine.data(), scratch, count * size,
                          cudaMemcpyDeviceToHost, stream),
          w, "compare copy");
    check(cudaFreeAsync(scratch, stream), w, "compare scratch");
    check(cudaStreamSynchronize(stream), w, "compare");
    auto at = [&](const std::vector<char> &v, std::size_t i) {
      if (call.output.type == ElementType::F64)
        return reinterpret_cast<const double *>(v.data())[i];
      return double(reinterpret_cast<const float *>(v.data())[i]);
    };
    double worst = 0, worstRel = 0;
    std::size_t worstAt = 0;
    for (std::size_t i = 0; i != count; ++i) {
      double a = at(library, i), b = at(mine, i), d = std::abs(a - b);
      if (!(d <= worst)) {
        worst = d;
        worstAt = i;
      }
      worstRel = std::max(worstRel, d / (1 + std::abs(b)));
    }
    fmt::print(stderr,
               "compare: worker {} op {}: {} elements, max abs {:.3e} (rel "
               "{:.3e}) at element {}: library {} vs generated {}\n",
               w, kernel, count, worst, worstRel, worstAt, at(library, worstAt),
               at(mine, worstAt));
  }

  /// Adds the timed launches since the last round to options.times; every
  /// stream has been synchronized, so every event has completed.
  void addTimedRound() {
    std::size_t n = 0;
    for (const TimedLaunch &t : timedLaunches)
      n = std::max<std::size_t>(n, t.kernel + 1);
    std::vector<double> seconds(n, 0);
    std::vector<unsigned> launches(n, 0);
    std::vector<KernelLibrary> library(n, KernelLibrary::Generated);
    for (const TimedLaunch &t : timedLaunches) {
      float ms = 0;
      check(cudaEventElapsedTime(&ms, t.start, t.stop), 0,
            "cudaEventElapsedTime");
      seconds[t.kernel] += ms / 1e3;
      ++launches[t.kernel];
      library[t.kernel] = t.library;
      cudaEventDestroy(t.start);
      cudaEventDestroy(t.stop);
    }
    timedLaunches.clear();
    options.times->addRound(seconds, launches, library);
  }

  void select(unsigned w) {
    if (!isLocal(w))
      throw RuntimeError(
          fmt::format("worker {}: runs in another process", w));
    check(cudaSetDevice(workers[w].gpu), w, "cudaSetDevice");
  }

  /// The GEMMs of planGemm (runGemm). A call with a fill (a bias) fills
  /// its C_e first (fill) and adds the product to it (beta = 1).
  void gemm(unsigned w, const DeviceGemm &g, const KernelCall &call) {
    const BoxView &c = call.output;
    if (c.type != ElementType::F32 && c.type != ElementType::F64)
      throw RuntimeError(
          fmt::format("worker {}: cuBLAS contractions are f32 or f64", w));
    unsigned size = getElementSize(c.type);
    for (const GemmCall &p : planGemm(g, call)) {
      if (p.fill)
        fill(w, p, c.type);
      if (p.k <= 0 && p.fill)
        continue;
      if (p.k <= 0) {
        for (std::int64_t e = 0; e != p.batch; ++e)
          check(cudaMemset2DAsync(static_cast<char *>(p.c) + e * p.strideC * size,
                                  p.ldc * size, 0, p.n * size, p.m,
                                  workers[w].stream),
                w, "gemm");
        continue;
      }
      runGemm(w, c.type, p, p.fill ? 1 : 0, "GEMM");
    }
  }

  /// One GEMM `p` on row-major boxes of `type` (f32 or f64), C_e = alpha
  /// op(A_e) op(B_e) + beta C_e: cuBLAS is column-major, so it computes
  /// C^T = op(B)^T op(A)^T with the row strides as leading dimensions; a
  /// batch of several is one strided-batched call.
  void runGemm(unsigned w, ElementType type, const GemmCall &p, double beta,
               const char *what) {
    cublasOperation_t opA = p.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opB = p.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    int m = int(p.m), n = int(p.n), k = int(p.k), lda = int(p.lda),
        ldb = int(p.ldb), ldc = int(p.ldc), batch = int(p.batch);
    cublasHandle_t h = workers[w].blas;
    withRealType(type, [&](auto zero) {
      using T = decltype(zero);
      T alphaT = T(p.alpha), betaT = T(beta);
      auto *a = static_cast<const T *>(p.a), *b = static_cast<const T *>(p.b);
      auto *y = static_cast<T *>(p.c);
      if (batch == 1)
        checkBlas(Blas<T>::gemm(h, opB, opA, n, m, k, &alphaT, b, ldb, a, lda,
                                &betaT, y, ldc),
                  w, what);
      else
        checkBlas(Blas<T>::gemmStridedBatched(
                      h, opB, opA, n, m, k, &alphaT, b, ldb, p.strideB, a, lda,
                      p.strideA, &betaT, y, ldc, p.strideC, batch),
                  w, what);
    });
  }

  /// Worker `w`'s device vector of at least `count` ones of `type`, grown
  /// (stream-ordered) when a fill needs more.
  const void *ones(unsigned w, ElementType type, std::int64_t count) {
    Worker &worker = workers[w];
    bool single = type == ElementType::F32;
    void *&data = single ? worker.onesF32 : worker.onesF64;
    std::int64_t &size = single ? worker.onesF32Size : worker.onesF64Size;
    if (size >= count)
      return data;
    std::int64_t grown = std::max<std::int64_t>(count, 1024);
    if (data)
      check(cudaFreeAsync(data, worker.stream), w, "ones");
    unsigned bytes = getElementSize(type);
    check(cudaMallocAsync(&data, std::size_t(grown) * bytes, worker.stream), w,
          "ones");
    // The host copy lives until the stream has finished the upload.
    withRealType(type, [&](auto zero) {
      std::vector<decltype(zero)> host(std::size_t(grown), 1);
      check(cudaMemcpyAsync(data, host.data(), host.size() * bytes,
                            cudaMemcpyHostToDevice, worker.stream),
            w, "ones");
      check(cudaStreamSynchronize(worker.stream), w, "ones");
    });
    size = grown;
    return data;
  }

  /// GemmCall::fill by cuBLAS: a full bias (unit column stride, rows at
  /// least n apart) is one geam per batch element, C_e = scale F_e; a
  /// broadcast row (row stride 0) or column (column stride 0) is one
  /// GEMM (runGemm) with k = 1 against a vector of ones, C_e =
  /// scale (ones[m x 1] F_e[1 x n]) or scale (F_e[m x 1] ones[1 x n]):
  /// each element one product by 1, exact, then the scale.
  void fill(unsigned w, const GemmCall &p, ElementType type) {
    if (p.fillCol == 1 && p.fillRow >= p.n) {
      cublasHandle_t h = workers[w].blas;
      int m = int(p.m), n = int(p.n), ldc = int(p.ldc), ldf = int(p.fillRow);
      withRealType(type, [&](auto zero) {
        using T = decltype(zero);
        T scale = T(p.fillScale);
        for (std::int64_t e = 0; e != p.batch; ++e) {
          const T *f = static_cast<const T *>(p.fill) + e * p.strideFill;
          T *y = static_cast<T *>(p.c) + e * p.strideC;
          checkBlas(Blas<T>::geam(h, CUBLAS_OP_N, CUBLAS_OP_N, n, m, &scale,
                                  f, ldf, &zero, f, ldf, y, ldc),
                    w, "bias geam");
        }
      });
      return;
    }
    // Row-major A [m x 1] times B [1 x n].
    GemmCall q;
    q.m = p.m;
    q.n = p.n;
    q.k = 1;
    q.c = p.c;
    q.ldb = p.n;
    q.ldc = p.ldc;
    q.batch = p.batch;
    q.strideC = p.strideC;
    q.alpha = p.fillScale;
    if (p.fillRow == 0 && p.fillCol == 1) {
      q.a = ones(w, type, p.m);
      q.lda = 1;
      q.b = p.fill;
      q.strideB = p.strideFill;
    } else if (p.fillCol == 0 && p.fillRow >= 1) {
      q.a = p.fill;
      q.lda = p.fillRow;
      q.strideA = p.strideFill;
      q.b = ones(w, type, p.n);
    } else {
      throw RuntimeError(fmt::format(
          "worker {}: a bias with row stride {} and column stride {} is not "
          "one cuBLAS call",
          w, p.fillRow, p.fillCol));
    }
    runGemm(w, type, q, 0, "bias GEMM");
  }

#ifdef TOFU_HAVE_CUDNN
  /// planConvolution's call as one cudnnConvolutionForward (implicit GEMM),
  /// BackwardData or BackwardFilter (the first deterministic direct-sum
  /// algorithm of cuDNN's heuristics, else algorithm 1), in FMA math (no TF32, as the
  /// generated kernels compute), with the workspace cuDNN asks for taken
  /// from the device's stream-ordered pool on the worker's stream.
  void convolve(unsigned w, const ConvCall &p, ElementType type) {
    if (type != ElementType::F32 && type != ElementType::F64)
      throw RuntimeError(
          fmt::format("worker {}: cuDNN convolutions are f32 or f64", w));
    cudnnHandle_t dnn = workers[w].dnn;
    cudnnDataType_t dt =
        type == ElementType::F32 ? CUDNN_DATA_FLOAT : CUDNN_DATA_DOUBLE;
    auto ints = [](const std::int64_t *v, unsigned n) {
      std::vector<int> out(v, v + n);
      return out;
    };
    cudnnTensorDescriptor_t xd, yd;
    cudnnFilterDescriptor_t wd;
    cudnnConvolutionDescriptor_t cd;
    checkDnn(cudnnCreateTensorDescriptor(&xd), w, "cudnnCreateTensorDescriptor");
    checkDnn(cudnnCreateTensorDescriptor(&yd), w, "cudnnCreateTensorDescriptor");
    checkDnn(cudnnCreateFilterDescriptor(&wd), w, "cudnnCreateFilterDescriptor");
    checkDnn(cudnnCreateConvolutionDescriptor(&cd), w,
             "cudnnCreateConvolutionDescriptor");
    checkDnn(cudnnSetTensorNdDescriptor(xd, dt, 4, ints(p.xDims, 4).data(),
                                        ints(p.xStrides, 4).data()),
             w, "cudnnSetTensorNdDescriptor");
    checkDnn(cudnnSetTensorNdDescriptor(yd, dt, 4, ints(p.yDims, 4).data(),
                                        ints(p.yStrides, 4).data()),
             w, "cudnnSetTensorNdDescriptor");
    checkDnn(cudnnSetFilterNdDescriptor(wd, dt, CUDNN_TENSOR_NCHW, 4,
                                        ints(p.wDims, 4).data()),
             w, "cudnnSetFilterNdDescriptor");
    checkDnn(cudnnSetConvolutionNdDescriptor(
                 cd, 2, ints(p.pad, 2).data(), ints(p.stride, 2).data(),
                 ints(p.dilation, 2).data(), CUDNN_CROSS_CORRELATION, dt),
             w, "cudnnSetConvolutionNdDescriptor");
    checkDnn(cudnnSetConvolutionMathType(cd, CUDNN_FMA_MATH), w,
             "cudnnSetConvolutionMathType");
    float onef = 1, zerof = 0;
    double oned = 1, zerod = 0;
    const void *one = type == ElementType::F32 ? static_cast<const void *>(&onef)
                                               : static_cast<const void *>(&oned);
    const void *zero = type == ElementType::F32
                           ? static_cast<const void *>(&zerof)
                           : static_cast<const void *>(&zerod);
    std::size_t bytes = 0;
    void *workspace = nullptr;
    auto allocate = [&] {
      if (bytes)
        check(cudaMallocAsync(&workspace, bytes, workers[w].stream), w,
              "cuDNN workspace");
    };
    switch (p.kind) {
    case ConvKind::Forward: {
      cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
      checkDnn(cudnnGetConvolutionForwardWorkspaceSize(dnn, xd, wd, cd, yd,
                                                       algo, &bytes),
               w, "cudnnGetConvolutionForwardWorkspaceSize");
      allocate();
      checkDnn(cudnnConvolutionForward(dnn, one, xd, p.x, wd, p.w, cd, algo,
                                       workspace, bytes, zero, yd, p.y),
               w, "cudnnConvolutionForward");
      break;
    }
    case ConvKind::BackwardData: {
      cudnnConvolutionBwdDataAlgo_t algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
      cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
      int found = 0;
      checkDnn(cudnnGetConvolutionBackwardDataAlgorithm_v7(
                   dnn, wd, yd, cd, xd, CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT,
                   &found, perf),
               w, "cudnnGetConvolutionBackwardDataAlgorithm_v7");
      algo = firstDeterministic(perf, found, algo);
      checkDnn(cudnnGetConvolutionBackwardDataWorkspaceSize(dnn, wd, yd, cd, xd,
                                                            algo, &bytes),
               w, "cudnnGetConvolutionBackwardDataWorkspaceSize");
      allocate();
      checkDnn(cudnnConvolutionBackwardData(dnn, one, wd, p.w, yd, p.y, cd,
                                            algo, workspace, bytes, zero, xd,
                                            p.x),
               w, "cudnnConvolutionBackwardData");
      break;
    }
    case ConvKind::BackwardFilter: {
      cudnnConvolutionBwdFilterAlgo_t algo = CUDNN_CONVOLUTION_BWD_FILTER_ALGO_1;
      cudnnConvolutionBwdFilterAlgoPerf_t
          perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
      int found = 0;
      checkDnn(cudnnGetConvolutionBackwardFilterAlgorithm_v7(
                   dnn, xd, yd, cd, wd, CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT,
                   &found, perf),
               w, "cudnnGetConvolutionBackwardFilterAlgorithm_v7");
      algo = firstDeterministic(perf, found, algo);
      checkDnn(cudnnGetConvolutionBackwardFilterWorkspaceSize(dnn, xd, yd, cd,
                                                              wd, algo, &bytes),
               w, "cudnnGetConvolutionBackwardFilterWorkspaceSize");
      allocate();
      checkDnn(cudnnConvolutionBackwardFilter(dnn, one, xd, p.x, yd, p.y, cd,
                                              algo, workspace, bytes, zero, wd,
                                              p.w),
               w, "cudnnConvolutionBackwardFilter");
      break;
    }
    }
    if (workspace)
      check(cudaFreeAsync(workspace, workers[w].stream), w, "cuDNN workspace");
    cudnnDestroyConvolutionDescriptor(cd);
    cudnnDestroyFilterDescriptor(wd);
    cudnnDestroyTensorDescriptor(yd);
    cudnnDestroyTensorDescriptor(xd);
  }
#endif

  CudaOptions options;
  std::vector<TimedLaunch> timedLaunches;
  std::vector<Worker> workers;
};

class CudaCommunicator : public Communicator {
public:
  CudaCommunicator(CudaDevice &device, Transport *processes) : device(device) {
    std::vector<unsigned> local;
    for (unsigned w = 0, e = device.getNumWorkers(); w != e; ++w) {
      if (!device.isLocal(w))
        continue;
      local.push_back(w);
      int gpu = device.getGpu(w);
      if (std::find(gpus.begin(), gpus.end(), gpu) == gpus.end())
        gpus.push_back(gpu);
    }
    streams.resize(gpus.size());
    for (unsigned r = 0; r != gpus.size(); ++r) {
      check(cudaSetDevice(gpus[r]), 0, "cudaSetDevice");
      check(cudaStreamCreateWithFlags(&streams[r], cudaStreamNonBlocking), 0,
            "cudaStreamCreate");
    }
    spansProcesses = local.size() != device.getNumWorkers();
    if (spansProcesses) {
      // One NCCL communicator over the K ranks, NCCL rank = worker = MPI
      // rank: rank 0's id reaches the others through the transport.
      if (!processes || local.size() != 1)
        throw RuntimeError("a CUDA device spanning processes needs one "
                           "worker per process and the processes' transport");
      ncclUniqueId id;
      Bytes bytes(sizeof(id));
      if (local[0] == 0) {
        checkNccl(ncclGetUniqueId(&id), "ncclGetUniqueId");
        std::memcpy(bytes.data(), &id, sizeof(id));
      }
      processes->broadcast(bytes);
      std::memcpy(&id, bytes.data(), sizeof(id));
      comms.resize(1);
      check(cudaSetDevice(gpus[0]), local[0], "cudaSetDevice");
      checkNccl(ncclCommInitRank(&comms[0], int(device.getNumWorkers()), id,
                                 int(local[0])),
                "ncclCommInitRank");
    } else if (gpus.size() > 1) {
      comms.resize(gpus.size());
      checkNccl(ncclCommInitAll(comms.data(), int(gpus.size()), gpus.data()),
                "ncclCommInitAll");
    }
  }

  ~CudaCommunicator() override {
    for (ncclComm_t comm : comms)
      ncclCommDestroy(comm);
    for (unsigned r = 0; r != gpus.size(); ++r) {
      cudaSetDevice(gpus[r]);
      cudaStreamDestroy(streams[r]);
    }
  }

  void exchange(const std::vector<Transfer> &group) override {
    if (group.empty())
      return;
    std::vector<unsigned> workers;
    for (const Transfer &t : group)
      for (unsigned w : {t.src, t.dst})
        if (device.isLocal(w) &&
            std::find(workers.begin(), workers.end(), w) == workers.end())
          workers.push_back(w);
    // The group starts after the work enqueued on its workers' streams.
    for (unsigned w : workers)
      order(device.getStream(w), rankOf(w), w);
    // Within a GPU: a copy; otherwise this process's sides over NCCL.
    auto onOneGpu = [&](const Transfer &t) {
      return device.isLocal(t.src) && device.isLocal(t.dst) &&
             device.getGpu(t.src) == device.getGpu(t.dst);
    };
    bool anyNccl = false;
    for (const Transfer &t : group) {
      if (onOneGpu(t)) {
        unsigned r = rankOf(t.src);
        check(cudaSetDevice(gpus[r]), t.src, "cudaSetDevice");
        check(cudaMemcpyAsync(t.to, t.from, t.bytes, cudaMemcpyDeviceToDevice,
                              streams[r]),
              t.src, "a transfer within a GPU");
      } else {
        anyNccl = true;
      }
      if (device.isLocal(t.src))
        moved += t.bytes;
    }
    if (anyNccl) {
      checkNccl(ncclGroupStart(), "ncclGroupStart");
      for (const Transfer &t : group) {
        if (onOneGpu(t))
          continue;
        if (device.isLocal(t.src)) {
          unsigned s = rankOf(t.src);
          checkNccl(ncclSend(t.from, t.bytes, ncclUint8, peerOf(t.dst),
                             comms[s], streams[s]),
                    "ncclSend");
        }
        if (device.isLocal(t.dst)) {
          unsigned d = rankOf(t.dst);
          checkNccl(ncclRecv(t.to, t.bytes, ncclUint8, peerOf(t.src),
                             comms[d], streams[d]),
                    "ncclRecv");
        }
      }
      checkNccl(ncclGroupEnd(), "ncclGroupEnd");
    }
    // Work enqueued afterwards waits for the group.
    for (unsigned w : workers)
      order(streams[rankOf(w)], rankOf(w), w, /*toWorker=*/true);
  }

private:
  /// The index of local worker `w`'s GPU among this process's GPUs (and of
  /// its communicator).
  unsigned rankOf(unsigned w) const {
    return std::find(gpus.begin(), gpus.end(), device.getGpu(w)) -
           gpus.begin();
  }
  /// The NCCL rank of worker `w`'s GPU: its worker id across processes,
  /// the index of its GPU in one process.
  int peerOf(unsigned w) const {
    return spansProcesses ? int(w) : int(rankOf(w));
  }

  /// Makes the communication stream of GPU rank `r` wait for worker `w`'s
  /// stream, or (toWorker) worker w's stream wait for the communication
  /// stream.
  void order(cudaStream_t from, unsigned r, unsigned w, bool toWorker = false) {
    check(cudaSetDevice(gpus[r]), w, "cudaSetDevice");
    cudaEvent_t event;
    check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), w,
          "cudaEventCreate");
    check(cudaEventRecord(event, from), w, "cudaEventRecord");
    cudaStream_t waiter = toWorker ? device.getStream(w) : streams[r];
    check(cudaStreamWaitEvent(waiter, event, 0), w, "cudaStreamWaitEvent");
    check(cudaEventDestroy(event), w, "cudaEventDestroy");
  }

  CudaDevice &device;
  /// This process's GPUs, their communication streams and communicators.
  std::vector<int> gpus;
  std::vector<cudaStream_t> streams;
  std::vector<ncclComm_t> comms;
  bool spansProcesses = false;
};

} // namespace

int tofu::runtime::getCudaDeviceCount(std::string &why) {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    why = std::string("cudaGetDeviceCount: ") + cudaGetErrorString(status);
    return 0;
  }
  if (count == 0)
    why = "cudaGetDeviceCount: no CUDA device";
  return count;
}

std::unique_ptr<Device>
tofu::runtime::createCudaDevice(const CudaOptions &options) {
  return std::make_unique<CudaDevice>(options);
}

std::unique_ptr<Communicator>
tofu::runtime::createCudaCommunicator(Device &device, Transport *processes) {
  auto *cuda = dynamic_cast<CudaDevice *>(&device);
  if (!cuda)
    throw RuntimeError("the CUDA communicator needs a CUDA device");
  return std::make_unique<CudaCommunicator>(*cuda, processes);
}
