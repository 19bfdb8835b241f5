/* ort_run.c — runs one ONNX model through ONNX Runtime's C API a given
 * number of times: for counting ORT's executed instructions under qemu
 * (bench/ort_count/count.sh), and with --time for its latency on the host
 * (bench/ort.sh), the peer tinyrt-perf is compared against (through the C
 * API: onnxruntime-node's JavaScript binding adds about 0.1 ms a run).
 *   ort_run MODEL.onnx RUNS [--time [THREADS [WARMUP]]]
 * Session options as bench/ort_latency.js: CPU provider, THREADS (default 1)
 * intra-op and 1 inter-op thread, graph optimization level "all". Every
 * input gets its declared shape (symbolic dimensions as 1): floats a fixed
 * pseudo-random sequence in [-1, 1], every other type zeros. --time runs
 * WARMUP (default 3) runs first and prints one JSON object as
 * bench/ort_latency.js does: {"median_ms": ..., "min_ms": ..., "runs": ...}.
 * With ORT_RUN_OUT=FILE in the environment and without --time (the write
 * would fall in a timed run), the first output of the last run is written
 * to FILE (its raw elements), so that outputs can be compared (e.g. ORT's
 * AVX2 kernels, bench/avx2_only.c, against its others). With
 * ORT_RUN_PROFILE=PREFIX, ORT's own per-node profile of every run is
 * written to PREFIX_<date>.json as the session is released (event
 * "<node>_kernel_time", "dur" in microseconds), to compare layer by layer
 * with tinyrt-perf --profile.
 * Exit 0, or 1 with ORT's message on any error.
 *
 * ORT ships no C header with onnxruntime-node, so the few C API entries
 * used are declared here. OrtApi is a table of function pointers that only
 * ever grows at its end; the entries up to the last one used are listed in
 * the order of include/onnxruntime/core/session/onnxruntime_c_api.h, with
 * their indices; unused ones are placeholders of the same size. */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Any version the library supports: the entries used below all exist since
 * version 1 and keep their meaning; 1.30 supports up to 23 or more. */
#define API_VERSION 16

typedef struct OrtStatus OrtStatus;
typedef struct OrtEnv OrtEnv;
typedef struct OrtSession OrtSession;
typedef struct OrtSessionOptions OrtSessionOptions;
typedef struct OrtMemoryInfo OrtMemoryInfo;
typedef struct OrtValue OrtValue;
typedef struct OrtRunOptions OrtRunOptions;
typedef struct OrtTypeInfo OrtTypeInfo;
typedef struct OrtTensorTypeAndShapeInfo OrtTensorTypeAndShapeInfo;
typedef struct OrtAllocator OrtAllocator; /* opaque here: only passed back */

/* ONNX's TensorProto element types (the values ORT reports). */
enum {
  ELEM_FLOAT = 1,
  ELEM_UINT8 = 2,
  ELEM_INT8 = 3,
  ELEM_UINT16 = 4,
  ELEM_INT16 = 5,
  ELEM_INT32 = 6,
  ELEM_INT64 = 7,
  ELEM_STRING = 8,
  ELEM_BOOL = 9,
  ELEM_FLOAT16 = 10,
  ELEM_DOUBLE = 11,
  ELEM_UINT32 = 12,
  ELEM_UINT64 = 13,
  ELEM_BFLOAT16 = 16
};
enum { LOG_WARNING = 2 };      /* OrtLoggingLevel */
enum { OPT_ENABLE_ALL = 99 };  /* GraphOptimizationLevel */
enum { ARENA_ALLOCATOR = 1 };  /* OrtAllocatorType */
enum { MEM_TYPE_DEFAULT = 0 }; /* OrtMemType */

typedef void (*ApiSlot)(void); /* an entry this program does not call */

