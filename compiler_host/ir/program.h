// program.h — the kernel-level IR that lowering produces and the code
// generators consume: an ordered list of kernels (one generated function
// each), value aliases (views), physical layouts and the memory plan.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/graph.h"
#include "ir/madd_form.h"
#include "ir/task_split.h"

namespace tinyrt {

// An implicit-GEMM convolution or matrix product over packed constant
// weights: out(pixel, oc) = epilogue(sum_k X(pixel, k) * W(k, oc)).
// Pixels are (n, oh, ow); k is (kh, kw, ic). Matrix products are 1x1
// convolutions whose roles map to other axes (see *_axis).
struct GemmSpec {
  int64_t batch = 1, in_c = 0, in_h = 1, in_w = 1, out_c = 0, out_h = 1, out_w = 1;
  int64_t k_h = 1, k_w = 1, stride_h = 1, stride_w = 1, dil_h = 1, dil_w = 1;
  int64_t pad_t = 0, pad_l = 0, groups = 1;
  int weight = -1;  // constant value id, logical [OC, IC/groups, KH, KW]; -1 with arena_weights
  // A product of two activations (MatMul whose B is computed, attention's
  // Q K^T and P V): B is kernel slot 1, [batch..., K, N], and pack_weights
  // inserts a loop kernel before this one that packs it at run time, as
  // [batch][oc tile][K][nr] (zero padded), into the value that becomes
  // slot 1. Batch index of a pixel: n * out_h + oh (A's batch axes take
  // the roles n and h, as matmul_spec gives them; w the rows M).
  bool arena_weights = false;
  // The weights are kernel slot 1, an arena tensor already in the packed
  // layout of `packed` ([group][oc tile][kh][kw][ic][nr]): a Winograd
  // convolution's weights, transformed at run time (WinogradWeights).
  bool arena_packed = false;
  // With arena_packed: bytes between one group's packed weights and the
  // next's (a Winograd plane's), so that the run-time transform's stores
  // to every plane do not fall in one L1 set (passes/winograd.cpp).
  int64_t group_pad_bytes = 0;
  // Roles -> logical axes of the output (slot: the kernel output) and of the
  // input X (kernel slot 0); -1 when the role has no axis (extent 1).
  int out_axis[4] = {0, 1, 2, 3};  // n, c, h, w
  int in_axis[4] = {0, 1, 2, 3};
  ExprP epilogue;  // element of the output in terms of Acc (the sum)
  // Integer GEMM (KernelKind::QGemm): X is uint8 or int8, the weight int8,
  // Acc the int32 sum of (x - x_zero) * w; padding reads x_zero.
  int64_t x_zero = 0;
  // Chosen by the pack_weights pass.
  int packed = -1;       // constant value id of the packed weights
  int packed_bias = -1;  // int8: per output channel, -x_zero * sum of its weights (QGemm and
                         // NEON depthwise int32, x86 depthwise float; channels padded to whole
                         // vectors), or -1
  bool x_flip = false;   // QGemm: X's bytes xor 0x80 before the products (int8 <-> uint8)
  // QGemm: no weight is -128, so with DotI8::NeonPairs two int8 products
  // sum without overflow in 16 bits (|x·w + x'·w'| <= 2·128·127), and with
  // DotI8::X86Madd the products may be signed bytes (MaddForm).
  bool pair16 = false;
  // QGemm with DotI8::X86Madd: how the products are formed (MaddForm).
  // The byte forms multiply by vpmaddubsw without widening, 4 products per
  // int32 lane as VNNI, instead of vpmaddwd's partial sums.
  MaddForm madd = MaddForm::Widened;
  // QGemm over few input channels (pad_conv_rows): X is a padded,
  // channels-last copy, and the K of a kernel row is its k_w * in_c
  // contiguous bytes, packed [kh][(k_w * in_c) / 4][nr][4] (pack_weights
  // keeps it only when X's layout is dense channels-last).
  bool k_run = false;
  // Register tiles run over the output's pixels in order, across output
  // rows, each pixel addressed by its own window (span_rows): no row ends
  // in a tile of few pixels. Not with k_run, linear or arena weights.
  bool span = false;
  int mr = 0, nr = 0;  // register tile: pixels x output channels
  int unroll = 4;      // input channels per inner-loop iteration
  TaskSplit split;     // how its tasks are cut and ordered (pack_weights: Target::task_split)
  // Float GEMM over half weights whose products are computed in half
  // (--precision fp16, Target::half_arith; set by pack_weights): nr a
  // multiple of 8, X's values rounded to half as loaded, each sum in half
  // for at most Target::half_chunk products, then added into float
  // accumulators; the epilogue in float.
  bool half = false;
  // --weights fp16: this float GEMM's or depthwise convolution's weights
  // stay float (the weights budget's plan, passes/weights_plan.h: its
  // room spent where widening half weights saves the most per byte).
  bool float_weights = false;
  // QGemm over int16 operands: a Winograd convolution's grouped product
  // (passes/winograd.cpp). X and the weight (logical [OC, IC/groups, 1, 1])
  // hold int16 values, x_zero is 0, and the products go by pairs of input
  // channels: a pair's 4 bytes are one int8 quad of the packing and of the
  // emitter (pmaddwd: two 16-bit products summed into each int32 lane;
  // vpdpwssd with VNNI).
  bool i16 = false;
  // With i16: the weight holds int8 values (logical [OC, IC/groups, KH,
  // KW]), packed as pairs of bytes ([group][oc tile][kh*kw][IC / 2][nr][2];
  // k_run: a kernel row's k_w * IC inputs in pairs) and widened to int16 as
  // they load (vpmovsxbw), so that they keep their int8 bytes: an int8
  // convolution over a widened copy of its input
  // (passes/widen_int8_inputs.cpp).
  bool w8 = false;
};

// What a GEMM's register tile is chosen for (Target::gemm_tile): output and
// input channels per group (k_run: a kernel row's inputs, the inner loop's
// K), pixels per tiled row, and whether the tile
// walks all pixels as one row (a 1x1 stride-1 unpadded convolution, the
// emitter's linear mode; or GemmSpec::span: then `row` is every pixel and
// the tile is chosen from the linear classes too).
struct GemmTileShape {
  int64_t oc, ic, row;
  bool linear;
  bool span = false;
  // Target::gemm_tile's class: all pixels as one row.
  bool one_row() const { return linear || span; }
};
GemmTileShape gemm_tile_shape(const GemmSpec &s);
// The pixel role (0: n, 2: h, 3: w) of a scheduled GEMM whose output `out`
// has run-time extents that the GEMM emitter takes: its linear mode (a
// product or a 1x1 convolution over dense pixels), one run-time extent,
// on the outermost role of more than one pixel (so the actual pixels are
// the first ones of the bounds' layout). -1 when the GEMM cannot take
// them (or `out` has none).
int gemm_dynamic_role(const GemmSpec &s, const Value &out);
// Whether a float GEMM with output `out` and input X `x` takes their
// run-time extents in its row mode: a 1x1 stride-1 unpadded product or
// convolution whose run-time extents are the output rows' pixels (the w
// role), the output channels and the summed K only (attention's Q K^T and
// P V over T frames). 1 when it does, 0 when it cannot, -1 without
// run-time extents.
int gemm_runtime_rows(const GemmSpec &s, const Value &out, const Value &x);
// Whether a convolution (GEMM or depthwise) takes run-time image sizes:
// the only run-time extents of the output and of X are their h and w
// roles' (a fully convolutional network compiled for a range of sizes);
// the run's rows, widths and input sizes bound its tiles (for_run_rows).
// 1 when it does, 0 when it cannot, -1 without run-time extents.
int gemm_runtime_spatial(const GemmSpec &s, const Value &out, const Value &x);

// A recurrent layer (RNN, GRU, LSTM) as one loop over time. The input
// projection X W^T + biases of all time steps is a GEMM computed before
// (slot 0, [T, B, D*G*H], gate g of direction d at channel (d*G + g)*H).
// Each step computes the recurrent products H_{t-1} R^T of all gates, a
// vector of hidden units at a time, applies the cell and writes the state
// into the output S[T, D, B, width]: h in [0, H), then the cell's other
// state and scratch (LSTM: c; GRU without linear_before_reset: r*h and z).
// Directions are tasks; the code does not grow with T.
enum class CellKind { RNN, GRU, LSTM };

struct RecurrentSpec {
  CellKind cell = CellKind::LSTM;
  int64_t T = 0, B = 0, H = 0, width = 0;
  int D = 1, G = 1;
  bool reverse = false;              // direction "reverse" (direction 1 of a bidirectional layer always is)
  bool linear_before_reset = false;  // GRU
  // Per direction: the activations f, g, h as functions of Acc (the
  // pre-activation), clip included.
  std::vector<std::vector<ExprP>> act;
  int r = -1;  // constant R [D, G*H, H]
  // Kernel slots, -1 when absent: initial h and c [D, B, H] (or layout 1's
  // [B, D, H]), peepholes [D, 3H], GRU's Rb of the h gate [D, H],
  // sequence_lens (int32 [B]: from its length on, a batch entry's state
  // holds and Y is 0).
  int h0 = -1, c0 = -1, p = -1, rbh = -1, lens = -1;
  bool layout1 = false;  // h0/c0 are [B, D, H]
  // Dynamic int8 (--quantize dynamic, com.microsoft.DynamicQuantizeLSTM):
  // R is int8 [D, G*H, H] with a float scale per row (r_scale, constant
  // [D, G*H]). At every step the previous state is quantized per batch
  // entry (symmetric int8, scale max|h| / 127) into the byte scratch at
  // float offset `q_offset` of the step's state row, and the recurrent
  // products run as int8 dot products accumulated in int32.
  int r_scale = -1;
  int64_t q_offset = 0;
  // Chosen by pack_weights: R group-major, per group of `vectors` vectors of
  // units (and one block for the rest) [k][G][units] (Hp: H padded to whole vectors)
  // (int8: [D][k/4][G][Hp][4], the target's dot-product layout, with the
  // scales as [D][G][Hp] and, when the dot product takes uint8 inputs,
  // an int32 start -128 * (sum of the row) as [D][G][Hp]).
  int packed = -1;
  int packed_scale = -1, packed_start = -1;
  bool x_flip = false;                // int8: the quantized state's bytes xor 0x80 (uint8 dot products)
  bool pair16 = false;                // int8, DotI8::NeonPairs: no weight is -128 (GemmSpec::pair16)
  MaddForm madd = MaddForm::Widened;  // int8, DotI8::X86Madd: how R is multiplied (GemmSpec::madd)
  int64_t h_padded = 0;
  int vectors = 1;  // vectors of hidden units per group (Target::recurrent_vectors); int8: R's
                    // bytes are tile-major, [D][Hp / (vectors * lanes)][k/4][G][vectors * lanes][4]
  // Chosen by split_recurrent: each step's units in `parts` parts (whole
  // groups) that threads claim; the kernel then has D * parts tasks and
  // `sync` is the slot of its counters, or -1 with one part: int32, per
  // direction parts + 1 lines of 16 words (64 bytes), the first word of
  // line q < parts the steps of part q claimed, of line `parts` the parts
  // done; zeroed by a kernel before.
  int parts = 1;
  int sync = -1;
  static constexpr int64_t kSyncLine = 16;  // int32 words per counter line
  // Word offset of counter line `line` of direction d, and the value's size.
  int64_t sync_word(int d, int64_t line) const { return ((int64_t)d * (parts + 1) + line) * kSyncLine; }
  int64_t sync_words() const { return sync_word(D, 0); }
};

// A custom op declared with --custom-op DOMAIN::OP=SYMBOL[:same]: nodes of
// that op call the C function SYMBOL through the ABI's tinyrt_custom_call
// (abi/tinyrt.h). Output shapes come from the model's value_info or graph
// outputs, or with `same` output 0 takes input 0's type and shape.
struct CustomOpDecl {
  std::string domain, op, symbol;
  bool same = false;
};

// A custom op node as one call of an external C function (one task).
struct CallSpec {
  std::string symbol;     // the C function
  std::string op;         // "DOMAIN::OP"
  std::vector<int> outs;  // every output value (outs[0] is Kernel::out)
};

// Greedy non-maximum suppression (ONNX NonMaxSuppression) over boxes
// [B, N, 4] (kernel slot 0) and scores [B, C, N] (slot 1), N possibly a
// run-time extent: per batch entry and class, in that order, the boxes
// scoring above the score threshold are selected best first (ties: the
// lower index), each suppressing the remaining ones whose IoU with it is
// above the IoU threshold, at most max_out per class; the kernel writes
// (batch, class, box) int64 rows to its output [bound, 3] and their count
// to Kernel::count. Slot 2 is int32 scratch of 8 x N entries
// (codegen/nms_emitter.cpp). The scalars are constants here, or read from
// a slot (>= 0) at run time.
struct NmsSpec {
  bool center_point_box = false;  // boxes as [xc, yc, w, h], else two corners [y1, x1, y2, x2]
  int64_t max_out = 0;
  float iou = 0, score = 0;
  bool has_score = false;  // no score input: every box is a candidate
  int max_slot = -1, iou_slot = -1, score_slot = -1;
};

// TopK's order: the largest values first (else the smallest), ties to the
// lower index, NaN above every number.
struct TopKSpec {
  int axis = 0;
  bool largest = true;
};

// Winograd F(m x m, 3 x 3) of a 3x3 stride-1 convolution (passes/winograd.cpp):
// the input in overlapping tiles of a x a pixels (a = m + 2, stride m) is
// transformed, V = B^T d B, into a^2 planes [tile][a*a][IC]; a grouped GEMM
// (one group per plane) multiplies them with the transformed weights
// U = G g G^T into M [tile][a*a][OC]; the output transform A^T M A gives
// m x m output pixels per tile, through the convolution's epilogue.
// The matrices B^T (a x a) and A^T (m x a) are data (winograd_matrices).
struct WinogradSpec {
  int m = 0;                         // output pixels per tile side (2 or 4)
  int64_t tiles_h = 0, tiles_w = 0;  // tiles per image: ceil(out / m)
  int64_t channels = 0;              // the transform's channels: IC (input) or OC (output)
  // The band this kernel transforms: tile rows [row0, row0 + rows) of the
  // batch's batch * tiles_h, whose tiles are V's and M's, numbered from
  // the band's first (rows 0: all of them). A convolution in bands runs
  // in, product and out band after band, so that V and M hold one band
  // (the arena budget's choice, passes/winograd.cpp).
  int64_t row0 = 0, rows = 0;
  // Weights transformed at run time, a chunk of output channels at a
  // time: the chunk's first channel (WinogradOut: the output's channels
  // [c0, c0 + channels); WinogradWeights: the chunk it transforms).
  int64_t c0 = 0;
};
// F(m x m, 3 x 3)'s B^T (a x a, row-major) and A^T (m x a) and G (a x 3);
// m is 2 or 4.
struct WinogradMatrices {
  int m;
  std::vector<double> bt, at, g;
  int a() const { return m + 2; }  // input tile side
};
const WinogradMatrices &winograd_matrices(int m);

// Loop: the generic emitter over `expr`. Gemm, QGemm (its int8 version) and
// Depthwise are scheduled families computing a GemmSpec (a depthwise
// convolution: groups = channels, one input channel per group) with its
// epilogue. Recurrent computes a
// RecurrentSpec and has no element expression; nor has Call (a custom op:
// the generated code calls call.symbol). WinogradIn and WinogradOut are the
// transforms of a Winograd convolution (WinogradSpec; `gemm` keeps the
// convolution's geometry and, for WinogradOut, its epilogue): no element
// expression either, their definition is the matrices. WinogradWeights
// transforms a chunk of a convolution's 3x3 weights (slot 0, a constant
// [IC, 9, OC]; int8: [chunks, IC / 2, 9, per, 2]) at run time,
// U = G g G^T, into its output in the grouped GEMM's packed layout
// [a*a, oc tiles, IC, gemm.nr] (WinogradSpec::c0 and channels: the
// chunk's output channels).
// Fail is no computation: the step that stops the run when the inputs
// take a branch that could not be compiled (Kernel::message says why; its
// guard is that branch's).
// Compact and Nms compute data-dependent sizes (one task each): Compact
// writes, in order, the index i of every nonzero element of its input
// (1-D, slot 0) as int64 to its output (as long as the input), Nms the
// selections of NmsSpec; both write how many to Kernel::count, the holder
// of a produced extent (DimSym::produced) that later kernels loop to.
// TopK selects (TopKSpec): per slice of its input (slot 0) along the axis,
// the int32 indices of its first elements in order, into its output, whose
// axis (min(k, the slice's length)) says how many.
enum class KernelKind {
  Loop,
  Gemm,
  QGemm,
  Depthwise,
  Recurrent,
  Call,
  WinogradIn,
  WinogradOut,
  Fail,
  Compact,
  Nms,
  TopK,
  WinogradWeights
};
inline bool is_scheduled(KernelKind k) {
  return k == KernelKind::Gemm || k == KernelKind::QGemm || k == KernelKind::Depthwise;
}
inline bool is_winograd(KernelKind k) { return k == KernelKind::WinogradIn || k == KernelKind::WinogradOut; }
inline bool is_data_dependent(KernelKind k) { return k == KernelKind::Compact || k == KernelKind::Nms; }
inline bool has_expr(KernelKind k) {
  return k != KernelKind::Recurrent && k != KernelKind::Call && k != KernelKind::Fail && !is_winograd(k) &&
         !is_data_dependent(k) && k != KernelKind::TopK && k != KernelKind::WinogradWeights;
}
const char *kernel_family(
    KernelKind k);  // "loop", "gemm", "qgemm", "depthwise", "recurrent", "call", "winograd_in", ...

struct Kernel {
  KernelKind kind = KernelKind::Loop;
  int out = -1;
  std::vector<int> ins;            // slot -> value id
  ExprP expr;                      // full definition of an output element (not for Recurrent)
  GemmSpec gemm;                   // is_scheduled(kind)
  RecurrentSpec rnn;               // kind == Recurrent
  CallSpec call;                   // kind == Call
  WinogradSpec wino;               // is_winograd(kind)
  NmsSpec nms;                     // kind == Nms
  TopKSpec topk;                   // kind == TopK
  int count = -1;                  // is_data_dependent(kind): the int64 scalar it writes its count to
  std::vector<std::string> nodes;  // ONNX nodes this kernel computes
  std::string label;               // e.g. "Conv+Add+Relu"
  // Kernels with the same nonempty key run one generated function (the
  // parts of a Winograd layer: its bands or chunks over the same values);
  // each kernel's own entry passes the function its part, WinogradSpec's
  // row0 and c0 (codegen/module_emitter.cpp).
  std::string code_key;
  int guard = -1;            // Graph::guards: runs only when it holds (-1: always)
  std::string message;       // Fail: why the run stops
  bool shape_error = false;  // Fail: with TINYRT_ERR_SHAPE (the run's extents disagree), not _BRANCH

