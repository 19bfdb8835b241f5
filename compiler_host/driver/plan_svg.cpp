// plan_svg.cpp — the memory plan as a picture: one rectangle per arena
// buffer, time (steps) across and arena offset down, with the lower bound
// (peak live bytes), the arena budget the speed-for-memory choices kept
// within and the peak without them marked. Read from NAME.json's
// "memory_plan" and "budgets".
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "driver/compiler.h"

namespace tinyrt {

namespace {

std::string escape_xml(const std::string &s) {
  std::string o;
  for (unsigned char ch : s) {
    if (ch == '&')
      o += "&amp;";
    else if (ch == '<')
      o += "&lt;";
    else if (ch == '>')
      o += "&gt;";
    else if (ch == '"')
      o += "&quot;";
    else if (ch < 0x20)
      o += ' ';
    else
      o += (char)ch;
  }
  return o;
}

}  // namespace

std::string plan_svg(const Artifact &a) {
  nlohmann::json j = nlohmann::json::parse(a.json);
  const nlohmann::json &plan = j["memory_plan"];
  double steps = std::max<double>(1, plan["steps"].get<double>());
  // The budget (0 when no choice was budgeted) and the peak it is a ratio of.
  const int64_t budget = j["budgets"].value("arena_budget_bytes", int64_t(0));
  const int64_t base = j["budgets"].value("arena_before_trades_bytes", int64_t(0));
  double arena = std::max<double>(1, (double)std::max(a.stats.arena_bytes, budget));
  const double W = 960, H = 540, L = 70, T = 40;  // plot size and margins
  std::ostringstream o;
  char buf[512];
  snprintf(buf, sizeof buf,
           "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" "
           "font-size=\"12\">\n",
           W + L + 20, H + T + 50);
  o << buf;
  o << "<text x=\"" << L << "\" y=\"20\" font-size=\"14\">" << escape_xml(a.name) << " for " << a.target.name
    << ": arena " << a.stats.arena_bytes << " bytes, lower bound " << a.stats.lower_bound_bytes << " bytes, "
    << plan["buffers"].size() << " buffers";
  if (budget > 0) o << ", budget " << budget << " bytes";
  o << "</text>\n";
  snprintf(buf, sizeof buf,
           "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"#f8f8f8\" stroke=\"#888\"/>\n", L, T, W,
           H);
  o << buf;
  int i = 0;
  for (const auto &b : plan["buffers"]) {
    double x = L + W * b["first_step"].get<double>() / steps;
    double w = W * (b["last_step"].get<double>() - b["first_step"].get<double>() + 1) / steps;
    double y = T + H * b["offset"].get<double>() / arena, h = H * b["bytes"].get<double>() / arena;
    int hue = (i++ * 47) % 360;
    snprintf(buf, sizeof buf,
             "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"hsl(%d,60%%,70%%)\" stroke=\"#333\" "
             "stroke-width=\"0.5\"><title>",
             x, y, std::max(w, 0.5), std::max(h, 0.5), hue);
    o << buf << escape_xml(b["value"].get<std::string>()) << ": " << b["bytes"].get<int64_t>() << " bytes at offset "
      << b["offset"].get<int64_t>() << ", steps " << b["first_step"].get<int>() << "-" << b["last_step"].get<int>()
      << "</title></rect>\n";
  }
  auto mark = [&](int64_t bytes, const char *color, const std::string &label) {
    double yb = T + H * (double)bytes / arena;
    snprintf(buf, sizeof buf,
             "<line x1=\"%.1f\" y1=\"%.2f\" x2=\"%.1f\" y2=\"%.2f\" stroke=\"%s\" stroke-dasharray=\"6,4\"/>\n"
             "<text x=\"%.1f\" y=\"%.2f\" fill=\"%s\" text-anchor=\"end\">",
             L, yb, L + W, yb, color, L + W - 4, yb - 4, color);
    o << buf << escape_xml(label) << "</text>\n";
  };
  mark(a.stats.lower_bound_bytes, "#c00", "lower bound");
  if (budget > 0) {
    char ratio[64] = "";
    if (base > 0) snprintf(ratio, sizeof ratio, " (%.2fx the peak without transforms)", (double)budget / (double)base);
    mark(budget, "#06c", std::string("arena budget") + ratio);
  }
  snprintf(buf, sizeof buf,
           "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">step (0: inputs written, k + 1: kernel k, %d: "
           "outputs read)</text>\n<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">0</text>\n"
           "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%lld</text>\n"
           "<text transform=\"translate(14,%.1f) rotate(-90)\" text-anchor=\"middle\">arena offset (bytes)</text>\n",
           L + W / 2, T + H + 30, (int)steps - 1, L - 6, T + 10, L - 6, T + H, (long long)arena, T + H / 2);
  o << buf << "</svg>\n";
  return o.str();
}

}  // namespace tinyrt
