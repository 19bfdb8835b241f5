#include "frontend/onnx_tensors.h"

#include <cstring>
#include <fstream>
#include <sstream>

#include "onnx/onnx_pb.h"

namespace tinyrt {

template <class Dst, class Src>
static void fill(Bytes &b, const Src &src, int64_t n) {
  b.resize((size_t)n * sizeof(Dst));
  for (int64_t i = 0; i < n; ++i) {
    Dst v = (Dst)src.Get((int)i);
    std::memcpy(b.data() + i * sizeof(Dst), &v, sizeof(Dst));
  }
}

// The number of values a tensor's typed data field holds for its type.
static int typed_values(const onnx::TensorProto &t, DType dt) {
  switch (dt) {
    case DType::F32: return t.float_data_size();
    case DType::F64: return t.double_data_size();
    case DType::I64: return t.int64_data_size();
    case DType::U32:
    case DType::U64: return t.uint64_data_size();
    default: return t.int32_data_size();
  }
}

// A tensor's data must be exactly what its type and shape say: raw_data
// of numel * element-size bytes, or numel typed values. Checked before
// anything reads a tensor (ONNX's shape inference, which tinyrt ran
// before, copied all of raw_data into a buffer sized from it rounded down:
// a Resize whose scales had 15 bytes of raw_data wrote 3 bytes past a
// 12-byte buffer, found by fuzz_import under ASan).
void check_tensor_proto(const onnx::TensorProto &t, DType *dt_out, int64_t *n_out) {
  DType dt = (DType)t.data_type();
  std::string what = "tensor '" + t.name() + "'";
  if (t.data_location() == onnx::TensorProto::EXTERNAL) fail_unsupported(what + " stores its data in an external file");
  if (dt == DType::String) fail_unsupported(what + " holds strings: out of scope (strings)");
  if (!dtype_supported(dt)) fail_unsupported(what + " has unsupported type " + dtype_name(dt));
  Shape shape(t.dims().begin(), t.dims().end());
  for (int64_t d : shape)
    if (d < 0) fail_invalid(what + " has a negative dimension in " + shape_str(shape));
  int64_t n = shape_numel(shape), bytes;
  // The byte count must not wrap either: 4 bytes of raw_data would else
  // "match" 2^62 + 1 floats.
  if (__builtin_mul_overflow(n, (int64_t)dtype_bytes(dt), &bytes))
    fail_invalid(what + " has shape " + shape_str(shape) + ": its size in bytes overflows 64 bits");
  if (t.has_raw_data()) {
    if ((int64_t)t.raw_data().size() != bytes)
      fail_invalid(what + ": raw_data has " + std::to_string(t.raw_data().size()) + " bytes, expected " +
                   std::to_string(bytes));
  } else if (typed_values(t, dt) != n) {
    fail_invalid(what + " has " + std::to_string(typed_values(t, dt)) + " values for shape " + shape_str(shape));
  }
  if (dt_out) *dt_out = dt;
  if (n_out) *n_out = n;
}

ConstP const_from_tensor_proto(const onnx::TensorProto &t) {
  DType dt;
  int64_t n;
  check_tensor_proto(t, &dt, &n);
  Shape shape(t.dims().begin(), t.dims().end());
  Bytes b;
  if (t.has_raw_data()) {
    b.assign(t.raw_data().begin(), t.raw_data().end());
    return make_const(dt, shape, std::move(b));
  }
  switch (dt) {
    case DType::F32: fill<float>(b, t.float_data(), n); break;
    case DType::F64: fill<double>(b, t.double_data(), n); break;
    case DType::I64: fill<int64_t>(b, t.int64_data(), n); break;
    case DType::I32: fill<int32_t>(b, t.int32_data(), n); break;
    case DType::I16: fill<int16_t>(b, t.int32_data(), n); break;
    case DType::U16:
    case DType::F16:
    case DType::BF16: fill<uint16_t>(b, t.int32_data(), n); break;
    case DType::I8: fill<int8_t>(b, t.int32_data(), n); break;
    case DType::U8:
    case DType::Bool: fill<uint8_t>(b, t.int32_data(), n); break;
    case DType::U32: fill<uint32_t>(b, t.uint64_data(), n); break;
    case DType::U64: fill<uint64_t>(b, t.uint64_data(), n); break;
    default: fail_unsupported("tensor '" + t.name() + "' has unsupported type " + dtype_name(dt));
  }
  return make_const(dt, shape, std::move(b));
}

ConstP read_tensor_file(const std::string &path, std::string *name) {
  std::ifstream f(path, std::ios::binary);
  if (!f) fail_usage("cannot open " + path);
  std::stringstream ss;
  ss << f.rdbuf();
  onnx::TensorProto t;
  if (!t.ParseFromString(ss.str())) fail_invalid(path + " is not a serialized TensorProto");
  if (name) *name = t.name();
  return const_from_tensor_proto(t);
}

onnx::AttributeProto attribute_proto(const std::string &name, const Attr &a) {
  onnx::AttributeProto p;
  p.set_name(name);
  switch (a.kind) {
    case Attr::Kind::Int:
      p.set_type(onnx::AttributeProto::INT);
      p.set_i(a.i);
      break;
    case Attr::Kind::Float:
      p.set_type(onnx::AttributeProto::FLOAT);
      p.set_f(a.f);
      break;
    case Attr::Kind::String:
      p.set_type(onnx::AttributeProto::STRING);
      p.set_s(a.s);
      break;
    case Attr::Kind::Ints:
      p.set_type(onnx::AttributeProto::INTS);
      for (auto v : a.ints) p.add_ints(v);
      break;
    case Attr::Kind::Floats:
      p.set_type(onnx::AttributeProto::FLOATS);
      for (auto v : a.floats) p.add_floats(v);
      break;
    case Attr::Kind::Strings:
      p.set_type(onnx::AttributeProto::STRINGS);
      for (auto &v : a.strings) p.add_strings(v);
      break;
    case Attr::Kind::Tensor: {
      p.set_type(onnx::AttributeProto::TENSOR);
      auto *t = p.mutable_t();
      t->set_data_type((int)a.t->dtype);
      for (auto d : a.t->shape) t->add_dims(d);
      t->set_raw_data(std::string(a.t->bytes.begin(), a.t->bytes.end()));
      break;
    }
    default: break;
  }
  return p;
}

}  // namespace tinyrt
