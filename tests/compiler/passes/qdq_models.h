// qdq_models.h — QDQ graphs in the textual IR, as quantizers write them,
// for the passes that fuse and fold quantized kernels.
#pragma once

#include <string>

namespace tinyrt::test {

// Q(x) -> DQ -> Conv(DQ(w)[, b]) {attrs} [-> Q] over a 12 x 12 image of
// `ic` channels: weights i8[oc, w_ic, k, k] = `weights` (per-channel scales
// 0.01), a bias when `bias`, the output quantized when `requantize` (as the
// next layer reads it), else float.
inline std::string qdq_conv_graph(int ic, int oc, int w_ic, int k, const std::string &weights, bool bias,
                                  const std::string &attrs, bool requantize) {
  const std::string C = std::to_string(ic), O = std::to_string(oc), K = std::to_string(k);
  std::string ir = "graph opset 17\ninput x: f32[1," + C +
                   ",12,12]\n"
                   "const xs: f32[] = [0.05]\n"
                   "const xz: u8[] = [128]\n"
                   "const w: i8[" +
                   O + "," + std::to_string(w_ic) + "," + K + "," + K + "] = " + weights + "\nconst ws: f32[" + O +
                   "] = fill(0.01)\nconst wz: i8[" + O + "] = fill(0)\n" +
                   (bias ? "const b: f32[" + O + "] = random(2)\n" : "") +
                   "const ys: f32[] = [0.1]\n"
                   "const yz: u8[] = [10]\n"
                   "q = QuantizeLinear(x, xs, xz)\n"
                   "dq = DequantizeLinear(q, xs, xz)\n"
                   "dw = DequantizeLinear(w, ws, wz) {axis=0}\n"
                   "c = Conv(dq, dw" +
                   (bias ? ", b" : "") + ") {" + attrs + "}\n";
  if (requantize) return ir + "qy = QuantizeLinear(c, ys, yz)\noutput qy\n";
  return ir + "output c\n";
}

// A quantized 3x3 convolution over `c` input channels to 8.
inline std::string qdq_conv(int c, bool requantize) {
  return qdq_conv_graph(c, 8, c, 3, "random(1)", true, "pads=[1,1,1,1]", requantize);
}

// A QDQ 3x3 depthwise convolution over c channels, requantized (an int8
// depthwise kernel).
inline std::string qdq_depthwise(int c) {
  return qdq_conv_graph(c, c, 1, 3, "random(1)", true, "pads=[1,1,1,1], group=" + std::to_string(c), true);
}

}  // namespace tinyrt::test
