/* tinyrt_port_threads.h (bare metal) — no threads: a pool accepts
 * threads == 1 only and every step runs on the calling thread. A port for an
 * RTOS would define TINYRT_PORT_THREADS 1 and the primitives listed in
 * tinyrt_port.h (see ports/linux/tinyrt_port_threads.h). */
#ifndef TINYRT_PORT_THREADS_H_
#define TINYRT_PORT_THREADS_H_

#define TINYRT_PORT_THREADS 0

#endif /* TINYRT_PORT_THREADS_H_ */
