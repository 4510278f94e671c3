// Catch2 entry point for the libtle_rt tests that run without a GPU.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
