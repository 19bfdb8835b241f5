#include "ir/dtype.h"

namespace tinyrt {

int dtype_bytes(DType t) {
  switch (t) {
    case DType::F32: case DType::I32: case DType::U32: return 4;
    case DType::U8: case DType::I8: case DType::Bool: return 1;
    case DType::U16: case DType::I16: case DType::F16: return 2;
    case DType::I64: case DType::U64: case DType::F64: return 8;
    default: return 0;
  }
}

const char *dtype_name(DType t) {
  switch (t) {
    case DType::F32: return "float32";
    case DType::U8: return "uint8";
    case DType::I8: return "int8";
    case DType::U16: return "uint16";
    case DType::I16: return "int16";
    case DType::I32: return "int32";
    case DType::I64: return "int64";
    case DType::String: return "string";
    case DType::Bool: return "bool";
    case DType::F16: return "float16";
    case DType::F64: return "float64";
    case DType::U32: return "uint32";
    case DType::U64: return "uint64";
    default: return "undefined";
  }
}

bool dtype_is_float(DType t) { return t == DType::F32 || t == DType::F64 || t == DType::F16; }

bool dtype_is_int(DType t) {
  switch (t) {
    case DType::U8: case DType::I8: case DType::U16: case DType::I16:
    case DType::I32: case DType::I64: case DType::U32: case DType::U64: return true;
    default: return false;
  }
}

bool dtype_is_signed(DType t) {
  return t == DType::I8 || t == DType::I16 || t == DType::I32 || t == DType::I64 ||
         dtype_is_float(t);
}

bool dtype_supported(DType t) {
  return t != DType::Undefined && t != DType::String && t != DType::F16;
}

int64_t shape_numel(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}

std::string shape_str(const Shape &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + std::to_string(s[i]);
  return r + "]";
}

std::vector<int64_t> row_major_strides(const Shape &s) {
  std::vector<int64_t> st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

}  // namespace tinyrt
