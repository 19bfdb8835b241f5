#include "ir/text.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <set>

#include "ir/subgraph.h"

namespace tinyrt {

namespace {

// Text constants are for tests: a cap far below Limits::max_tensor_elements
// keeps `random(1)` over a huge shape from allocating gigabytes.
constexpr int64_t kMaxTextElements = int64_t(1) << 24;

struct DTypeName {
  DType t;
  const char *name;
};
const DTypeName kDTypeNames[] = {
    {DType::F32, "f32"}, {DType::F64, "f64"}, {DType::F16, "f16"},   {DType::BF16, "bf16"},     {DType::I8, "i8"},
    {DType::I16, "i16"}, {DType::I32, "i32"}, {DType::I64, "i64"},   {DType::U8, "u8"},         {DType::U16, "u16"},
    {DType::U32, "u32"}, {DType::U64, "u64"}, {DType::Bool, "bool"}, {DType::String, "string"},
};

const char *short_dtype(DType t) {
  for (auto &d : kDTypeNames)
    if (d.t == t) return d.name;
  return "undefined";
}

bool dtype_from_text(const std::string &s, DType *t) {
  for (auto &d : kDTypeNames)
    if (s == d.name || s == dtype_name(d.t)) {
      *t = d.t;
      return true;
    }
  if (s == "undefined") {
    *t = DType::Undefined;
    return true;
  }
  return false;
}

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '/' || c == '-' || c == '+' || c == '~';
}

// Words that start a statement or stand for something where a name may
// also stand: a name spelled so is quoted.
bool is_reserved(const std::string &s) {
  static const std::set<std::string> kReserved = {"graph", "input", "const",   "output", "effect",
                                                  "guard", "opset", "domains", "_"};
  return kReserved.count(s) != 0;
}

std::string quote(const std::string &s) {
  std::string r = "\"";
  for (char c : s) {
    unsigned char u = (unsigned char)c;
    if (c == '"' || c == '\\') {
      r += '\\';
      r += c;
    } else if (c == '\n') {
      r += "\\n";
    } else if (c == '\t') {
      r += "\\t";
    } else if (c == '\r') {
      r += "\\r";
    } else if (u < 0x20 || u == 0x7f) {
      const char *hex = "0123456789abcdef";
      r += "\\x";
      r += hex[u >> 4];
      r += hex[u & 15];
    } else {
      r += c;  // bytes of UTF-8 names stay readable
    }
  }
  return r + "\"";
}

std::string name_text(const std::string &s) {
  bool bare = !s.empty() && !is_reserved(s);
  for (char c : s) bare = bare && is_word_char(c);
  return bare ? s : quote(s);
}

// Shortest forms that read back to the same bits (std::to_chars).
std::string float_text(float f) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, f);
  return std::string(buf, r.ptr);
}
std::string double_text(double d) {
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  return std::string(buf, r.ptr);
}

// A float attribute must not read back as an int: 1 is written 1.0.
std::string float_attr_text(float f) {
  std::string s = float_text(f);
  if (s.find_first_of(".en") == std::string::npos) s += ".0";
  return s;
}

bool parse_int(const std::string &s, int64_t *v) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}
bool parse_uint(const std::string &s, uint64_t *v) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}
// Digits with an optional '-': an integer, never read as a float when it
// overflows int64.
bool looks_int(const std::string &s) {
  size_t b = !s.empty() && s[0] == '-';
  if (b >= s.size()) return false;
  for (size_t i = b; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}
template <class F>
bool parse_real(const std::string &s, F *v) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), *v);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

std::string shape_text(const Shape &s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? "," : "") + (s[i] == -1 ? std::string("?") : std::to_string(s[i]));
  return r + "]";
}

std::string element_text(const ConstData &c, int64_t i) {
  switch (c.dtype) {
    case DType::F32: return float_text(c.as<float>()[i]);
    case DType::F64: return double_text(c.as<double>()[i]);
    case DType::F16:
    case DType::BF16: return float_text((float)c.get_f(i));
    case DType::Bool: return c.as<uint8_t>()[i] ? "true" : "false";
    case DType::U64: return std::to_string(c.as<uint64_t>()[i]);
    default: return std::to_string(c.get_i(i));
  }
}

std::string values_text(const ConstData &c) {
  if (dtype_bytes(c.dtype) == 0) fail_internal(std::string("print_graph: a constant of type ") + dtype_name(c.dtype));
  int64_t n = shape_numel(c.shape);
  if ((int64_t)c.bytes.size() != n * dtype_bytes(c.dtype)) fail_internal("print_graph: a constant's byte size");
  std::string r = "[";
  for (int64_t i = 0; i < n; ++i) r += (i ? ", " : "") + element_text(c, i);
  return r + "]";
}

std::string tensor_type_text(const ConstData &c) { return std::string(short_dtype(c.dtype)) + shape_text(c.shape); }

std::string join(const std::vector<std::string> &v, const char *sep) {
  std::string r;
  for (size_t i = 0; i < v.size(); ++i) r += (i ? sep : "") + v[i];
  return r;
}

// ---------------------------------------------------------------- printer

class Printer {
 public:
  explicit Printer(const Graph &g) : g_(g) {}

