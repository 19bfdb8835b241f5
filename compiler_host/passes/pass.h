// pass.h — a compiler pass: a named function over the Program. The
// pipeline (pipeline.cpp) is one ordered list of them.
#pragma once

#include <functional>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <vector>

#include "target/target.h"
#include "ir/program.h"

namespace tinyrt {

struct PassContext {
  Program &program;
  const Target &target;
  std::ostream *log = nullptr;  // verbose notes, or nullptr
};

// The options of the passes that have any, each declared with the pass that
// reads it; the pipeline (pipeline.cpp) hands each pass its own.

// infer_and_fold: expand ops that have a function body in the model's
// dialect into it even when tinyrt implements them natively (tests the
// expansion; ops without a native implementation are always expanded when
// they have a body).
struct InferAndFoldOptions {
  bool prefer_function_bodies = false;
};

// quantize_dynamic, quantize_static (--quantize, docs/QUANTIZATION.md):
// none, dynamic (weights int8, activations quantized at run time) or static
// (with calibrated ranges: a float tensor's name -> the smallest and
// largest value it took over the calibration inputs).
enum class Quantize { None, Dynamic, Static };
using CalibrationRanges = std::map<std::string, std::pair<double, double>>;
struct QuantizeOptions {
  Quantize mode = Quantize::None;
  const CalibrationRanges *ranges = nullptr;  // Quantize::Static
  // --weight-bits: the weights' largest magnitude, 127 (8 bits) or 63 (7
  // bits: ONNX Runtime's reduce_range; x86 without VNNI multiplies such
  // weights as bytes, docs/QUANTIZATION.md).
  int weight_max = 127;
};

// winograd (--winograd): 3x3 stride-1 convolutions as Winograd
// F(m x m, 3 x 3) where the cost model says it pays (Auto), never (Off), or
// always with m = 2 or 4 (F2, F4: tests and experiments).
// F2Rt, F4Rt: that form with its weights transformed at run time, a chunk
// of output channels at a time (tests, experiments; auto chooses it where
// the weights budget leaves no room for transformed weights).
enum class WinogradMode { Auto, Off, F2, F4, F2Rt, F4Rt };
const char *winograd_mode_name(WinogradMode m);  // "auto", "off", "f2", "f4", "f2rt", "f4rt"
// Whether the winograd pass may rewrite kernel k: a float 3x3 stride-1
// convolution over channels-last input and output.
bool winograd_eligible(const Program &p, const Kernel &k);
// How the scheduled kernels' float weights are stored (--weights): as
// float, or as IEEE half (half the bytes), widened to float as the
// kernels load them (F16C on x86, fcvtl / vcvt.f32.f16 on NEON).
enum class WeightStorage { F32, F16 };
const char *weight_storage_name(WeightStorage w);  // "fp32", "fp16"
// How pack_weights stores a GEMM's float weights under --weights w: as w,
// except F(4,3)'s transformed weights (m: the Winograd GEMM's tile, 0 for
// a direct one), always float: rounded to half, its output transform
// scales their error to 0.5 % of the output's magnitude.
inline WeightStorage packed_storage(int m, WeightStorage w) { return m == 4 ? WeightStorage::F32 : w; }
// How pack_weights stores the float weights of GEMM or depthwise kernel k
// under --weights w: packed_storage, or float where the weights budget's
// plan kept them so (weights_plan.h).
inline WeightStorage gemm_storage(const Kernel &k, WeightStorage w) {
  return k.gemm.float_weights ? WeightStorage::F32 : packed_storage(k.wino.m, w);
}
// A budget's ratio as the user wrote it (1.5, 0.75), for messages.
std::string ratio_text(double r);
// A float weight constant of `shape` (empty: 1-D) stored as `st` says:
// half rounded to nearest even, unless a value lies beyond half's range
// (the tensor then stays float: the kernels read either; pack_weights
// counts such tensors). Returns its value id.
// Whether v keeps its magnitude in half: finite, within [-65504, 65504]
// (a larger one would become infinity; add_float_weights keeps a tensor
// with one float).
bool in_half_range(double v);
int add_float_weights(Graph &g, const std::string &name, const std::vector<float> &w, WeightStorage st,
                      Shape shape = {});
// How float GEMMs compute (--precision): in single precision, or (fp16,
// on targets with half arithmetic: Target::half_arith) their products in
// half over half weights, summed into float every Target::half_chunk
// products (GemmSpec::half).
enum class Precision { F32, F16 };
const char *precision_name(Precision p);  // "fp32", "fp16"
// Whether GEMM kernel k is of a kind that computes in half under
// precision `pr` on target t (pack_weights then also asks for half
// weights, whole half-vector tiles and 8 input channels a tap): fp16 on a
// target with half arithmetic, constant weights, fixed sizes (the run-time
// paths stay float), not F(4,3)'s GEMM (its transforms scale the rounding
// of half by up to 5 and 8).
bool half_gemm_kind(const Program &p, const Kernel &k, const Target &t, Precision pr);
struct WinogradOptions {
  WinogradMode mode = WinogradMode::Auto;
  WeightStorage weights = WeightStorage::F32;  // the bytes the weights budget counts
  int64_t bands = 0;                           // every convolution in this many bands of tile rows (0: as fits)
  std::set<std::string> direct;                // convolutions (first node names) kept direct: the code budget
  bool runtime_weights = true;                 // auto may choose forms with weights transformed at run time
  Precision precision = Precision::F32;        // fp16: auto takes F(2,3) stored only (the others' products stay float)
  bool float_recurrent = false;                // recurrent weights float whatever `weights` (PackOptions)
};
struct PackOptions {
  WeightStorage weights = WeightStorage::F32;
  Precision precision = Precision::F32;
  // --precision fp16 without --weights fp16: the recurrent weights stay
  // float (the recurrent loop multiplies in float, and widening its half
  // weights costs more than their traffic saves: lstm256 on the Cortex-A76
  // 33.8 -> 48.5 M instructions with --weights fp16).
  bool float_recurrent = false;
};

struct PassOptions {
  InferAndFoldOptions infer_and_fold;
  QuantizeOptions quantize;
  WinogradOptions winograd;
  PackOptions pack;
};

struct Pass {
  const char *name;
  const char *summary;
  void (*run)(PassContext &, const PassOptions &);  // the pass, given its own options
};

// The passes, in the order they run.
const std::vector<Pass> &pipeline();

// Runs the pipeline on c.program, each pass followed by verify_program,
// up to and including the pass named `last` (every pass when empty; an
// unknown name is an internal error). `observe`, when given, is called with
// each pass's name before it runs (done false) and after (done true):
// progress and timing.
void run_pipeline(PassContext &c, const PassOptions &o, const std::string &last = "",
                  const std::function<void(const char *name, bool done)> &observe = nullptr);

// Structural checks of the kernel-level IR (every kernel input is defined
// before use, slots are in range, ...). Throws an internal error.
void verify_program(const Program &p, const char *after_pass);

// Pass entry points (one per file in passes/).
void infer_and_fold(PassContext &c, const InferAndFoldOptions &o);
void quantize_dynamic(PassContext &c, const QuantizeOptions &o);
void quantize_static(PassContext &c, const QuantizeOptions &o);
// The tensors whose ranges quantize_static needs (value ids of graph g
// after infer_and_fold): the float activation input of every Conv, Gemm
// and MatMul with constant weights.
std::vector<int> static_quantization_tensors(const Graph &g);
void fuse_qdq(PassContext &c);
void fold_batchnorm(PassContext &c);
void lower_to_kernels(PassContext &c);
void bypass_views(PassContext &c);
void fuse_epilogues(PassContext &c);
void pad_conv_rows(PassContext &c);
void fuse_elementwise(PassContext &c);
void fuse_residuals(PassContext &c);
void fold_epilogue_constants(PassContext &c);
void tabulate_byte_functions(PassContext &c);
void choose_layouts(PassContext &c);
// Float GEMMs over windows tile their pixels across output rows where the
// target asks for it (GemmSpec::span).
void span_rows(PassContext &c);
void winograd(PassContext &c, const WinogradOptions &o);
// --precision fp16: the tensors that only half products read stored as
// half; depthwise convolutions over them multiply in half (GemmSpec::half).
void half_inputs(PassContext &c, const PackOptions &o);
// The bytes of the constants p's kernels read, float GEMM and depthwise
// weights as pack_weights packs them with storage st (their padding
// counts), recurrent float weights at st's bytes (float with
// float_recurrent); equal constants once (passes/winograd.cpp: the weights
// budget's accounting).
int64_t weights_read(const Program &p, const Target &t, WeightStorage st, bool float_recurrent);
void pack_weights(PassContext &c, const PackOptions &o);
// After pack_weights, in the arena budget's room: float copies of half GEMM
// weights (--weights fp16), and int16 copies of the int8 weights of GEMMs
// over int16 pairs (GemmSpec::w8), widened once per run by a loop kernel
// before their GEMM (GemmSpec::arena_packed).
void widen_packed_weights(PassContext &c, const PackOptions &o);
// The bytes pack_weights gives a float GEMM's weights: each group's output
// channels padded to its register tile's channel columns (Target::gemm_tile),
// at 4 or 2 bytes a weight.
int64_t packed_float_weight_bytes(const GemmSpec &s, const Target &t, WeightStorage w);
// The bytes pack_weights gives a float depthwise convolution's weights:
// each tap's channels padded to whole vectors, at 4 or 2 bytes a weight.
int64_t packed_depthwise_weight_bytes(const GemmSpec &s, const Target &t, WeightStorage w);
// The register tile Target::gemm_tile gives GEMM s by its shape (of at
// most `max_nv` channel vectors when > 0; `score`: its figure of merit),
// whatever tile the weights budget's plan may have set.
GemmTile gemm_table_tile(const GemmSpec &s, const Target &t, Target::TileKind kind = Target::TileKind::Float,
                         int max_nv = 0, double *score = nullptr);
// A float GEMM's register tile as pack_weights packs it: the weights plan's
// (GemmSpec mr, nr) if set, else gemm_table_tile's; and its output
// channels (the packed nr).
GemmTile float_gemm_tile(const GemmSpec &s, const Target &t);
// Which of the target's tile lists GEMM kernel k takes its tile from:
// float, int8, int8 multiplied as bytes or signed bytes (x86 without
// VNNI: GemmSpec::madd), or int16 pairs (GemmSpec::i16; over int8 weights
// widened as they load, GemmSpec::w8, their own list).
inline Target::TileKind int8_tile_kind(MaddForm madd) {
  return madd == MaddForm::Bytes         ? Target::TileKind::Int8Bytes
         : madd == MaddForm::SignedBytes ? Target::TileKind::Int8SignedBytes
                                         : Target::TileKind::Int8;
}
inline Target::TileKind gemm_tile_kind(const Kernel &k) {
  return k.kind != KernelKind::QGemm ? Target::TileKind::Float
         : k.gemm.i16                ? (k.gemm.w8 ? Target::TileKind::Int16Bytes : Target::TileKind::Int16)
                                     : int8_tile_kind(k.gemm.madd);
}
// GEMM s's tile geometry for the tile list `kind` (Target::gemm_tile's
// arguments, the key of a tuned tile or split): a product of activations
// takes the linear classes.
Target::TileClass gemm_tile_class(const GemmSpec &s, Target::TileKind kind);
inline Target::TileClass gemm_tile_class(const Kernel &k) { return gemm_tile_class(k.gemm, gemm_tile_kind(k)); }
int64_t float_gemm_nr(const GemmSpec &s, const Target &t);
// How a QGemm multiplies its int8 weights (pack_weights): sets s.pair16
// (no weight is -128) and, on x86 without VNNI, s.madd (MaddForm).
void choose_int8_products(GemmSpec &s, const Graph &g, const Target &t);
// The weights pack_weights packed for kernel k (GEMM, depthwise or
// recurrent), or -1.
int packed_weights_of(const Kernel &k);
void split_recurrent(PassContext &c);
void widen_int8_inputs(PassContext &c);
// The bytes live at each kernel's step as plan_memory would place them
// now (its owners, in-place writes and live ranges; kernel i runs at step
// i + 1): their maximum is the plan's lower bound.
std::vector<int64_t> live_bytes(const Program &p);
// The arena plan_memory would place now for the buffers (without the
// blocks it adds after them: custom-op status, run-time dimensions).
int64_t planned_arena(const Program &p);
// The arena budget held against the placed arena by a pass that spends
// arena per step (Winograd's forms, widened int8 copies): `choose` makes
// its choices with each step's room cut by `cut` bytes and says whether it
// took any; where the placement's gaps put the arena over the budget (or
// over the plan without them, if that already was), it chooses again with
// the room cut by the excess (three times), and at last with none.
// `placed_of`: the placed arena of a program as it will run (default
// planned_arena; winograd under --precision fp16: with the half tensors
// of the later pass half_inputs).
void hold_placed_arena(PassContext &c, const char *pass, const char *what,
                       const std::function<bool(PassContext &, int64_t)> &choose,
                       const std::function<int64_t(const Program &)> &placed_of = {});
void prove_bounds(PassContext &c);
void plan_memory(PassContext &c);

}  // namespace tinyrt
