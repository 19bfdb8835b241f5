// kernel_emitters.h — the kernel families. Each turns one Kernel into one
// function `void k(i8* arena, i32 task_begin, i32 task_end)`.
//   loop_emitter.cpp  any expression: a loop nest over the output in its
//                     physical order, vectorized along the innermost axis.
//   gemm_emitter.cpp  convolutions and matrix products over packed weights:
//                     register-tiled micro-kernels with a fused epilogue.
//   depthwise_emitter.cpp  depthwise convolutions, channels-last: vectors
//                     of channels, a run of output pixels in registers.
//   recurrent_emitter.cpp  RNN/GRU/LSTM layers: one loop over time, the
//                     recurrent products and the cell fused per vector.
//   winograd_emitter.cpp  the input and output transforms of a Winograd
//                     convolution (vectors of channels, one tile at a time).
//   call_emitter.cpp  custom ops: one call of the declared C function with
//                     views of the node's inputs and outputs.
//   compact_emitter.cpp  the indices of a tensor's nonzero elements and
//                     their count (data-dependent sizes).
//   nms_emitter.cpp   greedy non-maximum suppression.
//   topk_emitter.cpp  TopK's selection: a heap of the k best per slice.
//   output_dims_emitter.cpp  the outputs' run-time dimensions, after the
//                     kernels of a model with run-time extents.
#pragma once

#include <functional>
#include <map>
#include <string>

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "codegen/expr_emitter.h"
#include "codegen/loops.h"
#include "target/target.h"
#include "ir/program.h"

