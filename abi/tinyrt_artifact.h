/*
 * tinyrt_artifact.h — the one contract between tinyrt-compile and libtinyrt.
 *
 * A compiled model is a constant `tinyrt_model` descriptor that lives in the
 * model's object file next to the generated code and the pre-packed weights.
 * The compiler builds this struct with the target's C layout; the runtime
 * reads it and never writes it.
 *
 * Rules for changing this file (see docs/ABI.md):
 *   - fields are only ever appended at the end of a struct;
 *   - appending bumps TINYRT_ABI_MINOR; anything else bumps TINYRT_ABI_MAJOR;
 *   - the runtime accepts a descriptor whose major equals its own and whose
 *     `desc_bytes` covers every field it reads; a field that `desc_bytes`
 *     does not cover has its older meaning (1.0 descriptors: tables are
 *     arrays of the 1.0 structs);
 *   - the tables are walked with the strides the descriptor gives
 *     (`tensor_desc_bytes`, `step_desc_bytes`), so their entries may grow
 *     too, by appending, under the same rule.
 *
 * Execution model: a model is an ordered list of steps. A step is one
 * generated function (a fused kernel) plus a task count. The runtime calls
 * the function with disjoint task ranges [begin, end) that together cover
 * [0, tasks), possibly from several threads at once, and waits for all of
 * them before starting the next step. Each task writes its own part of the
 * step's output, so results do not depend on the number of threads.
 * Generated code only reads and writes the arena and reads its own weights;
 * it never calls back into the runtime or into libc.
 */
#ifndef TINYRT_ARTIFACT_H_
#define TINYRT_ARTIFACT_H_

#include <stdint.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TINYRT_ARTIFACT_MAGIC 0x31545254u /* "TRT1" little-endian */
#define TINYRT_ABI_MAJOR 1
#define TINYRT_ABI_MINOR 5

/* Element types. Values match ONNX TensorProto.DataType. */
typedef enum tinyrt_dtype {
  TINYRT_DTYPE_FLOAT32 = 1,
  TINYRT_DTYPE_UINT8 = 2,
  TINYRT_DTYPE_INT8 = 3,
  TINYRT_DTYPE_UINT16 = 4,
  TINYRT_DTYPE_INT16 = 5,
  TINYRT_DTYPE_INT32 = 6,
  TINYRT_DTYPE_INT64 = 7,
  TINYRT_DTYPE_BOOL = 9, /* one byte per element, 0 or 1 */
  TINYRT_DTYPE_FLOAT16 = 10,
  TINYRT_DTYPE_FLOAT64 = 11,
  TINYRT_DTYPE_UINT32 = 12,
  TINYRT_DTYPE_UINT64 = 13,
  TINYRT_DTYPE_BFLOAT16 = 16
} tinyrt_dtype;

/* Instruction-set architecture of the generated code. */
typedef enum tinyrt_arch { TINYRT_ARCH_X86_64 = 1, TINYRT_ARCH_ARMV7 = 2, TINYRT_ARCH_AARCH64 = 3 } tinyrt_arch;

/* The architecture of the code including this header (0: none of the above). */
#if defined(__x86_64__)
#define TINYRT_ARCH_NATIVE TINYRT_ARCH_X86_64
#elif defined(__aarch64__)
#define TINYRT_ARCH_NATIVE TINYRT_ARCH_AARCH64
#elif defined(__arm__)
#define TINYRT_ARCH_NATIVE TINYRT_ARCH_ARMV7
#else
#define TINYRT_ARCH_NATIVE 0
#endif