typedef struct OrtApi {
  ApiSlot CreateStatus;                                                             /* 0 */
  ApiSlot GetErrorCode;                                                             /* 1 */
  const char *(*GetErrorMessage)(const OrtStatus *status);                          /* 2 */
  OrtStatus *(*CreateEnv)(int log_severity_level, const char *logid, OrtEnv **out); /* 3 */
  ApiSlot CreateEnvWithCustomLogger;                                                /* 4 */
  ApiSlot EnableTelemetryEvents;                                                    /* 5 */
  ApiSlot DisableTelemetryEvents;                                                   /* 6 */
  OrtStatus *(*CreateSession)(const OrtEnv *env, const char *model_path, const OrtSessionOptions *options,
                              OrtSession **out); /* 7 */
  ApiSlot CreateSessionFromArray;                /* 8 */
  OrtStatus *(*Run)(OrtSession *session, const OrtRunOptions *run_options, const char *const *input_names,
                    const OrtValue *const *inputs, size_t input_len, const char *const *output_names,
                    size_t output_names_len, OrtValue **outputs);                                    /* 9 */
  OrtStatus *(*CreateSessionOptions)(OrtSessionOptions **options);                                   /* 10 */
  ApiSlot SetOptimizedModelFilePath;                                                                 /* 11 */
  ApiSlot CloneSessionOptions;                                                                       /* 12 */
  ApiSlot SetSessionExecutionMode;                                                                   /* 13 */
  OrtStatus *(*EnableProfiling)(OrtSessionOptions *options, const char *profile_file_prefix);        /* 14 */
  ApiSlot DisableProfiling;                                                                          /* 15 */
  ApiSlot EnableMemPattern;                                                                          /* 16 */
  ApiSlot DisableMemPattern;                                                                         /* 17 */
  ApiSlot EnableCpuMemArena;                                                                         /* 18 */
  ApiSlot DisableCpuMemArena;                                                                        /* 19 */
  ApiSlot SetSessionLogId;                                                                           /* 20 */
  ApiSlot SetSessionLogVerbosityLevel;                                                               /* 21 */
  ApiSlot SetSessionLogSeverityLevel;                                                                /* 22 */
  OrtStatus *(*SetSessionGraphOptimizationLevel)(OrtSessionOptions *options, int level);             /* 23 */
  OrtStatus *(*SetIntraOpNumThreads)(OrtSessionOptions *options, int n);                             /* 24 */
  OrtStatus *(*SetInterOpNumThreads)(OrtSessionOptions *options, int n);                             /* 25 */
  ApiSlot CreateCustomOpDomain;                                                                      /* 26 */
  ApiSlot CustomOpDomain_Add;                                                                        /* 27 */
  ApiSlot AddCustomOpDomain;                                                                         /* 28 */
  ApiSlot RegisterCustomOpsLibrary;                                                                  /* 29 */
  OrtStatus *(*SessionGetInputCount)(const OrtSession *session, size_t *out);                        /* 30 */
  OrtStatus *(*SessionGetOutputCount)(const OrtSession *session, size_t *out);                       /* 31 */
  ApiSlot SessionGetOverridableInitializerCount;                                                     /* 32 */
  OrtStatus *(*SessionGetInputTypeInfo)(const OrtSession *session, size_t index, OrtTypeInfo **out); /* 33 */
  ApiSlot SessionGetOutputTypeInfo;                                                                  /* 34 */
  ApiSlot SessionGetOverridableInitializerTypeInfo;                                                  /* 35 */
  OrtStatus *(*SessionGetInputName)(const OrtSession *session, size_t index, OrtAllocator *allocator,
                                    char **value); /* 36 */
  OrtStatus *(*SessionGetOutputName)(const OrtSession *session, size_t index, OrtAllocator *allocator,
                                     char **value); /* 37 */
  ApiSlot SessionGetOverridableInitializerName;     /* 38 */
  ApiSlot CreateRunOptions;                         /* 39 */
  ApiSlot RunOptionsSetRunLogVerbosityLevel;        /* 40 */
  ApiSlot RunOptionsSetRunLogSeverityLevel;         /* 41 */
  ApiSlot RunOptionsSetRunTag;                      /* 42 */
  ApiSlot RunOptionsGetRunLogVerbosityLevel;        /* 43 */
  ApiSlot RunOptionsGetRunLogSeverityLevel;         /* 44 */
  ApiSlot RunOptionsGetRunTag;                      /* 45 */
  ApiSlot RunOptionsSetTerminate;                   /* 46 */
  ApiSlot RunOptionsUnsetTerminate;                 /* 47 */
  ApiSlot CreateTensorAsOrtValue;                   /* 48 */
  OrtStatus *(*CreateTensorWithDataAsOrtValue)(const OrtMemoryInfo *info, void *data, size_t data_bytes,
                                               const int64_t *shape, size_t shape_len, int type,
                                               OrtValue **out);                                                /* 49 */
  ApiSlot IsTensor;                                                                                            /* 50 */
  OrtStatus *(*GetTensorMutableData)(OrtValue *value, void **out);                                             /* 51 */
  ApiSlot FillStringTensor;                                                                                    /* 52 */
  ApiSlot GetStringTensorDataLength;                                                                           /* 53 */
  ApiSlot GetStringTensorContent;                                                                              /* 54 */
  OrtStatus *(*CastTypeInfoToTensorInfo)(const OrtTypeInfo *type_info, const OrtTensorTypeAndShapeInfo **out); /* 55 */
  ApiSlot GetOnnxTypeFromTypeInfo;                                                                             /* 56 */
  ApiSlot CreateTensorTypeAndShapeInfo;                                                                        /* 57 */
  ApiSlot SetTensorElementType;                                                                                /* 58 */
  ApiSlot SetDimensions;                                                                                       /* 59 */
  OrtStatus *(*GetTensorElementType)(const OrtTensorTypeAndShapeInfo *info, int *out);                         /* 60 */
  OrtStatus *(*GetDimensionsCount)(const OrtTensorTypeAndShapeInfo *info, size_t *out);                        /* 61 */
  OrtStatus *(*GetDimensions)(const OrtTensorTypeAndShapeInfo *info, int64_t *dims, size_t n);                 /* 62 */
  ApiSlot GetSymbolicDimensions;                                                                               /* 63 */
  OrtStatus *(*GetTensorShapeElementCount)(const OrtTensorTypeAndShapeInfo *info, size_t *out);                /* 64 */
  OrtStatus *(*GetTensorTypeAndShape)(const OrtValue *value, OrtTensorTypeAndShapeInfo **out);                 /* 65 */
  ApiSlot GetTypeInfo;                                                                                         /* 66 */
  ApiSlot GetValueType;                                                                                        /* 67 */
  ApiSlot CreateMemoryInfo;                                                                                    /* 68 */
  OrtStatus *(*CreateCpuMemoryInfo)(int allocator_type, int mem_type, OrtMemoryInfo **out);                    /* 69 */
  ApiSlot CompareMemoryInfo;                                                                                   /* 70 */
  ApiSlot MemoryInfoGetName;                                                                                   /* 71 */
  ApiSlot MemoryInfoGetId;                                                                                     /* 72 */
  ApiSlot MemoryInfoGetMemType;                                                                                /* 73 */
  ApiSlot MemoryInfoGetType;                                                                                   /* 74 */
  ApiSlot AllocatorAlloc;                                                                                      /* 75 */
  OrtStatus *(*AllocatorFree)(OrtAllocator *allocator, void *p);                                               /* 76 */
  ApiSlot AllocatorGetInfo;                                                                                    /* 77 */
  OrtStatus *(*GetAllocatorWithDefaultOptions)(OrtAllocator **out);                                            /* 78 */
  ApiSlot AddFreeDimensionOverride;                                                                            /* 79 */
  ApiSlot GetValue;                                                                                            /* 80 */
  ApiSlot GetValueCount;                                                                                       /* 81 */
  ApiSlot CreateValue;                                                                                         /* 82 */
  ApiSlot CreateOpaqueValue;                                                                                   /* 83 */
  ApiSlot GetOpaqueValue;                                                                                      /* 84 */
  ApiSlot KernelInfoGetAttribute_float;                                                                        /* 85 */
  ApiSlot KernelInfoGetAttribute_int64;                                                                        /* 86 */
  ApiSlot KernelInfoGetAttribute_string;                                                                       /* 87 */
  ApiSlot KernelContext_GetInputCount;                                                                         /* 88 */
  ApiSlot KernelContext_GetOutputCount;                                                                        /* 89 */
  ApiSlot KernelContext_GetInput;                                                                              /* 90 */
  ApiSlot KernelContext_GetOutput;                                                                             /* 91 */
  void (*ReleaseEnv)(OrtEnv *p);                                                                               /* 92 */
  void (*ReleaseStatus)(OrtStatus *p);                                                                         /* 93 */
  void (*ReleaseMemoryInfo)(OrtMemoryInfo *p);                                                                 /* 94 */
  void (*ReleaseSession)(OrtSession *p);                                                                       /* 95 */
  void (*ReleaseValue)(OrtValue *p);                                                                           /* 96 */
  ApiSlot ReleaseRunOptions;                                                                                   /* 97 */
  void (*ReleaseTypeInfo)(OrtTypeInfo *p);                                                                     /* 98 */
  void (*ReleaseTensorTypeAndShapeInfo)(OrtTensorTypeAndShapeInfo *p);                                         /* 99 */
  void (*ReleaseSessionOptions)(OrtSessionOptions *p);                                                         /* 100 */
} OrtApi;

