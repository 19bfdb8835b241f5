# The compiler's unit tests (ctest compiler/unit). Included by
# tests/CMakeLists.txt and, under ASan+UBSan, by tests/fuzz/CMakeLists.txt.
# A source file's tests are found from its path: compiler_host/LAYER/FILE.cpp
# is tested by tests/compiler/LAYER/test_FILE.cpp (every pass of the
# pipeline has one: passes/test_pipeline.cpp checks).
find_package(GTest REQUIRED)
set(unit_dir ${CMAKE_CURRENT_LIST_DIR})
file(GLOB unit_sources CONFIGURE_DEPENDS ${unit_dir}/*/test_*.cpp)
add_executable(compiler_tests ${unit_sources} ${unit_dir}/onnx_builder.cpp)
target_link_libraries(compiler_tests PRIVATE tinyrt_compiler GTest::gtest_main)
target_include_directories(compiler_tests PRIVATE ${unit_dir})
target_compile_definitions(compiler_tests PRIVATE TINYRT_UNIT_TEST_DIR="${unit_dir}")
set_target_properties(compiler_tests PROPERTIES CXX_STANDARD 17)