  std::string run() {
    label_values();
    out_ = "graph";
    if (!g_.name.empty()) out_ += " " + name_text(g_.name);
    out_ += " opset " + std::to_string(g_.opset);
    if (!g_.domain_opsets.empty()) {
      std::vector<std::string> doms;
      for (auto &kv : g_.domain_opsets)
        doms.push_back((kv.first.empty() ? std::string("ai.onnx") : name_text(kv.first)) + "=" +
                       std::to_string(kv.second));
      out_ += " domains " + join(doms, ",");
    }
    out_ += "\n";
    for (int id : g_.inputs) {
      const Value &v = g_.v(id);
      out_ += "input " + ref(id) + ": " + short_dtype(v.dtype) + shape_text(v.shape) + "\n";
    }
    for (size_t id = 0; id < g_.values.size(); ++id) {
      const Value &v = g_.values[id];
      if (v.data && !input_[id] && !produced_[id])
        out_ += "const " + ref((int)id) + ": " + tensor_type_text(*v.data) + " = " + values_text(*v.data) + "\n";
    }
    int unnamed = 0;
    for (const Node &n : g_.nodes) {
      std::vector<std::string> outs, ins;
      for (int o : n.out) outs.push_back(o < 0 ? "_" : ref(o) + declared_type(o));
      for (int i : n.in) ins.push_back(i < 0 ? "" : ref(i));
      std::string suffix;
      auto dom = g_.domain_opsets.find(n.domain);
      if (n.opset != (dom != g_.domain_opsets.end() ? dom->second : g_.opset)) suffix += "@" + std::to_string(n.opset);
      if (n.name == n.op + "_" + std::to_string(unnamed))
        ++unnamed;  // the name the parser gives an unnamed node
      else
        suffix += "[" + name_text(n.name) + "]";
      out_ += call_text(outs, n.domain, n.op, suffix, ins, n.attrs, 0);
      if (n.guard >= 0) out_ += " guard " + std::to_string(n.guard);
      out_ += "\n";
    }
    if (!g_.outputs.empty()) out_ += "output " + refs(g_.outputs) + "\n";
    if (!g_.effects.empty()) out_ += "effect " + refs(g_.effects) + "\n";
    for (size_t i = 0; i < g_.guards.size(); ++i) {
      const Guard &gd = g_.guards[i];
      out_ += "guard " + std::to_string(i) + ":";
      if (gd.cond >= 0) out_ += " cond=" + ref(gd.cond);
      out_ += std::string(" expect=") + (gd.expect ? "true" : "false");
      if (gd.eff >= 0) out_ += " eff=" + ref(gd.eff);
      out_ += std::string(" eff_expect=") + (gd.eff_expect ? "true" : "false");
      if (gd.parent >= 0) out_ += " parent=" + std::to_string(gd.parent);
      if (!gd.what.empty()) out_ += " what=" + quote(gd.what);
      if (!gd.failure.empty()) out_ += " failure=" + quote(gd.failure);
      out_ += "\n";
    }
    return out_;
  }

 private:
  const Graph &g_;
  std::string out_;
  std::vector<std::string> label_;
  std::vector<bool> input_, produced_;

  // The printed name of each value the text defines: a name several of
  // them share stays with the latest (highest id), the name a reference in
  // a subgraph resolves to; the others become NAME~K.
  void label_values() {
    size_t n = g_.values.size();
    input_.assign(n, false);
    produced_.assign(n, false);
    for (int id : g_.inputs)
      if (id >= 0 && (size_t)id < n) input_[id] = true;
    for (const Node &nd : g_.nodes)
      for (int o : nd.out)
        if (o >= 0 && (size_t)o < n) produced_[o] = true;
    std::map<std::string, int> latest;
    std::set<std::string> taken;
    for (size_t id = 0; id < n; ++id) {
      label_.push_back(g_.values[id].name);
      if (defined(id)) {
        latest[g_.values[id].name] = (int)id;
        taken.insert(g_.values[id].name);
      }
    }
    std::map<std::string, int> next_k;
    for (size_t id = 0; id < n; ++id) {
      const std::string &name = g_.values[id].name;
      if (!defined(id) || latest[name] == (int)id) continue;
      std::string alt;
      do alt = name + "~" + std::to_string(++next_k[name]);
      while (taken.count(alt));
      taken.insert(alt);
      label_[id] = alt;
    }
  }
  bool defined(size_t id) const { return input_[id] || produced_[id] || g_.values[id].data; }

  std::string ref(int id) const {
    if (id < 0 || (size_t)id >= label_.size()) return quote("<no value " + std::to_string(id) + ">");
    return name_text(label_[id]);
  }
  std::string refs(const std::vector<int> &ids) const {
    std::vector<std::string> r;
    for (int id : ids) r.push_back(ref(id));
    return join(r, ", ");
  }

  // ": TYPE[SHAPE]" for a node output the model declares or inference
  // typed, else "".
  std::string declared_type(int id) const {
    if (id < 0 || (size_t)id >= g_.values.size()) return "";
    auto md = g_.model_declared.find(id);
    if (md != g_.model_declared.end())
      return std::string(": ") + short_dtype(md->second.dtype) +
             (md->second.has_shape ? shape_text(md->second.dims) : "");
    auto d = g_.declared.find(id);
    if (d != g_.declared.end()) return std::string(": ") + short_dtype(d->second.first) + shape_text(d->second.second);
    const Value &v = g_.v(id);
    if (v.dtype == DType::Undefined && !v.shape_known) return "";
    return std::string(": ") + short_dtype(v.dtype) + (v.shape_known ? shape_text(v.shape) : "");
  }

  // "OUTS = DOMAIN::OP<suffix>(INS) {ATTRS}" at `indent` (ins: "" omitted).
  std::string call_text(const std::vector<std::string> &outs, const std::string &domain, const std::string &op,
                        const std::string &suffix, const std::vector<std::string> &ins,
                        const std::map<std::string, Attr> &attrs, int indent) {
    std::string s(indent, ' ');
    if (!outs.empty()) s += join(outs, ", ") + " = ";
    if (!domain.empty()) s += name_text(domain) + "::";
    s += name_text(op) + suffix + "(";
    // A lone omitted input is `_`: an empty slot would read as no input.
    s += ins.size() == 1 && ins[0].empty() ? "_" : join(ins, ", ");
    s += ")";
    if (!attrs.empty()) {
      std::vector<std::string> as;
      for (auto &kv : attrs) as.push_back(name_text(kv.first) + "=" + attr_text(kv.second, indent));
      s += " {" + join(as, ", ") + "}";
    }
    return s;
  }

