// The measurement layer's bindings (python/measure.cpp), added to the module by bindings.cpp.
#pragma once

#include <nanobind/nanobind.h>

void bind_measure(nanobind::module_ &m);
