/* GPU targets' binary compatibility, for the runtime's choice of a library's cubin or PTX
 * (trt_runtime.c: trt_pick_target).
 *
 * Generated from triton_aot/core/targets.py by tools/gen_concepts.py: do not edit.
 * //tools:concepts_current_test fails when this file is stale, and checks that these functions
 * answer as targets.cubin_runs_on and targets.ptx_runs_on do for every pair of SMs. */
#ifndef TRT_TARGETS_H_
#define TRT_TARGETS_H_

/* Triton compiles this SM and newer arch-specific (sm_90a): those cubins and that PTX run on
 * exactly their own SM. */
#define TRT_ARCH_SPECIFIC_FROM 90

/* Whether an sm_`arch` cubin runs on an sm_`sm` GPU: its own SM, or a later minor of the same
 * major for portable cubins (sm_80 on sm_86 and sm_89). */
static inline int trt_cubin_runs_on(int arch, int sm) {
  return arch == sm || (arch < TRT_ARCH_SPECIFIC_FROM && arch / 10 == sm / 10 && arch < sm);
}

/* Whether the driver can JIT-compile sm_`arch` PTX for an sm_`sm` GPU: its own SM, or any later
 * one for portable PTX. */
static inline int trt_ptx_runs_on(int arch, int sm) {
  return arch == sm || (arch < TRT_ARCH_SPECIFIC_FROM && arch < sm);
}

#endif /* TRT_TARGETS_H_ */
