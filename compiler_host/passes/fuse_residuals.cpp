// fuse_residuals.cpp — after fuse_elementwise, a GEMM/conv kernel absorbs
// the loop kernel that has become the only reader of its output when that
// reader combines it with another tensor: a residual Add between Q/DQ
// pairs (DequantizeLinear of both operands, Add, QuantizeLinear: the
// residual add in the quantized domain), or a float residual whose
// chain only fuse_elementwise could assemble. The sum is then formed on
// the accumulators and stored once, instead of stored, read back and
// requantized by a loop.
//
// Readers of the GEMM output alone stay loops: fuse_epilogues took the
// plain ones already, and what remains (a function of one 8-bit element)
// is cheaper as tabulate_byte_functions' table than in every epilogue.
#include "passes/fusion.h"
#include "passes/pass.h"

namespace tinyrt {

namespace {

// Reads a tensor computed at run time other than v.
bool reads_another_tensor(const Program &p, const Kernel &k, int v) {
  for (int in : k.ins)
    if (in != v && !p.graph.v(in).is_const()) return true;
  return false;
}

}  // namespace

void fuse_residuals(PassContext &c) {
  int fused = absorb_readers(c.program, [&](Program &p, ReaderIndex &readers, std::vector<bool> &, int gi) {
    int v = p.kernels[gi].out;
    int ci = readers.only_reader(v);
    if (ci < 0 || !absorbable_reader(p, p.kernels[gi], p.kernels[ci]) || !reads_another_tensor(p, p.kernels[ci], v))
      return -1;
    if (c.log) *c.log << "    " << p.kernels[gi].label << " takes " << p.kernels[ci].label << "\n";
    return ci;
  });
  if (c.log) *c.log << "  fused " << fused << " residual epilogues\n";
}

}  // namespace tinyrt