  std::string attr_text(const Attr &a, int indent) {
    switch (a.kind) {
      case Attr::Kind::Int: return std::to_string(a.i);
      case Attr::Kind::Float: return float_attr_text(a.f);
      case Attr::Kind::String: return quote(a.s);
      case Attr::Kind::Ints: {
        std::vector<std::string> v;
        for (int64_t x : a.ints) v.push_back(std::to_string(x));
        return v.empty() ? "ints[]" : "[" + join(v, ",") + "]";
      }
      case Attr::Kind::Floats: {
        std::vector<std::string> v;
        for (float x : a.floats) v.push_back(float_attr_text(x));
        return v.empty() ? "floats[]" : "[" + join(v, ",") + "]";
      }
      case Attr::Kind::Strings: {
        std::vector<std::string> v;
        for (auto &x : a.strings) v.push_back(quote(x));
        return v.empty() ? "strings[]" : "[" + join(v, ",") + "]";
      }
      case Attr::Kind::Tensor:
        if (!a.t) fail_internal("print_graph: a tensor attribute without a tensor");
        return "tensor " + tensor_type_text(*a.t) + " " + values_text(*a.t);
      case Attr::Kind::Graph:
        return a.graph ? subgraph_text(*a.graph, indent) : "graph {\n" + std::string(indent, ' ') + "}";
      case Attr::Kind::Other: return "other";
    }
    return "other";
  }

  std::string subgraph_text(const Subgraph &sub, int indent) {
    std::string pad(indent + 2, ' ');
    std::string s = "graph";
    if (!sub.name.empty()) s += " " + name_text(sub.name);
    s += " {\n";
    auto names = [](const std::vector<std::string> &v) {
      std::vector<std::string> r;
      for (auto &x : v) r.push_back(name_text(x));
      return join(r, ", ");
    };
    if (!sub.inputs.empty()) s += pad + "input " + names(sub.inputs) + "\n";
    for (auto &init : sub.initializers) {
      if (!init.second) fail_internal("print_graph: a subgraph initializer without a tensor");
      s += pad + "const " + name_text(init.first) + ": " + tensor_type_text(*init.second) + " = " +
           values_text(*init.second) + "\n";
    }
    for (auto &st : sub.steps) {
      std::vector<std::string> outs, ins;
      for (auto &o : st.out) outs.push_back(o.empty() ? "_" : name_text(o));
      for (auto &i : st.in) ins.push_back(i.empty() ? "" : name_text(i));
      std::string suffix = st.name.empty() ? "" : "[" + name_text(st.name) + "]";
      s += call_text(outs, st.domain, st.op, suffix, ins, st.attrs, indent + 2) + "\n";
    }
    if (!sub.outputs.empty()) s += pad + "output " + names(sub.outputs) + "\n";
    return s + std::string(indent, ' ') + "}";
  }
};

// ---------------------------------------------------------------- lexer

struct Token {
  enum Kind { Word, String, Punct, Newline, End } kind;
  std::string text;  // the word, the string's contents, the punctuation
  int line;
};

[[noreturn]] void fail_line(int line, const std::string &m) { fail_invalid("line " + std::to_string(line) + ": " + m); }

std::string char_text(char c) {
  unsigned char u = (unsigned char)c;
  if (u > 0x20 && u < 0x7f) return std::string("'") + c + "'";
  const char *hex = "0123456789abcdef";
  return std::string("byte 0x") + hex[u >> 4] + hex[u & 15];
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::vector<Token> lex(const std::string &s) {
  std::vector<Token> toks;
  int line = 1, last_line = 1;
  size_t i = 0, n = s.size();
  while (i < n) {
    char c = s[i];
    if (c == '\n') {
      toks.push_back({Token::Newline, "", line++});
      ++i;
    } else if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
    } else if (c == '#') {
      while (i < n && s[i] != '\n') ++i;
    } else if (c == '"') {
      std::string v;
      for (++i;; ++i) {
        if (i >= n || s[i] == '\n') fail_line(line, "unterminated string (a closing '\"' is missing)");
        if (s[i] == '"') break;
        if (s[i] != '\\') {
          v += s[i];
          continue;
        }
        char e = i + 1 < n ? s[++i] : '\0';
        if (e == 'n')
          v += '\n';
        else if (e == 't')
          v += '\t';
        else if (e == 'r')
          v += '\r';
        else if (e == '"' || e == '\\')
          v += e;
        else if (e == 'x' && i + 2 < n && hex_digit(s[i + 1]) >= 0 && hex_digit(s[i + 2]) >= 0) {
          v += (char)(hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2]));
          i += 2;
        } else {
          fail_line(line, "bad escape in a string (\\\" \\\\ \\n \\t \\r \\xHH)");
        }
      }
      ++i;
      toks.push_back({Token::String, v, line});
      last_line = line;
    } else if (is_word_char(c)) {
      size_t b = i;
      while (i < n && is_word_char(s[i])) ++i;
      toks.push_back({Token::Word, s.substr(b, i - b), line});
      last_line = line;
    } else if (c == ':' && i + 1 < n && s[i + 1] == ':') {
      toks.push_back({Token::Punct, "::", line});
      last_line = line;
      i += 2;
    } else if (std::strchr("()[]{},=:@?", c) && c != '\0') {
      toks.push_back({Token::Punct, std::string(1, c), line});
      last_line = line;
      ++i;
    } else {
      fail_line(line, "unexpected character " + char_text(c));
    }
  }
  // The end is reported on the last line that holds something: where a
  // truncated statement stops.
  toks.push_back({Token::End, "", last_line});
  return toks;
}

