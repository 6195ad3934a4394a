#ifndef CSCHEDULING_SHIM_H
#define CSCHEDULING_SHIM_H
#if defined(__linux__)
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <pthread.h>
#include <sched.h>
/// Puts the calling thread under the kernel's batch policy (SCHED_BATCH, same priority, same share of the CPU): when
/// it wakes it does not preempt the thread running on its core, it waits for that thread's time slice to end or for
/// it to block. Answers 0, or the error number.
static inline int poi_schedule_calling_thread_as_batch(void) {
    struct sched_param parameters = {0};
    return sched_setscheduler(0, SCHED_BATCH, &parameters) == 0 ? 0 : errno;
}
/// Puts the calling thread under the kernel's idle policy (SCHED_IDLE): it runs on what the other threads leave, and
/// any of them waking on its core preempts it at once — a batch thread too (`poi_schedule_calling_thread_as_batch`),
/// which would otherwise wait for a nice-19 thread's time slice to end. Answers 0, or the error number.
static inline int poi_schedule_calling_thread_as_idle(void) {
    struct sched_param parameters = {0};
    return sched_setscheduler(0, SCHED_IDLE, &parameters) == 0 ? 0 : errno;
}
/// Gives the calling thread the name the kernel shows (`/proc/PID/task/TID/comm`, top -H, perf): at most 15 bytes.
/// Answers 0, or the error number.
static inline int poi_name_calling_thread(const char *name) { return pthread_setname_np(pthread_self(), name); }
#else
static inline int poi_schedule_calling_thread_as_batch(void) { return 0; }
static inline int poi_schedule_calling_thread_as_idle(void) { return 0; }
static inline int poi_name_calling_thread(const char *name) { (void)name; return 0; }
#endif
#endif
