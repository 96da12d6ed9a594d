#ifndef EMBER_AUTOGRAD_AUTOGRAD_H_
#define EMBER_AUTOGRAD_AUTOGRAD_H_

// The whole differentiable API: the engine and every differentiable function.

#include "autograd/autocast.h"     // IWYU pragma: export
#include "autograd/elementwise.h"  // IWYU pragma: export
#include "autograd/engine.h"       // IWYU pragma: export
#include "autograd/functional.h"   // IWYU pragma: export
#include "autograd/reduce.h"       // IWYU pragma: export
#include "autograd/views.h"        // IWYU pragma: export

#endif  // EMBER_AUTOGRAD_AUTOGRAD_H_