// ---------------------------------------------------------------- parser

uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Writes the element `w` of type `t` at `p`; false when `w` is not one.
bool put_element(DType t, const std::string &w, uint8_t *p) {
  switch (t) {
    case DType::F32:
    case DType::F16:
    case DType::BF16: {
      float f;
      if (!parse_real(w, &f)) return false;
      if (t == DType::F32) {
        std::memcpy(p, &f, 4);
      } else {
        uint16_t h = t == DType::F16 ? float_to_half(f) : float_to_bf16(f);
        std::memcpy(p, &h, 2);
      }
      return true;
    }
    case DType::F64: {
      double d;
      if (!parse_real(w, &d)) return false;
      std::memcpy(p, &d, 8);
      return true;
    }
    case DType::Bool:
      if (w != "true" && w != "false" && w != "1" && w != "0") return false;
      *p = w == "true" || w == "1";
      return true;
    case DType::U64: {
      uint64_t u;
      if (!parse_uint(w, &u)) return false;
      std::memcpy(p, &u, 8);
      return true;
    }
    default: break;
  }
  int64_t v;
  if (!parse_int(w, &v)) return false;
  int bytes = dtype_bytes(t);
  if (dtype_is_signed(t)) {
    int64_t lim = bytes == 8 ? INT64_MAX : (int64_t(1) << (8 * bytes - 1)) - 1;
    if (v > lim || v < -lim - 1) return false;
  } else if (v < 0 || (bytes < 8 && v >= (int64_t(1) << (8 * bytes)))) {
    return false;
  }
  std::memcpy(p, &v, (size_t)bytes);  // the low bytes: little-endian
  return true;
}

// A filler's element i of type t, from the generator's next number.
void put_random(DType t, uint64_t r, uint8_t *p) {
  if (dtype_is_float(t)) {
    // 24 random bits: exact in f32 and f64, rounded to f16 and bf16.
    float f = (float)(r >> 40) / 8388608.0f - 1.0f;
    double d = f;
    uint16_t h = t == DType::F16 ? float_to_half(f) : float_to_bf16(f);
    std::memcpy(p,
                t == DType::F32   ? (const void *)&f
                : t == DType::F64 ? (const void *)&d
                                  : (const void *)&h,
                (size_t)dtype_bytes(t));
  } else if (t == DType::Bool) {
    *p = (uint8_t)(r >> 63);
  } else {
    int64_t v = dtype_is_signed(t) ? (int64_t)(r >> 60) - 8 : (int64_t)(r >> 60);
    std::memcpy(p, &v, (size_t)dtype_bytes(t));
  }
}

class Parser {
 public:
  explicit Parser(std::vector<Token> toks) : t_(std::move(toks)) {}

  Graph run() {
    skip_newlines();
    if (!word("graph")) expected("'graph' (the first line names the graph and its opset)");
    header();
    end_statement(false);
    for (;;) {
      skip_newlines();
      if (cur().kind == Token::End) break;
      statement();
      end_statement(false);
    }
    if (g_.outputs.empty()) fail_line(cur().line, "the graph has no outputs (an 'output' line)");
    finish_guards();
    return std::move(g_);
  }

 private:
  // Names a subgraph defines (inputs, constants, its nodes' outputs so
  // far); it also sees its enclosing subgraphs' and the graph's values
  // defined before it.
  struct Scope {
    const Scope *parent = nullptr;
    std::map<std::string, int> lines;  // name -> line of its definition
  };
  struct Def {
    int id, line;
  };
  struct NodeText {
    int line = 0;
    std::string domain, op, name;
    bool named = false;
    int64_t opset = -1;
    std::vector<std::string> in, out;  // "" = omitted
    std::vector<int> out_line;
    std::map<int, Graph::Declaration> decl;  // by output index
    std::map<std::string, Attr> attrs;
    int64_t guard = -1;
  };
  struct GuardText {
    int line;
    std::string cond, eff;
  };

  std::vector<Token> t_;
  size_t p_ = 0;
  Graph g_;
  std::map<std::string, Def> ids_;
  int unnamed_ = 0;
  std::vector<GuardText> guard_text_;
  std::vector<std::pair<size_t, int>> node_guard_lines_;  // node index, line

  const Token &cur() const { return t_[p_]; }
  const Token &ahead(size_t k) const { return t_[std::min(p_ + k, t_.size() - 1)]; }
  void next() {
    if (p_ + 1 < t_.size()) ++p_;
  }
  bool punct(const char *s, size_t k = 0) const { return ahead(k).kind == Token::Punct && ahead(k).text == s; }
  bool word(const char *s, size_t k = 0) const { return ahead(k).kind == Token::Word && ahead(k).text == s; }
  void skip_newlines() {
    while (cur().kind == Token::Newline) next();
  }

  static std::string describe(const Token &t) {
    switch (t.kind) {
      case Token::Word: return "'" + t.text + "'";
      case Token::String: return "string " + quote(t.text);
      case Token::Punct: return "'" + t.text + "'";
      case Token::Newline: return "end of line";
      case Token::End: return "end of text";
    }
    return "?";
  }
  [[noreturn]] void expected(const std::string &what) const {
    fail_line(cur().line, "expected " + what + ", found " + describe(cur()));
  }
  void expect(const char *p, const std::string &what) {
    if (!punct(p)) expected(what);
    next();
  }
  void end_statement(bool in_subgraph) {
    if (cur().kind == Token::Newline) {
      next();
    } else if (cur().kind != Token::End && !(in_subgraph && punct("}"))) {
      expected("end of line");
    }
  }

