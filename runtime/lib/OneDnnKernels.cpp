//===- OneDnnKernels.cpp - Convolutions, batch norms, pooling on oneDNN ---===//
//
// This file implements OneDnnKernels: the device path's planners
// (planConvolution, planBatchNorm, planPooling) decide whether a call is one
// library problem and give NCHW views (dims and element strides) of its
// boxes; this file turns such a view into oneDNN primitives on the CPU
// engine and runs them:
//  - a convolution (forward, backward data, backward weights) is created
//    with `any` memory formats, so oneDNN picks its fast blocked layouts,
//    with reorders from and to the boxes' plain strided layouts (what
//    PyTorch's mkldnn convolutions do);
//  - a batch norm (forward training, scale and shift, the batch's
//    statistics) runs on a dense NCHW copy where a box is not dense;
//  - a pooling (max, or average over the whole window), forward inference
//    (no workspace), runs on a copy in the blocked layout nChw8c.
// Primitives are created once per problem (its dims, strides, padding) and
// kept; every primitive uses a user scratchpad, so that the workers'
// threads can execute one primitive at once with their own scratch memory.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/OneDnnKernels.h"
#include "tofu/Runtime/Error.h"

#include <dnnl.hpp>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <initializer_list>
#include <map>
#include <mutex>
#include <unordered_map>

using namespace tofu::runtime;

namespace {
using dnnl::memory;
using Dims = memory::dims;
using Tag = memory::format_tag;
constexpr memory::data_type F32 = memory::data_type::f32;

Dims dims4(const std::int64_t d[4]) { return Dims(d, d + 4); }

memory::desc strided(const std::int64_t dims[4], const std::int64_t strides[4]) {
  return memory::desc(dims4(dims), F32, dims4(strides));
}

memory::desc dense(const std::int64_t dims[4]) {
  return memory::desc(dims4(dims), F32, Tag::nchw);
}

dnnl::primitive_attr userScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

/// One reorder between a box's layout and a primitive's, or none when the
/// layouts agree.
struct Reorder {
  std::optional<dnnl::reorder> prim;
  memory::desc from, to;
  size_t scratch = 0;
  Reorder() = default;
  Reorder(const dnnl::engine &engine, const memory::desc &from,
          const memory::desc &to)
      : from(from), to(to) {
    if (from == to)
      return;
    dnnl::reorder::primitive_desc pd(engine, from, engine, to,
                                     userScratchpad());
    scratch = pd.scratchpad_desc().get_size();
    prim.emplace(pd);
  }
};

/// A created problem: the primitive and the reorders around it. Operand i
/// of `in` is copied into the primitive's layout before it runs, the
/// result (`out`) copied back after.
struct Entry {
  dnnl::primitive prim;
  size_t scratch = 0;
  std::vector<Reorder> in;
  Reorder out;
  /// Batch norm: the channels (its statistics' size).
  std::int64_t channels = 0;
};

/// The entry of primitive `Prim` made from `pd`, with the reorders of its
/// operands and result.
template <typename Prim, typename Pd>
Entry makeEntry(const Pd &pd, std::vector<Reorder> in, Reorder out) {
  Entry e;
  e.prim = Prim(pd);
  e.scratch = pd.scratchpad_desc().get_size();
  e.in = std::move(in);
  e.out = std::move(out);
  return e;
}

/// Per thread: an engine stream and grow-only buffers for the primitives'
/// layouts and scratchpads.
struct ThreadState {
  std::optional<dnnl::stream> stream;
  std::vector<std::vector<char>> buffers;
  char *buffer(unsigned i, size_t bytes) {
    if (buffers.size() <= i)
      buffers.resize(i + 1);
    if (buffers[i].size() < bytes)
      buffers[i].resize(bytes);
    return buffers[i].data();
  }
};
thread_local ThreadState threadState;

/// A cache key: the problem's kind and numbers (never its pointers).
std::string keyOf(char kind, std::initializer_list<const std::int64_t *> arrays,
                  std::initializer_list<std::int64_t> numbers) {
  std::string key(1, kind);
  for (const std::int64_t *a : arrays)
    key.append(reinterpret_cast<const char *>(a), 4 * sizeof(std::int64_t));
  for (std::int64_t n : numbers)
    key.append(reinterpret_cast<const char *>(&n), sizeof(n));
  return key;
}
} // namespace

struct OneDnnKernels::Impl {
  LibraryProblems problems;
  unsigned threads = 0;
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<Entry>> cache;
  std::atomic<std::uint64_t> counts[6] = {};

