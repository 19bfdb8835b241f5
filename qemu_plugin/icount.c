/* icount.c — a QEMU TCG plugin (plugin API version 1, qemu-user 7.2) that
 * counts executed guest instructions and writes the total to a file at
 * exit: a repeatable cost figure for ARM code, where wall time under
 * emulation means nothing (and for x86-64 code under qemu-x86_64 -cpu
 * EPYC, steadier than these VMs' wall time, though it counts a division
 * as one instruction).
 *
 *   qemu-aarch64 -cpu cortex-a72 -plugin libtinyrt_icount.so,out=FILE prog
 *
 * Per-step counts: a guest that calls write(TINYRT_STEP_MARK_FD, NULL,
 * step * 2 + begin) around each step (tinyrt-runner --mark-steps) gets,
 * after the total, a line "step K: INSTRUCTIONS RUNS" per step: the
 * instructions executed between its begin and end marks, summed over its
 * RUNS runs. The write fails (bad descriptor) and changes nothing else.
 *
 * Debian ships no qemu-plugin.h, so the few API declarations this plugin
 * uses are written out below; they follow QEMU's documented plugin ABI. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

typedef uint64_t qemu_plugin_id_t;
struct qemu_plugin_tb;
typedef struct qemu_info_t qemu_info_t;
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);
typedef void (*qemu_plugin_vcpu_syscall_cb_t)(qemu_plugin_id_t id, unsigned int vcpu_index, int64_t num, uint64_t a1,
                                              uint64_t a2, uint64_t a3, uint64_t a4, uint64_t a5, uint64_t a6,
                                              uint64_t a7, uint64_t a8);
/* Only the first member is read: the guest architecture's name. */
struct qemu_info_t {
  const char *target_name;
};

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr,
                                              uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
void qemu_plugin_register_vcpu_syscall_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_syscall_cb_t cb);

#define EXPORT __attribute__((visibility("default")))
EXPORT int qemu_plugin_version = 1;

static uint64_t insn_count; /* single vCPU per guest thread; runs are single-threaded */
static char out_path[4096];

/* Per-step marks (see the top of the file). The descriptor must match
 * device_runner/tinyrt_runner.c. */
#define TINYRT_STEP_MARK_FD (-32343)
#define MAX_STEPS 65536
static int64_t write_syscall = -1; /* the guest's number for write() */
static uint64_t step_instructions[MAX_STEPS], step_runs[MAX_STEPS], mark_start;
static uint32_t num_marked_steps;

static void on_syscall(qemu_plugin_id_t id, unsigned int vcpu, int64_t num, uint64_t a1, uint64_t a2, uint64_t a3,
                       uint64_t a4, uint64_t a5, uint64_t a6, uint64_t a7, uint64_t a8) {
  uint64_t step;
  (void)id, (void)vcpu, (void)a2, (void)a4, (void)a5, (void)a6, (void)a7, (void)a8;
  if (num != write_syscall || (int32_t)(uint32_t)a1 != TINYRT_STEP_MARK_FD) return;
  step = a3 >> 1;
  if (step >= MAX_STEPS) return;
  if (a3 & 1) {
    mark_start = insn_count;
    return;
  }
  step_instructions[step] += insn_count - mark_start;
  step_runs[step] += 1;
  if (step + 1 > num_marked_steps) num_marked_steps = (uint32_t)step + 1;
}

static void on_tb_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insn_count, qemu_plugin_tb_n_insns(tb));
}

static void write_count(qemu_plugin_id_t id, void *p) {
  FILE *f;
  uint32_t k;
  (void)id;
  (void)p;
  f = out_path[0] ? fopen(out_path, "w") : stderr;
  if (!f) return;
  fprintf(f, "guest_instructions=%llu\n", (unsigned long long)insn_count);
  for (k = 0; k < num_marked_steps; ++k)
    fprintf(f, "step %u: %llu %llu\n", k, (unsigned long long)step_instructions[k], (unsigned long long)step_runs[k]);
  if (f != stderr) fclose(f);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
  int i;
  const char *arch = info ? info->target_name : NULL;
  if (arch && !strcmp(arch, "aarch64"))
    write_syscall = 64;
  else if (arch && !strcmp(arch, "arm"))
    write_syscall = 4;
  else if (arch && !strcmp(arch, "x86_64"))
    write_syscall = 1;
  for (i = 0; i < argc; ++i)
    if (strncmp(argv[i], "out=", 4) == 0) {
      strncpy(out_path, argv[i] + 4, sizeof out_path - 1);
    }
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_translate);
  qemu_plugin_register_atexit_cb(id, write_count, NULL);
  if (write_syscall >= 0) qemu_plugin_register_vcpu_syscall_cb(id, on_syscall);
  return 0;
}
