// madd_form.h — MaddForm: how x86 without VNNI forms a layer's int8
// products (GemmSpec::madd, RecurrentSpec::madd; codegen/int8_dot.cpp).
#pragma once

#include <cstdint>

namespace tinyrt {

// How x86 without VNNI (DotI8::X86Madd) multiplies a layer's int8
// products, chosen per layer from its weights by pack_weights; each form
// is exact for every input.
enum class MaddForm : uint8_t {
  Widened,      // vpmaddwd over X and the weights widened to 16 bits: any weights
  Bytes,        // vpmaddubsw(uint8 x, w) then vpmaddwd by 1: every pair of
                // weights summed together is byte_pair_exact (7-bit weights)
  SignedBytes,  // vpmaddubsw(|x|, w * sign x) then vpmaddwd by 1 (vpsignb):
                // int8 X, no weight is -128 (|x| <= 128, |w| <= 127: a pair
                // of products sums to at most 32512)
};

}  // namespace tinyrt
