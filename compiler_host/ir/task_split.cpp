#include "ir/task_split.h"

#include <cstdio>

namespace tinyrt {

namespace {
constexpr const char *kOrders[] = {"rule", "pixels", "channels", "serial"};
}

const char *task_split_order_name(TaskSplit::Order o) { return kOrders[(int)o]; }

bool task_split_order_of(const std::string &name, TaskSplit::Order *o) {
  for (int i = 0; i < 4; ++i)
    if (name == kOrders[i]) {
      *o = (TaskSplit::Order)i;
      return true;
    }
  return false;
}

std::string task_split_text(const TaskSplit &s) {
  std::string t = task_split_order_name(s.order);
  if (s.tasks > 0) t += "," + std::to_string(s.tasks);
  return t;
}

bool parse_task_split(const std::string &text, TaskSplit *s) {
  const size_t comma = text.find(',');
  TaskSplit r;
  if (!task_split_order_of(text.substr(0, comma), &r.order)) return false;
  if (comma != std::string::npos) {
    const bool ordered = r.order == TaskSplit::Order::Pixels || r.order == TaskSplit::Order::Channels;
    int n = 0;
    char extra = 0;
    if (!ordered || sscanf(text.c_str() + comma + 1, "%d%c", &n, &extra) != 1 || n < 1 || n > 4096) return false;
    r.tasks = n;
  }
  *s = r;
  return true;
}

}  // namespace tinyrt
