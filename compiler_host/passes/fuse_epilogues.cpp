// fuse_epilogues.cpp — a GEMM/conv kernel absorbs the elementwise kernel
// that is the only reader of its output (bias add, activation, residual
// add, and chains of them): that kernel's expression, with the GEMM output
// replaced by the accumulator, becomes the epilogue.
//
// Activations written as diamonds — x * sigmoid(x) (SiLU), x *
// hardsigmoid(x) (hard-swish), GELU and Mish as subgraphs — give x several
// elementwise readers whose chains meet again. Those chains are first
// inlined into the kernel where they meet, which then is the only reader.
#include <algorithm>

#include "passes/fusion.h"
#include "passes/pass.h"

namespace tinyrt {

namespace {

constexpr size_t kMaxEpilogue = 200;  // expression nodes

// v's readers are elementwise kernels over v's shape whose chains (each
// kernel the only reader of the one before) all end in the last of them:
// inlines the chains there and returns true.
bool absorb_diamond(Program &p, ReaderIndex &readers, std::vector<bool> &dead, int v, std::ostream *log) {
  const std::vector<int> rs = readers.readers(v);
  if (rs.size() < 2 || rs.size() > 4 || readers.external(v)) return false;
  const Shape &shape = p.graph.v(v).shape;
  int sink = *std::max_element(rs.begin(), rs.end());
  std::vector<std::vector<int>> chains;
  for (int r : rs) {
    if (r == sink) continue;
    std::vector<int> chain = {r};
    for (int cur = r; cur != sink;) {
      const Kernel &k = p.kernels[cur];
      int next = readers.only_reader(k.out);
      if (next < 0 || chain.size() > 8 || !is_elementwise_over(p, k, shape) ||
          !reads_only_identity(k.expr, k.ins, v, shape))
        return false;
      const Kernel &n = p.kernels[next];
      if (!is_elementwise_over(p, n, shape) || !reads_only_identity(n.expr, n.ins, k.out, shape)) return false;
      chain.push_back(next);
      cur = next;
    }
    chains.push_back(chain);
  }
  const Kernel &sk = p.kernels[sink];
  if (!is_elementwise_over(p, sk, shape) || !reads_only_identity(sk.expr, sk.ins, v, shape)) return false;
  // Inline each chain link into the next, in program order.
  for (auto &chain : chains)
    for (size_t i = 0; i + 1 < chain.size(); ++i) {
      int from = chain[i], into = chain[i + 1];
      if (dead[from]) continue;  // an earlier chain already merged it
      std::vector<int> from_ins = p.kernels[from].ins;
      int value = p.kernels[from].out;
      if (!inline_into(p, from, into, kMaxEpilogue)) return false;
      readers.merged(from, into, from_ins, value);
      dead[from] = true;
    }
  if (log) *log << "    diamond: " << p.kernels[sink].label << " reads '" << p.graph.v(v).name << "' once\n";
  return readers.only_reader(v) == sink;
}

// An 8-bit output v whose reader widens it to float (DequantizeLinear) for
// loop kernels only: the GEMM stores the bytes, and the widening is inlined
// into those loops instead (a quarter of the memory traffic; a function of
// the byte alone becomes a table there, tabulate_byte_functions).
bool widens_for_loops(const Program &p, const ReaderIndex &readers, int v, int w) {
  DType from = p.graph.v(v).dtype;
  if ((from != DType::U8 && from != DType::I8) || !dtype_is_float(p.graph.v(w).dtype) || p.graph.is_graph_output(w))
    return false;
  std::vector<int> rs = readers.readers(w);
  if (rs.empty()) return false;
  for (int r : rs)
    if (p.kernels[r].kind != KernelKind::Loop) return false;
  return true;
}

}  // namespace

void fuse_epilogues(PassContext &c) {
  int fused = absorb_readers(c.program, [&](Program &p, ReaderIndex &readers, std::vector<bool> &dead, int gi) {
    // The one reader must be an elementwise loop kernel over v's shape.
    int v = p.kernels[gi].out;
    int ci = readers.only_reader(v);
    if (ci < 0 && absorb_diamond(p, readers, dead, v, c.log)) ci = readers.only_reader(v);
    if (ci < 0) return -1;
    const Kernel &k = p.kernels[ci];
    if (!absorbable_reader(p, p.kernels[gi], k)) return -1;
    if (widens_for_loops(p, readers, v, k.out)) {
      if (c.log)
        *c.log << "    keep '" << p.graph.v(v).name << "' 8-bit: " << k.label << " widens it for loop kernels\n";
      return -1;
    }
    return ci;
  });
  if (c.log) *c.log << "  fused " << fused << " epilogues\n";
}

}  // namespace tinyrt
