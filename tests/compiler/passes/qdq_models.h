// qdq_models.h — QDQ graphs in the textual IR, as quantizers write them,
// for the passes that fuse and fold quantized kernels.
#pragma once

#include <string>

namespace tinyrt::test {

// Q(x) -> DQ -> Conv(DQ(w), b) [-> Q]: a quantized 3x3 convolution over
// `c` input channels to 8, its output quantized when `requantize` (as the
// next layer reads it), else float.
inline std::string qdq_conv(int c, bool requantize) {
  std::string C = std::to_string(c);
  std::string ir =
      "graph opset 17\n"
      "input x: f32[1," +
      C +
      ",12,12]\n"
      "const xs: f32[] = [0.05]\n"
      "const xz: u8[] = [128]\n"
      "const w: i8[8," +
      C +
      ",3,3] = random(1)\n"
      "const ws: f32[8] = fill(0.01)\n"
      "const wz: i8[8] = fill(0)\n"
      "const b: f32[8] = random(2)\n"
      "const ys: f32[] = [0.1]\n"
      "const yz: u8[] = [10]\n"
      "q = QuantizeLinear(x, xs, xz)\n"
      "dq = DequantizeLinear(q, xs, xz)\n"
      "dw = DequantizeLinear(w, ws, wz) {axis=0}\n"
      "c = Conv(dq, dw, b) {pads=[1,1,1,1]}\n";
  if (requantize) return ir + "qy = QuantizeLinear(c, ys, yz)\noutput qy\n";
  return ir + "output c\n";
}

// A QDQ 3x3 depthwise convolution over c channels, requantized (an int8
// depthwise kernel).
inline std::string qdq_depthwise(int c) {
  const std::string C = std::to_string(c);
  return "graph opset 17\n"
         "input x: f32[1," +
         C +
         ",12,12]\n"
         "const xs: f32[] = [0.05]\n"
         "const xz: u8[] = [128]\n"
         "const w: i8[" +
         C +
         ",1,3,3] = random(1)\n"
         "const ws: f32[" +
         C +
         "] = fill(0.01)\n"
         "const wz: i8[" +
         C +
         "] = fill(0)\n"
         "const b: f32[" +
         C +
         "] = random(2)\n"
         "const ys: f32[] = [0.1]\n"
         "const yz: u8[] = [10]\n"
         "q = QuantizeLinear(x, xs, xz)\n"
         "dq = DequantizeLinear(q, xs, xz)\n"
         "dw = DequantizeLinear(w, ws, wz) {axis=0}\n"
         "c = Conv(dq, dw, b) {pads=[1,1,1,1], group=" +
         C +
         "}\n"
         "qy = QuantizeLinear(c, ys, yz)\n"
         "output qy\n";
}

}  // namespace tinyrt::test