typedef struct OrtApiBase {
  const OrtApi *(*GetApi)(uint32_t version);
  const char *(*GetVersionString)(void);
} OrtApiBase;

const OrtApiBase *OrtGetApiBase(void);

static const OrtApi *ort;

/* An ORT call that failed: its message, then exit 1. */
static void check(OrtStatus *status, const char *what) {
  if (!status) return;
  fprintf(stderr, "ort_run: %s: %s\n", what, ort->GetErrorMessage(status));
  ort->ReleaseStatus(status);
  exit(1);
}

static size_t element_size(int type) {
  switch (type) {
    case ELEM_UINT8:
    case ELEM_INT8:
    case ELEM_BOOL: return 1;
    case ELEM_UINT16:
    case ELEM_INT16:
    case ELEM_FLOAT16:
    case ELEM_BFLOAT16: return 2;
    case ELEM_FLOAT:
    case ELEM_INT32:
    case ELEM_UINT32: return 4;
    case ELEM_INT64:
    case ELEM_DOUBLE:
    case ELEM_UINT64: return 8;
    default: return 0; /* strings and anything else: not supported */
  }
}

/* Writes a tensor's raw elements to the file at path. */
static void write_output(OrtValue *value, const char *path) {
  OrtTensorTypeAndShapeInfo *info;
  size_t count, size;
  int type;
  void *data;
  FILE *f;
  check(ort->GetTensorTypeAndShape(value, &info), "GetTensorTypeAndShape");
  check(ort->GetTensorShapeElementCount(info, &count), "GetTensorShapeElementCount");
  check(ort->GetTensorElementType(info, &type), "GetTensorElementType");
  ort->ReleaseTensorTypeAndShapeInfo(info);
  check(ort->GetTensorMutableData(value, &data), "GetTensorMutableData");
  size = element_size(type);
  if (!size) {
    fprintf(stderr, "ort_run: output element type %d is not supported\n", type);
    exit(1);
  }
  f = fopen(path, "wb");
  if (!f || fwrite(data, size, count, f) != count || fclose(f) != 0) {
    fprintf(stderr, "ort_run: cannot write %s\n", path);
    exit(1);
  }
}

