// task_split.h — TaskSplit: how a GEMM step's work is cut into the tasks
// that the runtime's pool shares out (GemmSpec::split; chosen by
// pack_weights from Target::task_split: the built-in rule, a tuning file's
// measured choice, or --task-split; emitted by codegen/gemm_emitter.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace tinyrt {

struct TaskSplit {
  enum class Order : uint8_t {
    Rule,      // the emitter's rule: pixel blocks outermost when the input and
               // output are at least twice the weights, else output-channel tiles
    Pixels,    // pixel blocks outermost: a thread keeps the pixels of its share
    Channels,  // output-channel tiles outermost: a thread streams its share of the weights
    Serial,    // the step's tasks run in one call on the calling thread (the
               // step's thread count is one; its neighbours stay shared)
  };
  Order order = Order::Rule;
  int tasks = 0;  // about this many tasks (Pixels, Channels); 0: the rule's (about 64)
  bool operator==(const TaskSplit &o) const { return order == o.order && tasks == o.tasks; }
  bool operator!=(const TaskSplit &o) const { return !(*this == o); }
};

// "rule", "pixels", "channels", "serial"; order_of returns false for another name.
const char *task_split_order_name(TaskSplit::Order o);
bool task_split_order_of(const std::string &name, TaskSplit::Order *o);
// "pixels,16", "serial", "rule": the form --task-split takes and the tuning
// file's "split" holds.
std::string task_split_text(const TaskSplit &s);
// Parses that form (TASKS 1-4096, only with pixels or channels); false for
// anything else.
bool parse_task_split(const std::string &text, TaskSplit *s);

}  // namespace tinyrt