  std::string name(const std::string &what) {
    const Token &t = cur();
    if (t.kind != Token::Word && t.kind != Token::String) expected(what);
    if (t.text.empty()) fail_line(t.line, "expected " + what + ", found an empty name");
    std::string r = t.text;
    next();
    return r;
  }
  int64_t integer(const std::string &what) {
    int64_t v;
    if (cur().kind != Token::Word || !parse_int(cur().text, &v)) expected(what);
    next();
    return v;
  }
  bool boolean(const std::string &what) {
    if (!word("true") && !word("false")) expected(what);
    bool b = word("true");
    next();
    return b;
  }

  DType dtype(bool declaration) {
    const Token &t = cur();
    DType d;
    if (t.kind != Token::Word) expected("an element type (f32, i64, ...)");
    if (!dtype_from_text(t.text, &d))
      fail_line(t.line, "unknown element type '" + t.text + "' (f32 f64 f16 bf16 i8 i16 i32 i64 u8 u16 u32 u64 bool)");
    if (!declaration && dtype_bytes(d) == 0)
      fail_line(t.line, std::string("a tensor of type ") + t.text + " cannot be given here (numeric types and bool)");
    next();
    return d;
  }
  // [d, d, ...]; `?` (-1) only in declarations.
  Shape shape(bool allow_unknown) {
    expect("[", "'[' starting a shape");
    Shape s;
    if (punct("]")) {
      next();
      return s;
    }
    for (;;) {
      if (allow_unknown && punct("?")) {
        s.push_back(-1);
        next();
      } else {
        const Token &t = cur();
        int64_t d;
        if (t.kind != Token::Word || !parse_int(t.text, &d))
          expected(allow_unknown ? "a dimension (an integer >= 0 or ?)" : "a dimension (an integer >= 0)");
        if (d < 0) fail_line(t.line, "dimension " + t.text + " is negative");
        s.push_back(d);
        next();
      }
      if (punct("]")) break;
      expect(",", "',' or ']' in a shape");
    }
    next();
    return s;
  }
  // Elements of a tensor of `s`, within the text's cap.
  int64_t checked_numel(const Shape &s, int line, const std::string &what) {
    int64_t n = 1;
    for (int64_t d : s)
      if (__builtin_mul_overflow(n, d, &n) || n > kMaxTextElements)
        fail_line(line, what + " has shape " + shape_text(s) + ": more than the " + std::to_string(kMaxTextElements) +
                            " elements a constant in text may hold");
    return n;
  }

  // VALUES of a tensor of type `t` and shape `s`.
  ConstP tensor_values(DType t, const Shape &s, int line, const std::string &what) {
    int64_t n = checked_numel(s, line, what);
    size_t eb = (size_t)dtype_bytes(t);
    Bytes bytes;
    if (punct("[")) {
      int start = cur().line;
      next();
      skip_newlines();
      int64_t count = 0;
      if (!punct("]")) {
        for (;;) {
          skip_newlines();
          const Token &e = cur();
          if (e.kind != Token::Word) expected(std::string("a value of type ") + short_dtype(t));
          if (count == n)
            fail_line(e.line, what + " has shape " + shape_text(s) + ": more than its " + std::to_string(n) +
                                  " values are listed");
          bytes.resize(bytes.size() + eb);
          if (!put_element(t, e.text, bytes.data() + bytes.size() - eb))
            fail_line(e.line, "'" + e.text + "' is not a value of type " + short_dtype(t));
          ++count;
          next();
          skip_newlines();
          if (punct("]")) break;
          expect(",", "',' or ']' in a list of values");
        }
      }
      next();
      if (count != n)
        fail_line(start, what + " has shape " + shape_text(s) + " (" + std::to_string(n) + " values) but " +
                             std::to_string(count) + " are listed");
    } else if (word("random") || word("fill")) {
      bool random = word("random");
      next();
      expect("(", "'('");
      bytes.resize((size_t)n * eb);
      if (random) {
        uint64_t state = (uint64_t)integer("a seed (an integer)");
        for (int64_t i = 0; i < n; ++i) put_random(t, splitmix64(state), bytes.data() + i * eb);
      } else {
        const Token &e = cur();
        uint8_t one[8];
        if (e.kind != Token::Word || !put_element(t, e.text, one))
          expected(std::string("a value of type ") + short_dtype(t));
        next();
        for (int64_t i = 0; i < n; ++i) std::memcpy(bytes.data() + i * eb, one, eb);
      }
      expect(")", "')'");
    } else {
      expected("values: [v, ...], random(SEED) or fill(V)");
    }
    return make_const(t, s, std::move(bytes));
  }

  bool visible(const std::string &n, const Scope *s) const {
    for (; s; s = s->parent)
      if (s->lines.count(n)) return true;
    return ids_.count(n) != 0;
  }
  // A name read at the current token, which must be defined already.
  std::string use(const Scope *scope, const std::string &what) {
    int line = cur().line;
    std::string n = name(what);
    if (!visible(n, scope)) fail_line(line, "unknown value '" + n + "' (not defined before its use)");
    return n;
  }
  int top_id(const std::string &n) const { return ids_.at(n).id; }
  void define_top(const std::string &n, int line, int id) { ids_[n] = {id, line}; }
  void check_new_top(const std::string &n, int line) const {
    auto it = ids_.find(n);
    if (it != ids_.end())
      fail_line(line, "value '" + n + "' is already defined on line " + std::to_string(it->second.line));
  }
  void define_local(Scope &sc, const std::string &n, int line) {
    auto it = sc.lines.find(n);
    if (it != sc.lines.end())
      fail_line(line, "value '" + n + "' is already defined in this subgraph on line " + std::to_string(it->second));
    sc.lines[n] = line;
  }