/* CPU features the generated code uses; the runtime checks them at init. */
#define TINYRT_ISA_X86_AVX2 (1u << 0)
#define TINYRT_ISA_X86_FMA (1u << 1)
#define TINYRT_ISA_X86_AVX512F (1u << 2)
#define TINYRT_ISA_X86_AVX512BW (1u << 3)
#define TINYRT_ISA_X86_AVX512VL (1u << 4)
#define TINYRT_ISA_X86_AVX512DQ (1u << 5)
#define TINYRT_ISA_ARM_NEON (1u << 8)     /* armv7 Advanced SIMD */
#define TINYRT_ISA_ARM_VFPV4 (1u << 9)    /* armv7 fused multiply-add */
#define TINYRT_ISA_A64_ASIMD (1u << 10)   /* AArch64 Advanced SIMD */
#define TINYRT_ISA_A64_DOTPROD (1u << 11) /* Armv8.2 int8 dot product (sdot/udot) */
#define TINYRT_ISA_A64_FP16 (1u << 12)    /* Armv8.2 half-precision arithmetic (fmla .8h) */
#define TINYRT_ISA_X86_F16C (1u << 16)    /* half<->single conversions (VEX) */
#define TINYRT_ISA_X86_BMI1 (1u << 17)
#define TINYRT_ISA_X86_BMI2 (1u << 18)
#define TINYRT_ISA_X86_POPCNT (1u << 19)
#define TINYRT_ISA_X86_AVX512VNNI (1u << 20) /* int8 dot products (vpdpbusd) */
#define TINYRT_ISA_X86_AVXVNNI (1u << 21)    /* the same, VEX-encoded, 256-bit (AVX-VNNI) */

/* Largest tensor rank a descriptor may declare. */
#define TINYRT_MAX_RANK 16

/* One generated kernel. `arena` is the caller's arena (64-byte aligned). */
typedef void (*tinyrt_kernel_fn)(uint8_t *arena, int32_t task_begin, int32_t task_end);

typedef struct tinyrt_step_desc {
  tinyrt_kernel_fn fn;
  int32_t tasks; /* >= 1 */
  int32_t flags; /* TINYRT_STEP_* bits (0 before ABI 1.2) */
  /* ABI 1.1 entries end here; the fields below are read only when the
   * descriptor's step_desc_bytes covers them. */
  const char *call_node;  /* TINYRT_STEP_CALL: the custom op node's name;
                             TINYRT_STEP_FAIL: why the run stops */
  uint64_t status_offset; /* TINYRT_STEP_CALL: arena offset of the int32
                             tinyrt_status the call stores */
  /* ABI 1.2 entries end here. */
  uint64_t cond_offset; /* TINYRT_STEP_GUARDED: arena offset of a bool byte */
  uint32_t cond_expect; /* TINYRT_STEP_GUARDED: the step runs only when
                           (byte != 0) == (cond_expect != 0) */
} tinyrt_step_desc;

/* The step calls a custom op's C function (docs/ABI.md, "Custom ops"): the
 * runtime runs it on the calling thread (one task) and, when the status it
 * stored at status_offset is not TINYRT_OK, stops the run and returns it. */
#define TINYRT_STEP_CALL 1u
/* ABI 1.3: the step belongs to a branch of an If whose condition is known
 * only at run time (docs/ABI.md, "Branches"): the runtime skips it unless
 * the byte at cond_offset says the branch is taken. A runtime that ignores
 * the flag runs every branch, which gives the same outputs. */
#define TINYRT_STEP_GUARDED 2u
/* ABI 1.3: no code (fn is NULL): reaching the step stops the run with
 * TINYRT_ERR_BRANCH and the message call_node (a branch the compiler could
 * not compile for the model's input shapes; always with
 * TINYRT_STEP_GUARDED). A runtime before 1.3 refuses the model. */
#define TINYRT_STEP_FAIL 4u
/* ABI 1.5: with TINYRT_STEP_FAIL, the run stops with TINYRT_ERR_SHAPE
 * instead: two run-time extents the model needs equal (a U-Net's skip
 * connection and its upsampled path) differ in this run; call_node says
 * which. A runtime before 1.5 refuses the model. */
