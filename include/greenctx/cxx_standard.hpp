// SPDX-License-Identifier: Apache-2.0
// The C++ standard greenctx's C++ headers are written in: C++20 (std::span, designated
// initializers, defaulted comparisons). Every C++ header includes this first, so that a translation
// unit compiled as C++17 (nvcc's default for .cu files, PyTorch's C++ extensions) stops here with
// one message saying what to ask for, instead of a page of errors from the headers below.
// The compat layer, greenctx/cuda_compat.h, needs no more than C99 or C++11 and does not include
// this.
#pragma once

// Not formatted: the message stays one line, as compilers print it.
// clang-format off
#if !defined(_MSVC_LANG) && __cplusplus < 202002L
#error "greenctx's C++ headers need C++20, and this file is compiled as an older standard (nvcc compiles .cu files as C++17 by default). Ask for C++20: with CMake, link greenctx::greenctx and leave CUDA_STANDARD unset or 20 (greenctx then passes -std=c++20 to nvcc), or target_compile_features(<target> PRIVATE cxx_std_20); by hand, g++/clang++/nvcc -std=c++20; in a PyTorch extension, extra_compile_args={'cxx': ['-std=c++20'], 'nvcc': ['-std=c++20']}. Only C is needed for greenctx/cuda_compat.h, the CUDA 13.1 runtime API."
// g++ and clang++ go on after #error; a missing header stops them, so this message is all one sees.
#include <greenctx/stopped-here-compile-as-cxx20>
#elif defined(_MSVC_LANG) && _MSVC_LANG < 202002L
#error "greenctx's C++ headers need C++20: compile with /std:c++20."
#endif
// clang-format on
