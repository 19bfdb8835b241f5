/* startup.S — reset and exception vectors of the bare-metal firmware
 * (ARMv7-A with NEON: Cortex-A7/A15; qemu-system-arm -M virt -cpu cortex-a15).
 *
 * The vector table sits at the start of flash (address 0, where VBAR points
 * after reset) and is also the ELF entry point. The reset handler runs in
 * ARM state, in SVC mode, with the MMU and caches off:
 *   1. mask interrupts, set the SVC stack (top of .stack in RAM), VBAR;
 *   2. give PL0/PL1 access to the FPU and NEON (CPACR cp10/cp11, ASEDIS and
 *      D32DIS clear) and turn the FPU on (FPEXC.EN): nothing before this
 *      point may touch a VFP/NEON register, and compiled C code may;
 *   3. copy .data from its load address in flash to RAM, zero .bss (this
 *      includes the model's arena, a static array);
 *   4. board_init() (board.c): flat page table, MMU and caches on, so that
 *      RAM is Normal memory (unaligned and NEON accesses allowed, fast);
 *   5. main(), then _exit(status): picolibc's semihosting exit, which makes
 *      qemu exit with main's status.
 * Any other exception prints its name through semihosting and exits with a
 * failure status, so a crash fails the test instead of hanging it. */
        .syntax unified
        .arch armv7-a
        .fpu neon-vfpv4
        .arm

/* Semihosting (ARM state): r0 = operation, r1 = argument. */
#define SYS_WRITE0 0x04
#define SYS_EXIT 0x18
#define ADP_Stopped_RunTimeErrorUnknown 0x20023

        .section .vectors, "ax", %progbits
        .global _vectors
        .type _vectors, %function
_vectors:
        b       reset_handler
        b       undef_handler
        b       svc_handler
        b       pabort_handler
        b       dabort_handler
        b       unused_handler
        b       irq_handler
        b       fiq_handler
        .size _vectors, . - _vectors

        .text
        .type reset_handler, %function
reset_handler:
        cpsid   aif, #0x13              @ SVC mode, IRQ/FIQ/async aborts masked
        ldr     sp, =__stack_top
        ldr     r0, =_vectors
        mcr     p15, 0, r0, c12, c0, 0  @ VBAR

        /* FPU and NEON. */
        mrc     p15, 0, r0, c1, c0, 2   @ CPACR
        orr     r0, r0, #(0xf << 20)    @ cp10, cp11: full access
        bic     r0, r0, #(3 << 30)      @ ASEDIS, D32DIS: NEON and d16-d31 on
        mcr     p15, 0, r0, c1, c0, 2
        isb
        mov     r0, #(1 << 30)          @ FPEXC.EN
        vmsr    fpexc, r0
        mov     r0, #0                  @ FPSCR: round to nearest, IEEE mode
        vmsr    fpscr, r0

        /* .data: flash -> RAM (word-aligned by the linker script). */
        ldr     r0, =__data_start
        ldr     r1, =__data_end
        ldr     r2, =__data_load
        cmp     r0, r2
        beq     2f
1:      cmp     r0, r1
        ldrlo   r3, [r2], #4
        strlo   r3, [r0], #4
        blo     1b
2:
        /* .bss (word-aligned by the linker script). */
        ldr     r0, =__bss_start
        ldr     r1, =__bss_end
        mov     r2, #0
3:      cmp     r0, r1
        strlo   r2, [r0], #4
        blo     3b

        bl      board_init
        bl      main
        bl      _exit                   @ does not return
        b       .
        .size reset_handler, . - reset_handler

/* Exceptions the firmware never expects: say which, exit with failure. */
        .macro  fatal name, text
        .type \name, %function
\name:
        adr     r1, 9f
        b       fatal
9:      .asciz  "\text"
        .balign 4
        .endm
        fatal   undef_handler, "firmware: undefined instruction exception\n"
        fatal   svc_handler, "firmware: SVC exception\n"
        fatal   pabort_handler, "firmware: prefetch abort exception\n"
        fatal   dabort_handler, "firmware: data abort exception\n"
        fatal   unused_handler, "firmware: unexpected exception (hyp trap)\n"
        fatal   irq_handler, "firmware: unexpected IRQ\n"
        fatal   fiq_handler, "firmware: unexpected FIQ\n"

fatal:
        mov     r0, #SYS_WRITE0
        svc     0x123456
        mov     r0, #SYS_EXIT
        ldr     r1, =ADP_Stopped_RunTimeErrorUnknown
        svc     0x123456
        b       .
