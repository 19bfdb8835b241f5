/* The link check of a compiler layer (compiler_host/CMakeLists.txt): a
   shared object of the layer's objects and the layers it may use, linked
   with --no-undefined. This file only gives it a source. */
int tinyrt_linkcheck_anchor;