  template <typename Make>
  std::shared_ptr<Entry> get(const std::string &key, Make make) {
    std::lock_guard<std::mutex> lock(mutex);
    std::shared_ptr<Entry> &e = cache[key];
    if (!e)
      e = std::make_shared<Entry>(make());
    return e;
  }

  /// Runs `e` on the operands `ins` (argument, pointer) and result `out`.
  void execute(const Entry &e, std::vector<std::pair<int, const void *>> ins,
               std::pair<int, void *> out,
               std::vector<std::pair<int, memory::desc>> extra = {});

  Entry makeConv(const ConvCall &c);
  Entry makeBatchNorm(const BatchNormCall &b);
  Entry makePooling(const PoolingCall &p);
};

void OneDnnKernels::Impl::execute(
    const Entry &e, std::vector<std::pair<int, const void *>> ins,
    std::pair<int, void *> out,
    std::vector<std::pair<int, memory::desc>> extra) {
  ThreadState &t = threadState;
  if (!t.stream)
    t.stream.emplace(engine);
  dnnl::stream &s = *t.stream;
  unsigned next = 0;
  auto scratchArgs = [&](size_t bytes,
                         std::unordered_map<int, memory> &args) {
    if (bytes)
      args.insert({DNNL_ARG_SCRATCHPAD,
                   memory(memory::desc({Dims::value_type(bytes)},
                                       memory::data_type::u8, Tag::a),
                          engine, t.buffer(next++, bytes))});
  };
  // Reorders are executed one after the other on the same stream; each
  // reorder's scratchpad gets its own buffer index, as does each operand.
  std::unordered_map<int, memory> args;
  for (size_t i = 0; i != ins.size(); ++i) {
    const Reorder &r = e.in[i];
    void *user = const_cast<void *>(ins[i].second);
    if (!r.prim) {
      args.insert({ins[i].first, memory(r.from, engine, user)});
      continue;
    }
    memory to(r.to, engine, t.buffer(next++, r.to.get_size()));
    std::unordered_map<int, memory> rargs{
        {DNNL_ARG_FROM, memory(r.from, engine, user)}, {DNNL_ARG_TO, to}};
    scratchArgs(r.scratch, rargs);
    r.prim->execute(s, rargs);
    args.insert({ins[i].first, to});
  }
  memory result = e.out.prim ? memory(e.out.from, engine,
                                      t.buffer(next++, e.out.from.get_size()))
                             : memory(e.out.from, engine, out.second);
  args.insert({out.first, result});
  for (auto &[arg, desc] : extra)
    args.insert({arg, memory(desc, engine, t.buffer(next++, desc.get_size()))});
  scratchArgs(e.scratch, args);
  e.prim.execute(s, args);
  if (e.out.prim) {
    std::unordered_map<int, memory> rargs{
        {DNNL_ARG_FROM, result},
        {DNNL_ARG_TO, memory(e.out.to, engine, out.second)}};
    scratchArgs(e.out.scratch, rargs);
    e.out.prim->execute(s, rargs);
  }
  s.wait();
}

Entry OneDnnKernels::Impl::makeConv(const ConvCall &c) {
  memory::desc x = strided(c.xDims, c.xStrides), y = strided(c.yDims, c.yStrides);
  std::int64_t wStrides[4] = {c.wDims[1] * c.wDims[2] * c.wDims[3],
                              c.wDims[2] * c.wDims[3], c.wDims[3], 1};
  memory::desc w = strided(c.wDims, wStrides);
  memory::desc ax(dims4(c.xDims), F32, Tag::any),
      aw(dims4(c.wDims), F32, Tag::any), ay(dims4(c.yDims), F32, Tag::any);
  Dims stride{c.stride[0], c.stride[1]}, pad{c.pad[0], c.pad[1]},
      dilation{c.dilation[0] - 1, c.dilation[1] - 1};
  auto direct = dnnl::algorithm::convolution_direct;
  dnnl::convolution_forward::primitive_desc fwd(
      dnnl::convolution_forward::desc(dnnl::prop_kind::forward_training,
                                      direct, ax, aw, ay, stride, dilation, pad,
                                      pad),
      userScratchpad(), engine);
  switch (c.kind) {
  case ConvKind::Forward:
    return makeEntry<dnnl::convolution_forward>(
        fwd,
        {Reorder(engine, x, fwd.src_desc()),
         Reorder(engine, w, fwd.weights_desc())},
        Reorder(engine, fwd.dst_desc(), y));
  case ConvKind::BackwardData: {
    dnnl::convolution_backward_data::primitive_desc pd(
        dnnl::convolution_backward_data::desc(direct, ax, aw, ay, stride,
                                              dilation, pad, pad),
        userScratchpad(), engine, fwd);
    return makeEntry<dnnl::convolution_backward_data>(
        pd,
        {Reorder(engine, y, pd.diff_dst_desc()),
         Reorder(engine, w, pd.weights_desc())},
        Reorder(engine, pd.diff_src_desc(), x));
  }
  case ConvKind::BackwardFilter:
    break;
  }
  dnnl::convolution_backward_weights::primitive_desc pd(
      dnnl::convolution_backward_weights::desc(direct, ax, aw, ay, stride,
                                               dilation, pad, pad),
      userScratchpad(), engine, fwd);
  return makeEntry<dnnl::convolution_backward_weights>(
      pd,
      {Reorder(engine, x, pd.src_desc()),
       Reorder(engine, y, pd.diff_dst_desc())},
      Reorder(engine, pd.diff_weights_desc(), w));
}