  // The slot reading value v, or -1.
  int slot_of(int v) const {
    for (size_t s = 0; s < ins.size(); ++s)
      if (ins[s] == v) return (int)s;
    return -1;
  }
};

// Where a value's elements live once memory is planned.
struct Storage {
  enum class Where { None, Arena, Const } where = Where::None;
  int64_t offset = 0;            // arena byte offset of the element (0,...,0)
  std::vector<int64_t> strides;  // elements per logical axis
};

// One arena buffer of the memory plan: the value owning it (values written
// in place and views share it), where it lies and the steps it is live
// (step 0: the inputs are written; kernel i runs at step i + 1; the last
// step: the outputs are read).
struct PlannedBuffer {
  int value;
  int64_t offset, bytes;
  int first, last;
};

struct PlanStats {
  int64_t arena_bytes = 0;
  int64_t lower_bound_bytes = 0;  // peak bytes simultaneously live
  int64_t weights_bytes = 0;
  std::vector<PlannedBuffer> buffers;
  // Arena offset of the int32 status custom-op calls store (the runtime
  // reads it after each call step), -1 without calls.
  int64_t call_status_offset = -1;
  // Run-time extents (ir/graph.h DimSym): per graph input and output, the
  // arena offset of its actual dimensions (an int64 per axis; the runtime
  // writes an input's, the last step an output's), -1 when all are fixed;
  // per extent of Graph::syms, the offset of its int64 value for a base
  // one (an input's dimension), -1 for a derived one.
  std::vector<int64_t> input_dims, output_dims;
  std::vector<int64_t> sym_offsets;
};

// A choice that spends memory for speed (a Winograd form per layer), as
// the budgets decided it: -v and the JSON's "memory_trades" list them.
struct MemoryTrade {
  // "winograd"; "tile" (wanted and taken are tiles, MRxNR) or "storage"
  // (float weights under --weights fp16): the weights plan; "float-copy",
  // "int16-copy", "int16-input": the arena's.
  std::string kind;
  std::string label;  // the kernel's label (its first node's name in `node`)
  std::string node;
  std::string wanted;  // the fastest form by the cost model ("F(4,3)", ...)
  std::string taken;   // the form taken ("direct" when the budget left none)
  int64_t bytes = 0;   // weight bytes the taken form adds (against direct; < 0: saves)
  int64_t wanted_bytes = 0;
  double gain = 0;  // estimated vector instructions the taken form saves
  double wanted_gain = 0;
  int bands = 1;            // the taken form's bands of tile rows (its V and M hold one; rt: per chunk)
  int64_t arena_bytes = 0;  // arena bytes the taken choice adds at its step (int16 inputs: the widened copy)
  int64_t chunk = 0;        // rt forms: output channels per chunk of run-time weights (0: none, or all)
};
struct Budgets {
  int64_t weights = 0;         // the weights budget the choices kept within
  int64_t base_weights = 0;    // the weights before any trade (the smallest plan)
  int64_t traded_weights = 0;  // bytes the trades add
  int64_t arena = 0;           // the arena each trade keeps within (its live bytes and buffers)
  int64_t base_arena = 0;      // bytes live at the peak before any trade (the plan's lower bound)
  int64_t code = 0;            // the code budget (--max-code-bytes; 0: none)
  int64_t base_code = 0;       // --max-code-bytes Rx: the code with every Winograd layer direct
  int64_t float_plan = 0;      // --weights fp16, default budget: the float plan's weights (winograd)
};

struct Program {
  Graph graph;
  std::vector<MemoryTrade> trades;
  Budgets budgets;
  std::vector<Kernel> kernels;
  std::map<int, int> alias;  // view -> viewed value (same element order)
  // Physical axis order per value (outermost first); empty = row-major.
  std::vector<std::vector<int>> perm;
  std::vector<Storage> storage;
  PlanStats stats;
  std::vector<CustomOpDecl> custom_ops;  // --custom-op declarations
  // The declaration for a node's op, or nullptr.
  const CustomOpDecl *custom_op(const Node &n) const;

