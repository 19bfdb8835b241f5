// weights_plan.h — the weights budget's plan (issue 28): every choice
// that spends weight bytes (flash) for speed, chosen together by one
// knapsack, not one kind of choice after another.
//
// Each float GEMM or depthwise weight (and each convolution winograd may
// rewrite) is a WeightChoice: its options, each a combination of
//   * a Winograd form (winograd.cpp's candidates: transformed weights a^2/9
//     times the direct ones, or none for run-time weights),
//   * the GEMM's register tile (a tile of fewer channel vectors pads the
//     output channels less: fewer bytes, more instructions),
//   * under --weights fp16 with float products, the storage (float: the
//     GEMM or depthwise kernel no longer widens each weight vector as it
//     loads it, once per register tile of pixels),
// with the bytes it adds over the weight's reference (direct, the target's
// own tile, the default storage) and the estimated vector instructions it
// saves against it (losses are negative gains). choose_options picks one
// option per weight: the most estimated gain whose bytes fit the budget's
// room. A narrower tile is taken only where the bytes it frees buy more
// elsewhere than it loses (or the weights are over the budget).
//
// The arena's trades (Winograd's bands and chunks, widened copies) are
// not in it: the arena is a peak, and each of them keeps the bytes live at
// its own step within the arena budget (winograd, widen_int8_inputs,
// widen_packed_weights; hold_placed_arena).
#pragma once

#include <functional>
#include <set>
#include <vector>

#include "passes/pass.h"

namespace tinyrt {

struct WeightOption {
  int form = -1;            // the caller's (winograd: an index of its forms; -1 direct)
  GemmTile tile{};          // the GEMM's tile where narrower than the target's own (nv 0: its own)
  GemmTile wide{};          // the target's own tile (nv 0: not a GEMM's weight)
  bool keep_float = false;  // --weights fp16: stored as float
  int64_t bytes = 0;        // weight bytes over the reference (< 0: fewer)
  double gain = 0;          // estimated vector instructions saved against the reference
  // The parts, one memory trade each in -v and the JSON: the form's (at
  // the own tile and default storage), the tile's, the storage's.
  int64_t form_bytes = 0, tile_bytes = 0, float_bytes = 0;
  double form_gain = 0, tile_gain = 0, float_gain = 0;
};

// o with its totals (bytes, gain) from its parts.
WeightOption summed(WeightOption o);

struct WeightChoice {
  std::vector<size_t> kernels;  // the kernels that multiply by the weight
  int candidate = -1;           // the caller's (winograd: its candidate's index; -1 none)
  std::vector<WeightOption> options;
  size_t taken = 0;
  const WeightOption &chosen() const { return options[taken]; }
};

// One option per choice, the most estimated gain whose added bytes fit
// `room` (< 0: the reference is over the budget; the fewest bytes then):
// a multiple-choice knapsack by gain per byte. Each choice starts at its
// fewest bytes (the most gain among them); its other options are reduced to
// their upper hull (each step adds bytes for less gain per byte than the
// one before); the steps of all choices are taken in order of gain per
// byte while they fit, a choice's step only after its previous one; then
// the room left goes to the options under the hulls that fit it, the
// largest gain first (a step that did not fit may have one below it).
void choose_options(std::vector<WeightChoice> &choices, int64_t room);

// Appends to `c` the options of a float GEMM weight multiplied by gs
// (`macs` multiply-adds in all) that `base` (a form's bytes and gain at the
// target's own tile and storage `st`) leads to: each tile the target allows
// for gs that packs fewer bytes than its own (unless --gemm-tile forced
// one), each as `st` and, with `storage_choice` and `st` half, as float.
// `copy_pixels` > 0: the arena budget has room for a float copy of the
// weights widened once per run (widen_packed_weights) over that many
// pixels, which saves the widenings anyway where there are kMinCopyTiles
// register tiles of them: float storage then saves only the copy's pass.
void add_gemm_options(WeightChoice &c, const WeightOption &base, const GemmSpec &gs, double macs, const Target &t,
                      WeightStorage st, bool storage_choice, int64_t copy_pixels = 0);

// Below this many pixel tiles per weight vector a float copy in the arena
// (widen_packed_weights) saves too little to be made.
constexpr int64_t kMinCopyTiles = 8;

// The float GEMM and depthwise weights of p's kernels, except those in
// `skip`, each with its options (storage `st`; float too with
// `storage_choice`). `copy_fits(kernel, bytes)`: whether a float copy of
// that many bytes fits the arena budget at the kernel's step.
std::vector<WeightChoice> weight_choices(const Program &p, const Target &t, WeightStorage st, bool storage_choice,
                                         const std::set<int> &skip,
                                         const std::function<bool(size_t, int64_t)> &copy_fits = {});

// The chosen tile and storage set in GEMM spec s (pack_weights packs so).
void apply_option(const WeightOption &o, const Target &t, GemmSpec &s);

// The chosen tile and storage of kernel k's weight as memory trades
// ("tile", "storage"), and in -v.
void report_option(PassContext &c, const Kernel &k, const WeightOption &o);

}  // namespace tinyrt