  void header() {
    next();  // graph
    if ((cur().kind == Token::Word && !word("opset") && !word("domains")) || cur().kind == Token::String)
      g_.name = name("the graph's name");
    if (word("opset")) {
      next();
      int64_t v = integer("the opset (an integer)");
      if (v < 0 || v > INT32_MAX) fail_line(cur().line, "opset " + std::to_string(v) + " is out of range");
      g_.opset = (int)v;
    }
    if (word("domains")) {
      next();
      for (;;) {
        int line = cur().line;
        std::string d = name("a domain");
        if (d == "ai.onnx") d = "";
        expect("=", "'=' and the domain's opset");
        int64_t v = integer("the domain's opset (an integer)");
        if (v < 0 || v > INT32_MAX) fail_line(line, "opset " + std::to_string(v) + " is out of range");
        if (!g_.domain_opsets.emplace(d, (int)v).second)
          fail_line(line, "domain " + (d.empty() ? std::string("ai.onnx") : d) + " is listed twice");
        if (!punct(",")) break;
        next();
      }
    }
  }

  void statement() {
    int line = cur().line;
    if (word("graph")) fail_line(line, "the graph is named once, on its first line");
    if (word("input")) {
      next();
      int nl = cur().line;
      std::string n = name("an input's name");
      check_new_top(n, nl);
      expect(":", "':' and the input's type");
      DType t = dtype(false);
      Shape s = shape(false);
      int64_t numel = 1;
      for (int64_t d : s)
        if (__builtin_mul_overflow(numel, d, &numel) || numel > g_.limits.max_tensor_elements)
          fail_line(nl, "input '" + n + "' has shape " + shape_text(s) + ": more than the " +
                            std::to_string(g_.limits.max_tensor_elements) + " elements tinyrt allows per tensor");
      int id = g_.add_value(n, t, s);
      define_top(n, nl, id);
      g_.inputs.push_back(id);
    } else if (word("const")) {
      next();
      int nl = cur().line;
      std::string n;
      ConstP c = constant(&n);
      check_new_top(n, nl);
      define_top(n, nl, g_.add_const(n, c));
    } else if (word("output") || word("effect")) {
      std::vector<int> &list = word("output") ? g_.outputs : g_.effects;
      next();
      for (;;) {
        list.push_back(top_id(use(nullptr, "a value's name")));
        if (!punct(",")) break;
        next();
      }
    } else if (word("guard")) {
      guard();
    } else {
      node();
    }
  }

  // NAME: TYPE[SHAPE] = VALUES, after `const`.
  ConstP constant(std::string *n) {
    int line = cur().line;
    *n = name("a constant's name");
    expect(":", "':' and the constant's type");
    DType t = dtype(false);
    Shape s = shape(false);
    expect("=", "'=' and the constant's values");
    return tensor_values(t, s, line, "constant '" + *n + "'");
  }

  // A node statement. Its inputs are resolved in `scope` (null: the
  // graph) as they are read; its outputs are the caller's to define.
  NodeText node_text(const Scope *scope, int depth) {
    NodeText nt;
    nt.line = cur().line;
    // Outputs come first unless the statement starts with the op.
    bool has_outs = word("_") || punct(",", 1) || punct("=", 1) || punct(":", 1);
    if (has_outs) {
      for (;;) {
        nt.out_line.push_back(cur().line);
        if (word("_")) {
          nt.out.push_back("");
          next();
        } else {
          nt.out.push_back(name("an output's name"));
          if (punct(":")) {
            next();
            Graph::Declaration d;
            d.dtype = dtype(true);
            if (punct("[")) {
              d.has_shape = true;
              d.dims = shape(true);
            }
            nt.decl[(int)nt.out.size() - 1] = d;
          }
        }
        if (!punct(",")) break;
        next();
      }
      expect("=", "',' or '=' after the node's outputs");
    }
    nt.op = name("an op name");
    if (punct("::")) {
      next();
      nt.domain = nt.op;
      nt.op = name("an op name after '::'");
    }
    if (punct("@")) {
      next();
      nt.opset = integer("the node's opset (an integer)");
      if (nt.opset < 0 || nt.opset > INT32_MAX)
        fail_line(nt.line, "opset " + std::to_string(nt.opset) + " is out of range");
    }
    if (punct("[")) {
      next();
      if (cur().kind != Token::Word && cur().kind != Token::String) expected("the node's name");
      nt.name = cur().text;  // may be empty, quoted
      nt.named = true;
      next();
      expect("]", "']' after the node's name");
    }
    expect("(", "'(' and the node's inputs");
    skip_newlines();
    if (punct(")")) {
      next();
    } else {
      for (;;) {
        skip_newlines();
        if (punct(",") || punct(")")) {
          nt.in.push_back("");  // an empty slot
        } else if (word("_")) {
          nt.in.push_back("");
          next();
        } else {
          nt.in.push_back(use(scope, "an input's name, ',' or ')'"));
        }
        skip_newlines();
        if (punct(")")) break;
        expect(",", "',' or ')' in the node's inputs");
      }
      next();
    }
    if (punct("{")) nt.attrs = attrs(scope, depth);
    if (word("guard")) {
      next();
      nt.guard = integer("a guard's number");
      if (nt.guard < 0 || nt.guard > INT32_MAX)
        fail_line(nt.line, "guard " + std::to_string(nt.guard) + " is out of range");
    }
    return nt;
  }