int main(int argc, char **argv) {
  const OrtApiBase *base;
  OrtEnv *env;
  OrtSessionOptions *options;
  OrtSession *session;
  OrtAllocator *allocator;
  OrtMemoryInfo *memory;
  size_t num_inputs, num_outputs, i, k;
  char **input_names, **output_names;
  OrtValue **inputs, **outputs;
  void **buffers;
  long runs, r, threads = 1, warmup = 3;
  uint32_t seed = 12345u;
  int timed = argc >= 4 && strcmp(argv[3], "--time") == 0;
  double *times = NULL;

  if (argc < 3 || argc > 6 || (argc > 3 && !timed) || (runs = strtol(argv[2], NULL, 10)) < 0 ||
      (argc > 4 && (threads = strtol(argv[4], NULL, 10)) < 1) ||
      (argc > 5 && (warmup = strtol(argv[5], NULL, 10)) < 0)) {
    fprintf(stderr, "usage: ort_run MODEL.onnx RUNS [--time [THREADS [WARMUP]]]\n");
    return 2;
  }
  base = OrtGetApiBase();
  ort = base->GetApi(API_VERSION);
  if (!ort) {
    fprintf(stderr, "ort_run: ONNX Runtime %s does not support API version %d\n", base->GetVersionString(),
            API_VERSION);
    return 1;
  }
  check(ort->CreateEnv(LOG_WARNING, "ort_run", &env), "CreateEnv");
  check(ort->CreateSessionOptions(&options), "CreateSessionOptions");
  check(ort->SetIntraOpNumThreads(options, (int)threads), "SetIntraOpNumThreads");
  /* ORT_RUN_PROFILE=PREFIX: ONNX Runtime's per-node profile, written as
   * PREFIX_<date>.json when the session is released. */
  if (getenv("ORT_RUN_PROFILE")) check(ort->EnableProfiling(options, getenv("ORT_RUN_PROFILE")), "EnableProfiling");
  check(ort->SetInterOpNumThreads(options, 1), "SetInterOpNumThreads");
  check(ort->SetSessionGraphOptimizationLevel(options, OPT_ENABLE_ALL), "SetSessionGraphOptimizationLevel");
  check(ort->CreateSession(env, argv[1], options, &session), "CreateSession");
  check(ort->GetAllocatorWithDefaultOptions(&allocator), "GetAllocatorWithDefaultOptions");
  check(ort->CreateCpuMemoryInfo(ARENA_ALLOCATOR, MEM_TYPE_DEFAULT, &memory), "CreateCpuMemoryInfo");

  check(ort->SessionGetInputCount(session, &num_inputs), "SessionGetInputCount");
  check(ort->SessionGetOutputCount(session, &num_outputs), "SessionGetOutputCount");
  input_names = calloc(num_inputs + 1, sizeof *input_names);
  inputs = calloc(num_inputs + 1, sizeof *inputs);
  buffers = calloc(num_inputs + 1, sizeof *buffers);
  output_names = calloc(num_outputs + 1, sizeof *output_names);
  outputs = calloc(num_outputs + 1, sizeof *outputs);
  if (!input_names || !inputs || !buffers || !output_names || !outputs) {
    fprintf(stderr, "ort_run: out of memory\n");
    return 1;
  }
  for (i = 0; i < num_inputs; ++i) {
    OrtTypeInfo *type_info;
    const OrtTensorTypeAndShapeInfo *tensor_info;
    int type;
    size_t rank, count = 1, size;
    int64_t *dims;

    check(ort->SessionGetInputName(session, i, allocator, &input_names[i]), "SessionGetInputName");
    check(ort->SessionGetInputTypeInfo(session, i, &type_info), "SessionGetInputTypeInfo");
    check(ort->CastTypeInfoToTensorInfo(type_info, &tensor_info), "CastTypeInfoToTensorInfo");
    if (!tensor_info) {
      fprintf(stderr, "ort_run: input %s is not a tensor\n", input_names[i]);
      return 1;
    }
    check(ort->GetTensorElementType(tensor_info, &type), "GetTensorElementType");
    check(ort->GetDimensionsCount(tensor_info, &rank), "GetDimensionsCount");
    dims = calloc(rank + 1, sizeof *dims);
    if (!dims) return 1;
    check(ort->GetDimensions(tensor_info, dims, rank), "GetDimensions");
    for (k = 0; k < rank; ++k) {
      if (dims[k] < 0) dims[k] = 1; /* symbolic or unknown */
      count *= (size_t)dims[k];
    }
    size = element_size(type);
    if (!size) {
      fprintf(stderr, "ort_run: input %s: element type %d is not supported\n", input_names[i], type);
      return 1;
    }
    buffers[i] = calloc(count ? count : 1, size);
    if (!buffers[i]) {
      fprintf(stderr, "ort_run: out of memory\n");
      return 1;
    }
    if (type == ELEM_FLOAT) {
      float *data = buffers[i];
      for (k = 0; k < count; ++k) {
        seed = seed * 1664525u + 1013904223u; /* LCG: the same data every run */
        data[k] = (float)(seed >> 8) * (2.0f / 16777216.0f) - 1.0f;
      }
    }
    check(ort->CreateTensorWithDataAsOrtValue(memory, buffers[i], count * size, dims, rank, type, &inputs[i]),
          "CreateTensorWithDataAsOrtValue");
    free(dims);
    ort->ReleaseTypeInfo(type_info); /* tensor_info belongs to it */
  }
  for (i = 0; i < num_outputs; ++i)
    check(ort->SessionGetOutputName(session, i, allocator, &output_names[i]), "SessionGetOutputName");

  if (timed) {
    times = calloc((size_t)runs + 1, sizeof *times);
    if (!times) return 1;
  }
  for (r = -(timed ? warmup : 0); r < runs; ++r) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    check(ort->Run(session, NULL, (const char *const *)input_names, (const OrtValue *const *)inputs, num_inputs,
                   (const char *const *)output_names, num_outputs, outputs),
          "Run");
    if (!timed && r == runs - 1 && getenv("ORT_RUN_OUT")) write_output(outputs[0], getenv("ORT_RUN_OUT"));
    for (i = 0; i < num_outputs; ++i) {
      ort->ReleaseValue(outputs[i]);
      outputs[i] = NULL;
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (timed && r >= 0) times[r] = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-6;
  }
  if (timed && runs > 0) {
    long a, b;
    for (a = 1; a < runs; ++a) /* insertion sort: a few hundred runs at most */
      for (b = a; b > 0 && times[b] < times[b - 1]; --b) {
        double t = times[b];
        times[b] = times[b - 1], times[b - 1] = t;
      }
    printf("{\"median_ms\":%.4f,\"min_ms\":%.4f,\"runs\":%ld}\n", times[runs / 2], times[0], runs);
  }
  free(times);

  for (i = 0; i < num_inputs; ++i) {
    ort->ReleaseValue(inputs[i]);
    free(buffers[i]);
    check(ort->AllocatorFree(allocator, input_names[i]), "AllocatorFree");
  }
  for (i = 0; i < num_outputs; ++i) check(ort->AllocatorFree(allocator, output_names[i]), "AllocatorFree");
  free(input_names), free(inputs), free(buffers), free(output_names), free(outputs);
  ort->ReleaseMemoryInfo(memory);
  ort->ReleaseSession(session);
  ort->ReleaseSessionOptions(options);
  ort->ReleaseEnv(env);
  return 0;
}
