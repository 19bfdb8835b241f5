#include "ir/program.h"

namespace tinyrt {

int Program::root(int v) const {
  for (auto it = alias.find(v); it != alias.end(); it = alias.find(v)) v = it->second;
  return v;
}

const std::vector<int> &Program::perm_of(int v) const {
  static const std::vector<int> none;
  return v < (int)perm.size() ? perm[v] : none;
}

std::vector<int64_t> Program::layout_strides(int v) const {
  const Shape &s = graph.v(v).shape;
  const std::vector<int> &p = perm_of(v);
  if (p.empty()) return row_major_strides(s);
  std::vector<int64_t> st(s.size());
  int64_t acc = 1;
  for (size_t k = p.size(); k-- > 0;) {
    st[p[k]] = acc;
    acc *= s[p[k]];
  }
  return st;
}

const char *kernel_family(KernelKind k) {
  switch (k) {
    case KernelKind::Gemm: return "gemm";
    case KernelKind::Depthwise: return "depthwise";
    case KernelKind::Recurrent: return "recurrent";
    default: return "loop";
  }
}

bool perm_is_row_major(const std::vector<int> &perm, const Shape &shape) {
  int last = -1;
  for (int a : perm) {
    if (shape[a] == 1) continue;
    if (a < last) return false;
    last = a;
  }
  return true;
}

}  // namespace tinyrt