  void node() {
    NodeText nt = node_text(nullptr, 0);
    Node n;
    n.name = nt.named ? nt.name : nt.op + "_" + std::to_string(unnamed_++);
    n.op = nt.op;
    n.domain = nt.domain;
    auto dom = g_.domain_opsets.find(n.domain);
    n.opset = nt.opset >= 0 ? (int)nt.opset : dom != g_.domain_opsets.end() ? dom->second : g_.opset;
    n.attrs = std::move(nt.attrs);
    for (auto &in : nt.in) n.in.push_back(in.empty() ? -1 : top_id(in));
    for (size_t i = 0; i < nt.out.size(); ++i) {
      if (nt.out[i].empty()) {
        n.out.push_back(-1);
        continue;
      }
      check_new_top(nt.out[i], nt.out_line[i]);
      int id = g_.add_value(nt.out[i], DType::Undefined, {});
      g_.v(id).shape_known = false;  // inference sets it
      define_top(nt.out[i], nt.out_line[i], id);
      n.out.push_back(id);
      auto d = nt.decl.find((int)i);
      if (d == nt.decl.end()) continue;
      // As the importer records value_info: the declared type on the value
      // (for messages before inference) and, for ops outside ai.onnx, a
      // static shape their inference takes.
      g_.model_declared[id] = d->second;
      g_.v(id).dtype = d->second.dtype;
      bool known = d->second.has_shape && dtype_supported(d->second.dtype);
      for (int64_t x : d->second.dims) known = known && x >= 0;
      if (known && !n.domain.empty() && n.domain != "ai.onnx") g_.declared[id] = {d->second.dtype, d->second.dims};
    }
    n.guard = (int)nt.guard;
    if (nt.guard >= 0) node_guard_lines_.push_back({g_.nodes.size(), nt.line});
    g_.nodes.push_back(std::move(n));
  }

  // {NAME=VALUE, ...}
  std::map<std::string, Attr> attrs(const Scope *scope, int depth) {
    std::map<std::string, Attr> r;
    expect("{", "'{'");
    skip_newlines();
    if (punct("}")) {
      next();
      return r;
    }
    for (;;) {
      skip_newlines();
      int line = cur().line;
      std::string n = name("an attribute's name");
      if (r.count(n)) fail_line(line, "attribute '" + n + "' is given twice");
      expect("=", "'=' after attribute '" + n + "'");
      skip_newlines();
      r[n] = attr_value(scope, depth);
      skip_newlines();
      if (punct("}")) break;
      expect(",", "',' or '}' after attribute '" + n + "'");
    }
    next();
    return r;
  }

  Attr attr_value(const Scope *scope, int depth) {
    Attr a;
    const Token &t = cur();
    if (t.kind == Token::String) {
      a.kind = Attr::Kind::String;
      a.s = t.text;
      next();
      return a;
    }
    if (punct("[")) return attr_list(Attr::Kind::Other);
    if (t.kind == Token::Word) {
      if (punct("[", 1) && (t.text == "ints" || t.text == "floats" || t.text == "strings")) {
        Attr::Kind k = t.text == "ints"     ? Attr::Kind::Ints
                       : t.text == "floats" ? Attr::Kind::Floats
                                            : Attr::Kind::Strings;
        next();
        return attr_list(k);
      }
      if (t.text == "tensor") {
        int line = t.line;
        next();
        a.kind = Attr::Kind::Tensor;
        DType dt = dtype(false);
        Shape s = shape(false);
        a.t = tensor_values(dt, s, line, "a tensor attribute");
        return a;
      }
      if (t.text == "graph") {
        next();
        a.kind = Attr::Kind::Graph;
        a.graph = subgraph(scope, depth + 1);
        return a;
      }
      if (t.text == "other") {
        next();
        a.kind = Attr::Kind::Other;
        return a;
      }
      if (looks_int(t.text)) {
        if (!parse_int(t.text, &a.i)) fail_line(t.line, "integer " + t.text + " is out of the range of int64");
        a.kind = Attr::Kind::Int;
        next();
        return a;
      }
      if (parse_real(t.text, &a.f)) {
        a.kind = Attr::Kind::Float;
        next();
        return a;
      }
    }
    expected("an attribute value (3, 0.5, \"s\", [...], ints[], tensor ..., graph {...})");
  }

  // [e, ...] of kind `k`, or of the kind its elements have (k == Other).
  Attr attr_list(Attr::Kind k) {
    int line = cur().line;
    next();  // [
    std::vector<Token> elems;
    skip_newlines();
    if (!punct("]")) {
      for (;;) {
        skip_newlines();
        if (cur().kind != Token::Word && cur().kind != Token::String) expected("a number or a string in a list");
        elems.push_back(cur());
        next();
        skip_newlines();
        if (punct("]")) break;
        expect(",", "',' or ']' in a list");
      }
    }
    next();
    Attr a;
    if (k == Attr::Kind::Other) {
      if (elems.empty()) fail_line(line, "an empty list needs its kind: ints[], floats[] or strings[]");
      bool strings = elems[0].kind == Token::String, ints = true;
      for (auto &e : elems) {
        if ((e.kind == Token::String) != strings) fail_line(e.line, "a list holds numbers or strings, not both");
        ints = ints && looks_int(e.text);
      }
      k = strings ? Attr::Kind::Strings : ints ? Attr::Kind::Ints : Attr::Kind::Floats;
    }
    a.kind = k;
    for (auto &e : elems) {
      bool ok = (e.kind == Token::String) == (k == Attr::Kind::Strings);
      if (ok && k == Attr::Kind::Ints) ok = parse_int(e.text, &a.ints.emplace_back());
      if (ok && k == Attr::Kind::Floats) ok = parse_real(e.text, &a.floats.emplace_back());
      if (ok && k == Attr::Kind::Strings) a.strings.push_back(e.text);
      const char *want = k == Attr::Kind::Ints ? "an integer" : k == Attr::Kind::Floats ? "a float" : "a string";
      if (!ok && k == Attr::Kind::Ints && looks_int(e.text))
        fail_line(e.line, "integer " + e.text + " is out of the range of int64");
      if (!ok) fail_line(e.line, std::string("expected ") + want + " in the list, found " + describe(e));
    }
    return a;
  }

