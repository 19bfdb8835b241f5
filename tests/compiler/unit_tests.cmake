# The compiler's unit tests (ctest compiler/unit). Included by
# tests/CMakeLists.txt and, under ASan+UBSan, by tests/fuzz/CMakeLists.txt.
find_package(GTest REQUIRED)
set(unit_dir ${CMAKE_CURRENT_LIST_DIR})
add_executable(compiler_tests ${unit_dir}/test_expr.cpp ${unit_dir}/test_passes.cpp ${unit_dir}/test_errors.cpp ${unit_dir}/test_address_checks.cpp ${unit_dir}/test_address_proof.cpp
               ${unit_dir}/onnx_builder.cpp)
target_link_libraries(compiler_tests PRIVATE tinyrt_compiler GTest::gtest_main)
set_target_properties(compiler_tests PROPERTIES CXX_STANDARD 17)
