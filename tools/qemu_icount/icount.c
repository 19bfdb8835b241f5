/* icount.c — a QEMU TCG plugin (plugin API version 1, qemu-user 7.2) that
 * counts executed guest instructions and writes the total to a file at
 * exit: a repeatable cost figure for ARM code, where wall time under
 * emulation means nothing.
 *
 *   qemu-aarch64 -cpu cortex-a72 -plugin libtinyrt_icount.so,out=FILE prog
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

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
void qemu_plugin_register_vcpu_tb_exec_inline(struct qemu_plugin_tb *tb, enum qemu_plugin_op op, void *ptr,
                                              uint64_t imm);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);

#define EXPORT __attribute__((visibility("default")))
EXPORT int qemu_plugin_version = 1;

static uint64_t insn_count; /* single vCPU per guest thread; runs are single-threaded */
static char out_path[4096];

static void on_tb_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb) {
  (void)id;
  qemu_plugin_register_vcpu_tb_exec_inline(tb, QEMU_PLUGIN_INLINE_ADD_U64, &insn_count,
                                           qemu_plugin_tb_n_insns(tb));
}

static void write_count(qemu_plugin_id_t id, void *p) {
  FILE *f;
  (void)id;
  (void)p;
  f = out_path[0] ? fopen(out_path, "w") : stderr;
  if (!f) return;
  fprintf(f, "guest_instructions=%llu\n", (unsigned long long)insn_count);
  if (f != stderr) fclose(f);
}

EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc, char **argv) {
  int i;
  (void)info;
  for (i = 0; i < argc; ++i)
    if (strncmp(argv[i], "out=", 4) == 0) {
      strncpy(out_path, argv[i] + 4, sizeof out_path - 1);
    }
  qemu_plugin_register_vcpu_tb_trans_cb(id, on_tb_translate);
  qemu_plugin_register_atexit_cb(id, write_count, NULL);
  return 0;
}
