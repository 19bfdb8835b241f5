/* fuzz_runtime_c.c — tinyrt_session_run as seen from C: the status a custom
 * op returned comes back as is, and a C enum holds any int; a C++ enum may
 * not (UBSan's -fsanitize=enum), so fuzz_runtime_api reads it here. */
#include "tinyrt.h"

int fuzz_session_run(tinyrt_session *s);

int fuzz_session_run(tinyrt_session *s) { return (int)tinyrt_session_run(s); }