  // graph [NAME] { statements }, after `graph`.
  std::shared_ptr<const Subgraph> subgraph(const Scope *parent, int depth) {
    int line = cur().line;
    if (depth > g_.limits.max_nesting)
      fail_line(line, "subgraphs nest deeper than " + std::to_string(g_.limits.max_nesting) + " levels");
    auto sub = std::make_shared<Subgraph>();
    Scope sc;
    sc.parent = parent;
    if (cur().kind == Token::Word || cur().kind == Token::String) sub->name = name("the subgraph's name");
    expect("{", "'{' starting the subgraph");
    for (;;) {
      skip_newlines();
      if (punct("}")) break;
      if (cur().kind == Token::End) expected("'}' closing the subgraph of line " + std::to_string(line));
      int sl = cur().line;
      if (word("input")) {
        next();
        for (;;) {
          int nl = cur().line;
          std::string n = name("an input's name");
          define_local(sc, n, nl);
          sub->inputs.push_back(n);
          if (!punct(",")) break;
          next();
        }
      } else if (word("const")) {
        next();
        std::string n;
        ConstP c = constant(&n);
        define_local(sc, n, sl);
        sub->initializers.emplace_back(n, c);
      } else if (word("output")) {
        next();
        for (;;) {
          sub->outputs.push_back(use(&sc, "a value's name"));
          if (!punct(",")) break;
          next();
        }
      } else if (word("graph") || word("effect") || word("guard")) {
        fail_line(sl, "'" + cur().text + "' cannot be in a subgraph");
      } else {
        NodeText nt = node_text(&sc, depth);
        if (nt.opset >= 0) fail_line(nt.line, "a node of a subgraph takes its opset from the graph (no '@')");
        if (nt.guard >= 0) fail_line(nt.line, "a node of a subgraph has no guard");
        if (!nt.decl.empty()) fail_line(nt.line, "the outputs of a subgraph's nodes have no types here");
        Subgraph::Step st;
        st.name = nt.name;
        st.op = nt.op;
        st.domain = nt.domain;
        st.in = nt.in;
        st.out = nt.out;
        st.attrs = std::move(nt.attrs);
        for (size_t i = 0; i < st.out.size(); ++i)
          if (!st.out[i].empty()) define_local(sc, st.out[i], nt.out_line[i]);
        sub->steps.push_back(std::move(st));
      }
      end_statement(true);
    }
    next();  // }
    return sub;
  }

  // guard G: key=value ...
  void guard() {
    int line = cur().line;
    next();
    int64_t k = integer("the guard's number");
    if (k != (int64_t)g_.guards.size())
      fail_line(line, "guards are numbered in order: expected guard " + std::to_string(g_.guards.size()));
    expect(":", "':' after the guard's number");
    Guard gd;
    GuardText gt{line, "", ""};
    std::set<std::string> seen;
    while (cur().kind == Token::Word) {
      std::string key = cur().text;
      if (!seen.insert(key).second) fail_line(line, "guard field '" + key + "' is given twice");
      next();
      expect("=", "'=' after '" + key + "'");
      if (key == "cond")
        gt.cond = name("a value's name");
      else if (key == "eff")
        gt.eff = name("a value's name");
      else if (key == "expect")
        gd.expect = boolean("true or false");
      else if (key == "eff_expect")
        gd.eff_expect = boolean("true or false");
      else if (key == "parent") {
        int64_t p = integer("a guard's number");
        if (p < -1 || p > INT32_MAX) fail_line(line, "parent " + std::to_string(p) + " is out of range");
        gd.parent = (int)p;
      } else if (key == "what" || key == "failure") {
        if (cur().kind != Token::String) expected("a string");
        (key == "what" ? gd.what : gd.failure) = cur().text;
        next();
      } else {
        fail_line(line, "unknown guard field '" + key + "' (cond expect eff eff_expect parent what failure)");
      }
    }
    if (gt.cond.empty() || gt.eff.empty()) fail_line(line, "a guard needs cond=VALUE and eff=VALUE");
    g_.guards.push_back(gd);
    guard_text_.push_back(gt);
  }

  // Guards may name values and parents defined after them, and nodes may
  // name guards listed after them: resolved once everything is read.
  void finish_guards() {
    int n = (int)g_.guards.size();
    for (int i = 0; i < n; ++i) {
      Guard &gd = g_.guards[i];
      const GuardText &gt = guard_text_[i];
      for (const std::string *v : {&gt.cond, &gt.eff})
        if (!ids_.count(*v)) fail_line(gt.line, "unknown value '" + *v + "'");
      gd.cond = top_id(gt.cond);
      gd.eff = top_id(gt.eff);
      if (gd.parent >= n || gd.parent == i)
        fail_line(gt.line, "guard " + std::to_string(i) + " names parent " + std::to_string(gd.parent) +
                               ", which is not another guard");
    }
    for (int i = 0; i < n; ++i) {
      int steps = 0;
      for (int p = g_.guards[i].parent; p >= 0; p = g_.guards[p].parent)
        if (++steps > n) fail_line(guard_text_[i].line, "the parents of guard " + std::to_string(i) + " form a cycle");
    }
    for (auto &ng : node_guard_lines_)
      if (g_.nodes[ng.first].guard >= n)
        fail_line(ng.second, "guard " + std::to_string(g_.nodes[ng.first].guard) + " is not defined (" +
                                 std::to_string(n) + " guards)");
  }
};

}  // namespace

std::string print_graph(const Graph &g) { return Printer(g).run(); }

Graph parse_graph(const std::string &text) { return Parser(lex(text)).run(); }

}  // namespace tinyrt