  // Follows aliases to the value that owns the elements.
  int root(int v) const;
  const std::vector<int> &perm_of(int v) const;
  // Strides in elements for value v's own physical layout.
  std::vector<int64_t> layout_strides(int v) const;
  // Bytes from value v's element (0,...,0) (storage offset) to the end of
  // its last element by its storage strides (not negative); 0 when empty.
  int64_t span_bytes(int v) const;
};

// The arithmetic operations of a kernel, for scheduling decisions (not a
// promise of speed): 2 x the multiply-adds of a scheduled or recurrent
// kernel, output elements x expression nodes of a loop kernel, output
// elements x the tile's side for Winograd transforms (INT64_MAX where the
// count does not fit).
int64_t kernel_ops(const Program &p, const Kernel &k);
// 2 x the multiply-adds of a scheduled or recurrent kernel, -1 for others.
int64_t kernel_flops(const Kernel &k);
// A depthwise kernel over a uint8/int8 input (int8 weights).
inline bool is_int8_depthwise(const Program &p, const Kernel &k) {
  if (k.kind != KernelKind::Depthwise || k.ins.empty()) return false;
  const DType x = p.graph.v(k.ins[0]).dtype;
  return x == DType::U8 || x == DType::I8;
}

// Physical order `perm` is row-major once size-1 axes are ignored.
bool perm_is_row_major(const std::vector<int> &perm, const Shape &shape);

}  // namespace tinyrt
