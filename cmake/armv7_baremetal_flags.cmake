# The C flags of tinyrt's ARMv7-A bare-metal build with arm-none-eabi-gcc and
# picolibc: NEON + VFPv4, the hard-float ABI (the generated code's), Thumb-2,
# -Os. Shared by the firmware example (examples/firmware/baremetal) and the
# runtime's size test (tests/runtime/check_size.cmake), so the test measures
# what the firmware links.
set(TINYRT_ARMV7_BAREMETAL_ARCH_FLAGS -march=armv7-a -mfpu=neon-vfpv4 -mfloat-abi=hard -mthumb
    --specs=picolibc.specs)
set(TINYRT_ARMV7_BAREMETAL_C_FLAGS ${TINYRT_ARMV7_BAREMETAL_ARCH_FLAGS} -Os -std=gnu99 -ffunction-sections
    -fdata-sections -Wall -Wextra)