Entry OneDnnKernels::Impl::makeBatchNorm(const BatchNormCall &b) {
  memory::desc data = dense(b.dims);
  auto flags = dnnl::normalization_flags::use_scale |
               dnnl::normalization_flags::use_shift;
  dnnl::batch_normalization_forward::primitive_desc pd(
      dnnl::batch_normalization_forward::desc(
          dnnl::prop_kind::forward_training, data, float(b.epsilon), flags),
      userScratchpad(), engine);
  memory::desc channels({b.dims[1]}, F32, Tag::a);
  Entry e = makeEntry<dnnl::batch_normalization_forward>(
      pd,
      {Reorder(engine, strided(b.dims, b.xStrides), pd.src_desc()),
       Reorder(engine, channels, channels), Reorder(engine, channels, channels)},
      Reorder(engine, pd.dst_desc(), strided(b.dims, b.yStrides)));
  e.channels = b.dims[1];
  return e;
}

Entry OneDnnKernels::Impl::makePooling(const PoolingCall &p) {
  memory::desc x = strided(p.xDims, p.xStrides), y = strided(p.yDims, p.yStrides);
  // oneDNN wants (x + padL + padR - window) / stride + 1 = y, cuDNN's rule
  // with padR = padL (planPooling keeps it within one stride).
  Dims stride{p.stride[0], p.stride[1]}, window{p.window[0], p.window[1]},
      pad{p.pad[0], p.pad[1]};
  auto algorithm = p.mode == PoolingMode::Max
                       ? dnnl::algorithm::pooling_max
                       : dnnl::algorithm::pooling_avg_include_padding;
  // The blocked layout (8 channels innermost) has oneDNN's vectorized
  // pooling; on a plain one it loops element by element.
  memory::desc blocked(dims4(p.xDims), F32, Tag::nChw8c);
  memory::desc any(dims4(p.yDims), F32, Tag::any);
  dnnl::pooling_forward::primitive_desc pd(
      dnnl::pooling_forward::desc(dnnl::prop_kind::forward_inference,
                                  algorithm, blocked, any, stride, window, pad,
                                  pad),
      userScratchpad(), engine);
  return makeEntry<dnnl::pooling_forward>(pd, {Reorder(engine, x, pd.src_desc())},
                                         Reorder(engine, pd.dst_desc(), y));
}

OneDnnKernels::OneDnnKernels(LibraryProblems problems, unsigned threadsPerWorker)
    : impl(std::make_unique<Impl>()) {
  impl->problems = std::move(problems);
  impl->threads = threadsPerWorker;
}

OneDnnKernels::~OneDnnKernels() = default;

