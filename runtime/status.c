/* status.c — status strings. */
#include "tinyrt.h"

const char *tinyrt_status_string(tinyrt_status status) {
  switch (status) {
    case TINYRT_OK: return "ok";
    case TINYRT_ERR_INVALID_ARGUMENT: return "invalid argument";
    case TINYRT_ERR_BAD_MODEL: return "not a valid tinyrt model descriptor";
    case TINYRT_ERR_ABI_MISMATCH: return "model compiled for another tinyrt ABI version";
    case TINYRT_ERR_WRONG_ARCH: return "model compiled for another CPU architecture";
    case TINYRT_ERR_CPU_UNSUPPORTED: return "CPU lacks an instruction-set feature the model needs";
    case TINYRT_ERR_ARENA_TOO_SMALL: return "arena too small for the model";
    case TINYRT_ERR_ARENA_MISALIGNED: return "arena not aligned to TINYRT_ARENA_ALIGN bytes";
    case TINYRT_ERR_NOT_FOUND: return "no tensor with that name";
    case TINYRT_ERR_STORAGE_TOO_SMALL: return "pool storage too small";
    case TINYRT_ERR_THREADS: return "thread count not supported by this port";
    case TINYRT_ERR_NOT_INITIALIZED: return "session or pool not initialized, destroyed, or a copy";
    case TINYRT_ERR_BUSY: return "session or pool in use by another call";
    case TINYRT_ERR_CORRUPT: return "model weights corrupt";
    case TINYRT_ERR_UNSUPPORTED: return "not supported by this model's descriptor";
    case TINYRT_ERR_BRANCH: return "inputs took a branch not compiled";
    case TINYRT_ERR_SHAPE: return "input dims out of bounds";
  }
  return "unknown status";
}