namespace tinyrt {

struct EmitEnv {
  llvm::Module &module;
  const Target &target;
  const Program &program;
  // The i8* address of a constant value's data, laid out with its strides.
  std::function<llvm::Constant *(int value)> const_data;
  // The kernel being emitted is shared by the parts of a layer
  // (Kernel::code_key): its function takes two more i32 arguments, the
  // part's row0 and c0 (WinogradSpec), which the emitters read through
  // part_arg instead of the kernel's own.
  bool part_args = false;
};

// A part's row0 (which 0) or c0 (1) in a shared kernel's function, clamped
// into [lo, hi]; the kernel's own `own` otherwise.
llvm::Value *part_arg(EmitEnv &env, llvm::IRBuilder<> &b, int which, int64_t own, int64_t lo, int64_t hi);

struct EmittedKernel {
  llvm::Function *fn = nullptr;
  int64_t tasks = 1;
};

// The kernel function's prototype and entry block; sets the builder there.
llvm::Function *begin_kernel_function(EmitEnv &env, llvm::IRBuilder<> &b, const std::string &name);
// Addressing for value v inside a kernel whose arena pointer is `arena`.
SlotRef slot_for(EmitEnv &env, llvm::IRBuilder<> &b, llvm::Value *arena, int v);

EmittedKernel emit_loop_kernel(EmitEnv &env, const Kernel &k, const std::string &name);
EmittedKernel emit_gemm_kernel(EmitEnv &env, const Kernel &k, const std::string &name);
EmittedKernel emit_depthwise_kernel(EmitEnv &env, const Kernel &k, const std::string &name);
EmittedKernel emit_recurrent_kernel(EmitEnv &env, const Kernel &k, const std::string &name);
// WinogradIn or WinogradOut (winograd_emitter.cpp).
EmittedKernel emit_winograd_kernel(EmitEnv &env, const Kernel &k, const std::string &name);
// WinogradWeights: weights transformed at run time (winograd_weights_emitter.cpp).
EmittedKernel emit_winograd_weights_kernel(EmitEnv &env, const Kernel &k, const std::string &name);
// A custom op's call of its C function (call_emitter.cpp).
EmittedKernel emit_call_kernel(EmitEnv &env, const Kernel &k, const std::string &name);
// Data-dependent sizes: KernelKind::Compact and Nms (one task each).
EmittedKernel emit_compact_kernel(EmitEnv &env, const Kernel &k, const std::string &name);
EmittedKernel emit_nms_kernel(EmitEnv &env, const Kernel &k, const std::string &name);
// TopK's selection (topk_emitter.cpp; one task).
EmittedKernel emit_topk_kernel(EmitEnv &env, const Kernel &k, const std::string &name);
// The step after the kernels of a model whose outputs have run-time
// extents: writes their actual dimensions (output_dims_emitter.cpp).
EmittedKernel emit_output_dims_kernel(EmitEnv &env, const std::string &name);
// Does the program need that step?
bool has_output_dims_step(const Program &p);

// <L x i1> with the first `lanes` lanes set.
llvm::Constant *lane_mask(llvm::IRBuilder<> &b, int L, int lanes);
// The first `lanes` elements at p as a vector of type `vty` (the other
// lanes zero, nothing read past them), and the matching store; whole
// vectors use plain unaligned loads and stores.
llvm::Value *load_lanes(llvm::IRBuilder<> &b, llvm::FixedVectorType *vty, llvm::Value *p, int lanes);
// Packed float weights (pack_weights): the element type of constant v,
// float or half (--weights fp16), and `lanes` of L weights at p (of that
// element type; the rest 0; 0: all L) as <L x float>: half widened as
// loaded (vcvtph2ps on x86, fcvtl on AArch64, vcvt.f32.f16 on ARMv7:
// Target::half_widen_neon). `aligned`: p is a multiple of the vector's
// bytes (packed tiles of whole vectors).
llvm::Type *float_weight_type(llvm::IRBuilder<> &b, const Program &p, int v);
llvm::Value *load_float_weights(llvm::IRBuilder<> &b, const Target &t, llvm::Type *wel, llvm::Value *p, int L,
                                int lanes = 0, bool aligned = false);
void store_lanes(llvm::IRBuilder<> &b, llvm::Value *v, llvm::Value *p, int lanes);
// sum_j c[j] * v[j] over the nonzero coefficients c (vectors of type vty):
// terms with coefficient 1 first (no multiply), then adds, subtractions
// and FMAs; zero when every coefficient is.
llvm::Value *linear_combination(llvm::IRBuilder<> &b, llvm::FixedVectorType *vty, const std::vector<double> &c,
                                const std::vector<llvm::Value *> &v);
// out[r] = sum_j M[r][j] * v[j] for r < rows (M: rows x v.size(), row
// major; Winograd's matrices), sharing the work their symmetric points
// (+-p) allow:
// - two columns j, k with M[r][k] = +-M[r][j] in every row: the rows read
//   v[j] + v[k] or v[j] - v[k] once formed (A^T's +-1, +-2 pairs);
// - two rows whose coefficients agree on some columns and are opposite on
//   the others: E + O and E - O (B^T's and G's row pairs).
// Either is used only when it saves operations.
std::vector<llvm::Value *> linear_transform(llvm::IRBuilder<> &b, llvm::FixedVectorType *vty,
                                            const std::vector<double> &M, int rows,
                                            const std::vector<llvm::Value *> &v);

// A read-only array of n zero floats (at least one), 64-byte aligned: the
// input that padding reads. Returns a float pointer to it.
llvm::Value *zero_floats(EmitEnv &env, llvm::IRBuilder<> &b, int64_t n, const std::string &name);
// A read-only array of n bytes (at least one) equal to `byte`, 64-byte
// aligned: what int8 padding reads (the zero point). Returns an i8 pointer.
llvm::Value *fill_bytes(EmitEnv &env, llvm::IRBuilder<> &b, int64_t n, uint8_t byte, const std::string &name);

// acc + w * (lane `lane` of the 4-lane vector x, broadcast), as
// Target::gemm_lane_mac says: one fused multiply-add (AArch64 fmla by
// element) or a multiply then an add (ARMv7 vmla by scalar).
llvm::Value *lane_mac(llvm::IRBuilder<> &b, const Target &t, llvm::Value *acc, llvm::Value *w, llvm::Value *x,
                      int lane);
// fn(c0, lanes) for every vector of `channels` (L lanes each): a counted
// loop over the whole vectors, then the partial one.
void for_channel_vectors(llvm::IRBuilder<> &b, int64_t channels, int L,
                         const std::function<void(llvm::Value *, int)> &fn);
// The task loop of a kernel whose tasks are blocks of `rows` units (at
// most 64 blocks): fn(r0, r1) for the block's units; returns the tasks.
int64_t emit_row_block_tasks(llvm::IRBuilder<> &b, llvm::Function *f, int64_t rows,
                             const std::function<void(llvm::Value *, llvm::Value *)> &fn);

// ---- the scheduled families (GemmSpec) share these ----

// The base run-time extents (ir/graph.h DimSym) loaded from the arena at
// the builder's position (a kernel's entry), each clamped into its bounds
// (i32), by extent id: what ExprEmitter::set_dims reads Dim leaves from.
std::map<int, llvm::Value *> load_dims(EmitEnv &env, llvm::IRBuilder<> &b, llvm::Value *arena);
// Axis `axis` of value v as an i32 at the builder's position: its fixed
// size, or its extent (a derived one computed) from the loaded `dims`.
llvm::Value *extent_value(EmitEnv &env, llvm::IRBuilder<> &b, const std::map<int, llvm::Value *> &dims, int v,
                          int axis);
// Of `total` units fixed by the bounds, the first of the `actual` (i32,
// at most total) that unit `u` starts: u * actual / total, so that blocks
// of the bounds' units share the actual ones evenly (in 32 bits where
// u * actual cannot wrap: no 64-bit division on ARMv7).
llvm::Value *share_units(llvm::IRBuilder<> &b, llvm::Value *u, llvm::Value *actual, int64_t total);

// i (i32) clamped into [lo, hi]. An input coordinate is clamped where its
// pointer is formed, also where the emitter's own test (window_interior, a
// padding select) already keeps it inside: the clamp is then the identity,
// and the bounds proof (codegen/address_proof.h) bounds the pointer by it.
llvm::Value *clamp_i32(llvm::IRBuilder<> &b, llvm::Value *i, int64_t lo, int64_t hi);

// A scheduled convolution's image sizes for this run (gemm_runtime_spatial:
// a fully convolutional network compiled for a range of sizes): X's and
// the output's h and w extents as i32 values (constants where fixed).
struct RunSizes {
  llvm::Value *in_h, *in_w, *out_h, *out_w;
};
RunSizes run_sizes(EmitEnv &env, llvm::IRBuilder<> &b, const std::map<int, llvm::Value *> &dims, const Kernel &k);

// Does every input window of the m output pixels [ow0, ow0 + m) of row oh
// lie inside the input (no padding read)? `rt`: the run's input sizes
// (else the spec's).
llvm::Value *window_interior(llvm::IRBuilder<> &b, const GemmSpec &s, llvm::Value *oh, llvm::Value *ow0, int m,
                             const RunSizes *rt = nullptr);
// The tiles of a convolution over run-time sizes: the task's rows
// [u0, u1) of the bounds' batch * out_h share the run's rows evenly; in each
// row, tiles of mr pixels up to the run's width, then the partial tile (a
// branch per width): run(n, oh, ow0, m).
void for_run_rows(llvm::IRBuilder<> &b, const GemmSpec &s, const RunSizes &rt, llvm::Value *u0, llvm::Value *u1, int mr,
                  const std::function<void(llvm::Value *, llvm::Value *, llvm::Value *, int)> &run);

// Tasks over `units` (output rows or pixel tiles): at most `want` blocks
// of per_block units each (the last one shorter).
struct UnitBlocks {
  int64_t per_block, count;
};
UnitBlocks split_units(int64_t units, int64_t want);
// Units [begin, end) of block `blk`.
std::pair<llvm::Value *, llvm::Value *> block_range(llvm::IRBuilder<> &b, llvm::Value *blk, const UnitBlocks &u,
                                                    int64_t units);
// The units a convolution's tasks are cut from: output rows, or, when
// there are fewer than kMinRowUnits rows of more than one run (a 1-D
// convolution, Winograd's tiles in one row), runs of `mr` pixels along the
// rows (a row's last run out_w % mr), so that few rows still split over
// threads by pixels (unless !allow_runs: a GEMM whose tasks split its
// output channels first).
// Row units keep each row's loop over its runs a constant one.
constexpr int64_t kMinRowUnits = 16;
struct RowUnits {
  bool runs;  // units are runs of pixels, not rows
  int64_t count;
};
RowUnits row_units(const GemmSpec &s, int mr, bool allow_runs = true);
// Units [u0, u1) of u: run(n, oh, ow0, m) for each run of m pixels from
// ow0 of output row (n, oh).
void for_unit_runs(llvm::IRBuilder<> &b, const GemmSpec &s, const RowUnits &u, llvm::Value *u0, llvm::Value *u1, int mr,
                   const std::function<void(llvm::Value *, llvm::Value *, llvm::Value *, int)> &run);

// Kernel k's slots, addressed for slot 0 (the convolution input) and the
// inputs its epilogue reads; the raw weights (read only by the reference
// expression) get none, so they never reach the object.
std::vector<SlotRef> scheduled_slots(EmitEnv &env, llvm::IRBuilder<> &b, llvm::Value *arena, const Kernel &k);
// Applies the epilogue to one vector of accumulators, output channels
// [oc, oc + L) of pixel (n, oh, ow) (nullptr where the role has no axis),
// and stores the first `lanes` of them.
void store_epilogue(ExprEmitter &em, const GemmSpec &s, const SlotRef &out, llvm::Value *n, llvm::Value *oh,
                    llvm::Value *ow, llvm::Value *oc, llvm::Value *acc, int lanes);
// Whether a tile of `count` accumulator groups runs its epilogues in a
// rolled loop (looped_epilogue): the target asks for it
// (Target::loop_math_epilogues) and the epilogue calls a math function.
bool loops_epilogue(const Target &t, const GemmSpec &s, int count);
// each(i, accs of group i) for i in [0, groups), a loop LLVM keeps rolled:
// the accumulators (groups x per_group vectors) go to a stack buffer
// first, so that one group's epilogue is live at a time instead of all of
// them interleaved.
void looped_epilogue(llvm::IRBuilder<> &b, const std::vector<llvm::Value *> &accs, int groups,
                     const std::function<void(llvm::Value *, const std::vector<llvm::Value *> &)> &each);

}  // namespace tinyrt