#define TINYRT_STEP_SHAPE_ERROR 8u
/* Every flag this runtime knows; a model with another is refused. */
#define TINYRT_STEP_KNOWN_FLAGS (TINYRT_STEP_CALL | TINYRT_STEP_GUARDED | TINYRT_STEP_FAIL | TINYRT_STEP_SHAPE_ERROR)
/* The size of a step entry up to ABI 1.1 (fn, tasks, flags), and 1.2. */
#define TINYRT_STEP_DESC_1_1_BYTES offsetof(tinyrt_step_desc, call_node)
#define TINYRT_STEP_DESC_1_2_BYTES offsetof(tinyrt_step_desc, cond_offset)

/* A graph input or output: row-major, dense, at a fixed arena offset. */
typedef struct tinyrt_tensor_desc {
  const char *name;
  const int64_t *dims; /* `rank` entries; a run-time dimension's upper bound */
  uint32_t dtype;      /* tinyrt_dtype */
  uint32_t rank;
  uint64_t arena_offset; /* bytes from the arena start, 64-byte aligned */
  uint64_t bytes;        /* at the upper bounds */
  /* ABI 1.3 entries end here. ABI 1.4: run-time dimensions (docs/ABI.md,
   * "Run-time dimensions"). With dims_min NULL every dimension is fixed. */
  const int64_t *dims_min; /* per axis, the lower bound (dims: the upper) */
  const int32_t *dim_ids;  /* per axis, -1 (fixed) or the model's run-time
                              dimension it is: axes of one id take one value */
  uint64_t dims_offset;    /* arena offset of the actual dimensions, an
                              int64 per axis (8-byte aligned): the runtime
                              writes an input's, the last step an output's */
} tinyrt_tensor_desc;
/* The size of a tensor entry up to ABI 1.3. */
#define TINYRT_TENSOR_DESC_1_3_BYTES offsetof(tinyrt_tensor_desc, dims_min)

/* Where part of the weights lives (ABI 1.2): one constant array the
 * generated code reads. The descriptor lists them all; together they hold
 * `weights_bytes` bytes. */
typedef struct tinyrt_weights_range {
  const void *data;
  uint64_t bytes;
} tinyrt_weights_range;

typedef struct tinyrt_model {
  uint32_t magic;        /* TINYRT_ARTIFACT_MAGIC */
  uint16_t abi_major;    /* TINYRT_ABI_MAJOR the compiler used */
  uint16_t abi_minor;    /* TINYRT_ABI_MINOR the compiler used */
  uint32_t desc_bytes;   /* sizeof(tinyrt_model) as the compiler laid it out */
  uint32_t arch;         /* tinyrt_arch */
  uint32_t isa_required; /* TINYRT_ISA_* bits */
  uint32_t num_inputs;
  uint32_t num_outputs;
  uint32_t num_steps;
  const char *name;
  uint64_t arena_bytes;   /* arena size the session needs */
  uint64_t weights_bytes; /* packed constant data in the artifact */
  uint64_t checksum;      /* FNV-1a 64 of the source ONNX file's bytes */
  const tinyrt_tensor_desc *inputs;
  const tinyrt_tensor_desc *outputs;
  const tinyrt_step_desc *steps;
  const char *compiler_version;
  /* ABI 1.0 ends here. */
  uint32_t tensor_desc_bytes; /* stride of `inputs` and `outputs` */
  uint32_t step_desc_bytes;   /* stride of `steps` */
  /* ABI 1.1 ends here. */
  /* Integrity (docs/ABI.md). Every hash is FNV-1a 64: an identity and
   * corruption check, not a security signature. */
  uint64_t options_hash;               /* of the compile options text (NAME.json "compile_options") */
  uint64_t model_hash;                 /* of the ONNX file's bytes followed by that text */
  uint64_t weights_checksum;           /* of the weights: the ranges' bytes in table order */
  const tinyrt_weights_range *weights; /* `num_weights` entries */
  uint32_t num_weights;
  uint32_t weights_range_bytes; /* stride of `weights` */
  /* ABI 1.2 ends here. Append new fields below and bump TINYRT_ABI_MINOR. */
} tinyrt_model;

#ifdef __cplusplus
}
#endif

#endif /* TINYRT_ARTIFACT_H_ */