bool OneDnnKernels::run(unsigned kernel, const KernelCall &call) {
  const LibraryProblems &p = impl->problems;
  const std::optional<DeviceConv> *conv =
      kernel < p.convs.size() && p.convs[kernel] ? &p.convs[kernel] : nullptr;
  const std::optional<DeviceBatchNorm> *norm =
      kernel < p.batchNorms.size() && p.batchNorms[kernel]
          ? &p.batchNorms[kernel]
          : nullptr;
  const std::optional<DevicePooling> *pool =
      kernel < p.poolings.size() && p.poolings[kernel] ? &p.poolings[kernel]
                                                       : nullptr;
  if (!conv && !norm && !pool)
    return false;
  bool f32 = call.output.type == ElementType::F32;
  for (unsigned i = 0; i != call.numInputs; ++i)
    f32 &= call.inputs[i].type == ElementType::F32;
  std::optional<ConvCall> c;
  std::optional<BatchNormCall> b;
  std::optional<PoolingCall> q;
  if (f32 && conv)
    c = planConvolution(**conv, call);
  if (f32 && norm)
    b = planBatchNorm(**norm, call);
  if (f32 && pool)
    q = planPooling(**pool, call);
  if (!c && !b && !q) {
    ++impl->counts[5];
    return false;
  }
  if (impl->threads)
    omp_set_num_threads(int(impl->threads));
  try {
    if (c) {
      auto e = impl->get(
          keyOf('c', {c->xDims, c->xStrides, c->wDims, c->yDims, c->yStrides},
                {std::int64_t(c->kind), c->pad[0], c->pad[1], c->stride[0],
                 c->stride[1], c->dilation[0], c->dilation[1]}),
          [&] { return impl->makeConv(*c); });
      switch (c->kind) {
      case ConvKind::Forward:
        impl->execute(*e, {{DNNL_ARG_SRC, c->x}, {DNNL_ARG_WEIGHTS, c->w}},
                      {DNNL_ARG_DST, c->y});
        break;
      case ConvKind::BackwardData:
        impl->execute(*e,
                      {{DNNL_ARG_DIFF_DST, c->y}, {DNNL_ARG_WEIGHTS, c->w}},
                      {DNNL_ARG_DIFF_SRC, c->x});
        break;
      case ConvKind::BackwardFilter:
        impl->execute(*e, {{DNNL_ARG_SRC, c->x}, {DNNL_ARG_DIFF_DST, c->y}},
                      {DNNL_ARG_DIFF_WEIGHTS, c->w});
        break;
      }
      ++impl->counts[unsigned(c->kind)];
    } else if (b) {
      std::int64_t epsilon;
      std::memcpy(&epsilon, &b->epsilon, sizeof(epsilon));
      auto e = impl->get(keyOf('b', {b->dims, b->xStrides, b->yStrides}, {epsilon}),
                         [&] { return impl->makeBatchNorm(*b); });
      memory::desc stats({e->channels}, F32, Tag::a);
      impl->execute(*e,
                    {{DNNL_ARG_SRC, b->x},
                     {DNNL_ARG_SCALE, b->scale},
                     {DNNL_ARG_SHIFT, b->bias}},
                    {DNNL_ARG_DST, b->y},
                    {{DNNL_ARG_MEAN, stats}, {DNNL_ARG_VARIANCE, stats}});
      ++impl->counts[3];
    } else {
      auto e = impl->get(
          keyOf('p', {q->xDims, q->xStrides, q->yDims, q->yStrides},
                {std::int64_t(q->mode), q->window[0], q->window[1], q->pad[0],
                 q->pad[1], q->stride[0], q->stride[1]}),
          [&] { return impl->makePooling(*q); });
      impl->execute(*e, {{DNNL_ARG_SRC, q->x}}, {DNNL_ARG_DST, q->y});
      ++impl->counts[4];
    }
  } catch (const dnnl::error &e) {
    throw RuntimeError(std::string("oneDNN: ") + e.what());
  }
  return true;
}

OneDnnCounts OneDnnKernels::getCounts() const {
  OneDnnCounts c;
  c.convForward = impl->counts[0];
  c.convBackwardData = impl->counts[1];
  c.convBackwardFilter = impl->counts[2];
  c.batchNorm = impl->counts[3];
  c.pooling = impl->counts[4];
  c.fallbacks = impl->counts[5];
  return c;
}

unsigned OneDnnKernels::getNumDescribed() const {
  const LibraryProblems &p = impl->problems;
  size_t n = std::max({p.convs.size(), p.batchNorms.size(), p.poolings.size()});
  unsigned described = 0;
  for (size_t k = 0; k != n; ++k)
    described += (k < p.convs.size() && p.convs[k]) ||
                 (k < p.batchNorms.size() && p.batchNorms[k]) ||
                 (k < p.poolings.size() && p.poolings[k]);
  return described;
}

std::string OneDnnKernels::getVersion() {
  const dnnl_version_t *v = dnnl_version();
  return "oneDNN " + std::to_string(v->major) + "." + std::to_string(v->minor) +
         "." + std::to_string(v->patch);
}
